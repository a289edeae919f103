package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/urfave/cli/v2"
)

// trainCLI runs the train verb with args.
func trainCLI(args ...string) error {
	app := &cli.App{Name: "tlbo-native", Commands: []*cli.Command{trainCommand()}}
	return app.Run(append([]string{"tlbo-native", "train", "--task", "expression"}, args...))
}

// TestTrainGuardsOutput: train refuses to overwrite a checkpoint without
// --resume or --force, and checks the output directory before reading any
// data (the data directories here are empty, so reaching the data set would
// fail with another error).
func TestTrainGuardsOutput(t *testing.T) {
	noData := t.TempDir()
	dir := t.TempDir()
	out := filepath.Join(dir, "vae.pt")
	expectErr := func(what string, err error, words ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, w := range words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", what, err, w)
			}
		}
	}
	base := []string{"--data-dir", noData, "--epochs", "1"}

	// An existing checkpoint (any of its files) is refused.
	for _, f := range []string{"vae.pt", "vae.json", "vae.last.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		expectErr("existing "+f, trainCLI(append(base, "--out", out)...), "--out "+out, f, "--resume", "--force")
		os.Remove(filepath.Join(dir, f))
	}
	// --force removes the old files, then the run goes on to the data set.
	for _, f := range []string{"vae.pt", "vae.json", "vae.adam.pt", "vae.last.pt", "vae.last.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expectErr("--force", trainCLI(append(base, "--out", out, "--force")...), noData)
	if left, _ := filepath.Glob(filepath.Join(dir, "vae*")); len(left) > 0 {
		t.Errorf("--force left %v", left)
	}
	expectErr("--resume without a checkpoint", trainCLI(append(base, "--out", out, "--resume")...), "--resume", "no checkpoint")
	expectErr("--resume and --force", trainCLI(append(base, "--out", out, "--resume", "--force")...), "--resume", "--force")

	// A missing or unwritable directory is named before the data set is read.
	missing := filepath.Join(dir, "nonesuch", "vae.pt")
	expectErr("missing directory", trainCLI(append(base, "--out", missing)...), filepath.Join(dir, "nonesuch"))
	expectErr("a directory as --out", trainCLI(append(base, "--out", dir)...), "is a directory")
	// /proc takes no new file, even from root.
	expectErr("unwritable directory", trainCLI(append(base, "--out", "/proc/self/vae.pt")...), "/proc/self", "not writable")
	if os.Geteuid() != 0 {
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(ro, 0o755)
		expectErr("read-only directory", trainCLI(append(base, "--out", filepath.Join(ro, "vae.pt"))...), ro, "not writable")
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("the checks left files in %s: %v", dir, entries)
	}
}

// TestTrainInit fine-tunes a checkpoint with another ELBO: the new training
// starts from its weights (with a learning rate of 1e-12 its parameters stay
// within 1e-9 of them after an epoch, while a new network's would differ by
// far more),
// its header names the source with its digest, and --init with --resume or
// --latent, or of a missing file, is refused.
func TestTrainInit(t *testing.T) {
	data, dir := tinyExpressionData(t), t.TempDir()
	base, tuned := filepath.Join(dir, "base.pt"), filepath.Join(dir, "tuned.pt")
	common := []string{"--task", "expression", "--data-dir", data, "--epochs", "1", "--batch-size", "64", "--prior-samples", "0",
		"--decode-attempts", "1"}
	if err := runCLI(append(append([]string{"train"}, common...), "--out", base)...); err != nil {
		t.Fatal(err)
	}
	if err := runCLI(append(append([]string{"train"}, common...), "--elbo", "t", "--lr", "1e-12", "--init", base, "--out", tuned)...); err != nil {
		t.Fatal(err)
	}
	h, err := models.ReadHeader(tuned, "")
	if err != nil {
		t.Fatal(err)
	}
	digest, err := task.FileDigest(base)
	if err != nil {
		t.Fatal(err)
	}
	if o := h.Training.Init; o == nil || o.File != base || o.SHA256 != digest || o.ELBO != "lbo" || o.Step == 0 {
		t.Errorf("header's init %+v, want %s with digest %s, ELBO lbo and its steps", o, base, digest)
	}
	if h.Training.ELBO.Name != "t" {
		t.Errorf("fine-tuned with ELBO %q, want t", h.Training.ELBO.Name)
	}
	a, _, err := models.LoadState(base)
	if err != nil {
		t.Fatal(err)
	}
	defer torch.CloseNamed(a)
	b, _, err := models.LoadState(tuned)
	if err != nil {
		t.Fatal(err)
	}
	defer torch.CloseNamed(b)
	if len(a) != len(b) {
		t.Fatalf("%d tensors against %d", len(b), len(a))
	}
	for i := range a {
		x, _ := a[i].Tensor.Float64s()
		y, _ := b[i].Tensor.Float64s()
		if a[i].Name != b[i].Name || len(x) != len(y) {
			t.Fatalf("tensor %d: %s (%d) against %s (%d)", i, b[i].Name, len(y), a[i].Name, len(x))
		}
		if strings.Contains(a[i].Name, "running_") || strings.HasSuffix(a[i].Name, "num_batches_tracked") {
			continue // batch-norm statistics follow the batches, not the learning rate
		}
		for j := range x {
			if d := math.Abs(x[j] - y[j]); d > 1e-9 {
				t.Fatalf("%s[%d]: %v after fine-tuning at lr 1e-12, %v before", a[i].Name, j, y[j], x[j])
			}
		}
	}
	for what, args := range map[string][]string{
		"--resume": {"--init", base, "--out", tuned, "--resume"},
		"--latent": {"--init", base, "--out", filepath.Join(dir, "l.pt"), "--latent", "3"},
		"missing":  {"--init", filepath.Join(dir, "nonesuch.pt"), "--out", filepath.Join(dir, "m.pt")},
	} {
		err := runCLI(append(append([]string{"train"}, common...), args...)...)
		if err == nil || !strings.Contains(err.Error(), "--init") {
			t.Errorf("%s: %v, want an error naming --init", what, err)
		}
	}
}

// TestTrainFreshOptimizer: a saved training whose optimiser state is gone
// (a checkpoint committed without it) is refused by --resume with a hint,
// continues with --resume --fresh-optimizer from its step, and records the
// step in its header; --fresh-optimizer alone is refused.
func TestTrainFreshOptimizer(t *testing.T) {
	data, dir := tinyExpressionData(t), t.TempDir()
	out := filepath.Join(dir, "vae.pt")
	common := []string{"train", "--task", "expression", "--data-dir", data, "--batch-size", "64", "--prior-samples", "0",
		"--decode-attempts", "1", "--out", out}
	if err := runCLI(append(common, "--epochs", "1")...); err != nil {
		t.Fatal(err)
	}
	last := task.LastPath(out)
	before, err := models.ReadHeader(last, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(models.AdamPath(last)); err != nil {
		t.Fatal(err)
	}
	err = runCLI(append(common, "--epochs", "2", "--resume")...)
	if err == nil || !strings.Contains(err.Error(), models.AdamPath(last)) || !strings.Contains(err.Error(), "--fresh-optimizer") {
		t.Fatalf("--resume without the optimiser state: %v, want an error naming %s and --fresh-optimizer", err, models.AdamPath(last))
	}
	err = runCLI(append(common, "--epochs", "2", "--fresh-optimizer", "--force")...)
	if err == nil || !strings.Contains(err.Error(), "--fresh-optimizer without --resume") {
		t.Errorf("--fresh-optimizer without --resume: %v", err)
	}
	if err := runCLI(append(common, "--epochs", "2", "--resume", "--fresh-optimizer")...); err != nil {
		t.Fatal(err)
	}
	h, err := models.ReadHeader(last, "")
	if err != nil {
		t.Fatal(err)
	}
	if h.Training.Epoch != 2 || h.Training.Step != 2*before.Training.Step {
		t.Errorf("resumed training ended at epoch %d step %d, want 2 and %d", h.Training.Epoch, h.Training.Step, 2*before.Training.Step)
	}
	if got := h.Training.FreshOptimizer; len(got) != 1 || got[0] != before.Training.Step {
		t.Errorf("header records a fresh optimiser at %v, want [%d]", got, before.Training.Step)
	}
	if _, err := os.Stat(models.AdamPath(last)); err != nil {
		t.Errorf("the resumed training saved no optimiser state: %v", err)
	}
}

// TestTrainResumeKeepsSettings: --resume continues with the settings the
// checkpoint records. Flags left out take the checkpoint's values (the data
// split and weights too, which the task's defaults would change), the same
// values are accepted, and a flag that asks for another value is refused,
// naming it with both values, before any training.
func TestTrainResumeKeepsSettings(t *testing.T) {
	data, dir := tinyExpressionData(t), t.TempDir()
	out := filepath.Join(dir, "vae.pt")
	common := []string{"train", "--task", "expression", "--data-dir", data, "--prior-samples", "0", "--decode-attempts", "1", "--out", out}
	first := []string{"--elbo", "t", "--k", "inf", "--val-fraction", "0.1", "--batch-size", "64", "--lr", "5e-4", "--seed", "2"}
	if err := runCLI(append(append(common, "--epochs", "1"), first...)...); err != nil {
		t.Fatal(err)
	}
	last := task.LastPath(out)
	before, err := models.ReadHeader(last, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags []string
		words []string
	}{
		{[]string{"--val-fraction", "0.2"}, []string{"--val-fraction 0.2 (the training's: 0.1)"}},
		{[]string{"--k", "1e-3", "--lr", "1e-3"}, []string{"--k 0.001 (the training's: inf)", "--lr 0.001 (the training's: 0.0005)"}},
		{[]string{"--elbo", "lbo"}, []string{"--elbo lbo (the training's: t)"}},
		{[]string{"--lr-decay-every", "100", "--lr-decay", "0.5"}, []string{"--lr-decay-every 100 (the training's: 0)"}},
	} {
		err := runCLI(append(append(common, "--epochs", "2", "--resume"), c.flags...)...)
		for _, w := range append(c.words, last, "--init") {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("resume with %v: %v, want an error saying %q", c.flags, err, w)
			}
		}
	}
	if h, err := models.ReadHeader(last, ""); err != nil || h.Training.Step != before.Training.Step {
		t.Fatalf("a refused resume trained: step %d, was %d (%v)", h.Training.Step, before.Training.Step, err)
	}
	// The same values, then none: both continue the training as it started.
	if err := runCLI(append(append(common, "--epochs", "2", "--resume"), first...)...); err != nil {
		t.Fatal(err)
	}
	if err := runCLI(append(common, "--epochs", "3", "--resume")...); err != nil {
		t.Fatal(err)
	}
	h, err := models.ReadHeader(last, "")
	if err != nil {
		t.Fatal(err)
	}
	st, want := h.Training, models.DataSettings{Seed: 2, K: models.RankK(math.Inf(1)), ValFraction: 0.1, LabelledFraction: 1}
	if st.Epoch != 3 || st.Step != 3*before.Training.Step {
		t.Errorf("resumed training ended at epoch %d step %d, want 3 and %d", st.Epoch, st.Step, 3*before.Training.Step)
	}
	if st.Data == nil || *st.Data != want || st.ELBO.Name != "t" || st.BatchSize != 64 || st.LRInit != 5e-4 || st.Seed != 2 {
		t.Errorf("after resuming without flags: data %+v, ELBO %q, batch %d, starting rate %v, seed %d; want %+v, t, 64, 0.0005, 2",
			st.Data, st.ELBO.Name, st.BatchSize, st.LRInit, st.Seed, want)
	}
	// A checkpoint written before the header kept the data settings and the
	// starting rate resumes with this run's, which it records from then on.
	var raw map[string]any
	b, err := os.ReadFile(models.HeaderPath(last))
	if err == nil {
		err = json.Unmarshal(b, &raw)
	}
	if err != nil {
		t.Fatal(err)
	}
	tr := raw["training"].(map[string]any)
	delete(tr, "data")
	delete(tr, "lr_init")
	if b, err = json.Marshal(raw); err == nil {
		err = os.WriteFile(models.HeaderPath(last), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := runCLI(append(common, "--epochs", "4", "--resume", "--val-fraction", "0.1", "--k", "inf", "--lr", "1")...); err != nil {
		t.Fatal(err)
	}
	if h, err = models.ReadHeader(last, ""); err != nil {
		t.Fatal(err)
	}
	want.Seed = 0 // this run's: --seed left out
	if st := h.Training; st.Epoch != 4 || st.Data == nil || *st.Data != want || st.LRInit != 0 {
		t.Errorf("legacy checkpoint resumed to epoch %d with data %+v, starting rate %v; want 4, %+v and 0 (unknown)", st.Epoch, st.Data, st.LRInit, want)
	}
}

// TestTrainResumeCompletesBest: a training cut off while saving its final
// best-validation checkpoint (FILE.pt and its header gone, or an earlier
// epoch's header left), after saving the latest epoch, is finished by
// --resume: FILE.pt is written again from FILE.last.pt, the same weights.
func TestTrainResumeCompletesBest(t *testing.T) {
	data, dir := tinyExpressionData(t), t.TempDir()
	out := filepath.Join(dir, "vae.pt")
	// No validation split: every epoch is the best so far.
	common := []string{"train", "--task", "expression", "--data-dir", data, "--batch-size", "64", "--prior-samples", "0",
		"--decode-attempts", "1", "--val-fraction", "0", "--epochs", "2", "--out", out}
	if err := runCLI(common...); err != nil {
		t.Fatal(err)
	}
	weights := readFile(t, out)
	epoch1 := filepath.Join(dir, "epoch1.json")
	if err := runCLI("train", "--task", "expression", "--data-dir", data, "--batch-size", "64", "--prior-samples", "0",
		"--decode-attempts", "1", "--val-fraction", "0", "--epochs", "1", "--out", filepath.Join(dir, "e1.pt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(models.HeaderPath(filepath.Join(dir, "e1.pt")), epoch1); err != nil {
		t.Fatal(err)
	}
	for _, cut := range []struct {
		name string
		do   func() error
	}{
		{"FILE.pt and its header gone", func() error {
			if err := os.Remove(out); err != nil {
				return err
			}
			return os.Remove(models.HeaderPath(out))
		}},
		{"an earlier epoch's header", func() error { return os.WriteFile(models.HeaderPath(out), []byte(readFile(t, epoch1)), 0o644) }},
	} {
		if err := cut.do(); err != nil {
			t.Fatal(err)
		}
		if err := runCLI(append(common, "--resume")...); err != nil {
			t.Fatalf("%s: --resume: %v", cut.name, err)
		}
		h, err := models.ReadHeader(out, "")
		if err != nil || h.Training.Epoch != 2 || readFile(t, out) != weights {
			t.Errorf("%s: after --resume %s holds epoch %v (%v), same weights %v; want epoch 2's", cut.name, out, h.Training, err,
				readFile(t, out) == weights)
		}
	}
}
