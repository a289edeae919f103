package expression

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	torchfixture "github.com/tlbo-native/tlbo-native/internal/fixture/torchfixture"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// recorder is a task.Progress that keeps every step's and epoch's losses
// and runs a hook before each step is recorded.
type recorder struct {
	steps  map[string]float64 // "epoch/step" -> total loss
	val    map[int]float64    // epoch -> validation loss
	before func(epoch, i int)
}

func newRecorder() *recorder { return &recorder{steps: map[string]float64{}, val: map[int]float64{}} }

func (r *recorder) Step(epoch, _, i, _ int, l models.Losses) {
	if r.before != nil {
		r.before(epoch, i)
	}
	r.steps[fmt.Sprintf("%d/%d", epoch, i)] = l.Total
}

func (r *recorder) Epoch(rep models.EpochReport, _ int) {
	if rep.Val != nil {
		r.val[rep.Epoch] = rep.Val.Total
	}
}

func (r *recorder) Count(string, int, int) {}

// copyLast copies the latest-epoch checkpoint files of out into dir, under
// the same names.
func copyLast(t *testing.T, out, dir string) {
	t.Helper()
	last := task.LastPath(out)
	for _, f := range []string{last, models.HeaderPath(last), models.AdamPath(last)} {
		src, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(dir, filepath.Base(f)))
		if err == nil {
			_, err = io.Copy(dst, src)
			err = dst.Close()
		}
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestResumeEqualsUninterrupted: on one thread, a training stopped within an
// epoch (a --checkpoint-every save) or at an epoch's end and resumed gives
// the same step losses, validation losses (drawn with the rank weights) and
// final weights, bit for bit, as the uninterrupted training: the sampler's
// state is in the checkpoint and libtorch is seeded from the step. The
// resumed trainings are asked for other settings without giving them
// (TrainRequest.Given nil), and keep the checkpoint's. The soft
// triplet with a plateau schedule of patience 0 exercises the metric loss,
// the validation draw and the schedule's state.
func TestResumeEqualsUninterrupted(t *testing.T) {
	threads := torch.NumThreads()
	if err := torch.SetNumThreads(1); err != nil {
		t.Fatal(err)
	}
	defer torch.SetNumThreads(threads)
	tk, err := task.Lookup(TaskName)
	if err != nil {
		t.Fatal(err)
	}
	data := tinyDataDir(t, 300)
	elbo, err := models.ParseELBO("t")
	if err != nil {
		t.Fatal(err)
	}
	elbo.MetricWeight = 10
	request := func(out string, resume bool) task.TrainRequest {
		if resume {
			// Settings left to the defaults (Given nil) are the checkpoint's:
			// none of these may reach the resumed training.
			return task.TrainRequest{Opts: models.TrainOptions{ELBO: models.ELBO{Name: "lbo"}, Beta: models.FixedBeta(0.5), LR: 0.3,
				BatchSize: 7, Device: torch.CPU, Seed: 11}, K: 0.5, Epochs: 2, ValFraction: 0.3, LabelledFraction: 0.5, Out: out,
				Resume: true, CheckpointEvery: 1}
		}
		return task.TrainRequest{Opts: models.TrainOptions{ELBO: elbo, Beta: models.FixedBeta(0.04), LR: 1e-3, BatchSize: 32,
			Device: torch.CPU, Seed: 4}, K: 1e-3, Epochs: 2, ValFraction: 0.05, LabelledFraction: 1, Out: out,
			Plateau: models.TorchPlateau(0.2, 0, 1e-4), CheckpointEvery: 1}
	}
	train := func(req task.TrainRequest, rec *recorder) {
		t.Helper()
		env := testEnv(t, data)
		if req.Resume {
			env.Seed = 8 // the data's seed is the checkpoint's too
		}
		env.Progress = rec
		if err := tk.Train(env, req); err != nil {
			t.Fatal(err)
		}
	}

	// Uninterrupted (3 steps an epoch), with copies of the latest checkpoint
	// taken after step 2 of epoch 1 (within the epoch) and after epoch 1 (at
	// its end).
	straight := filepath.Join(t.TempDir(), "vae.pt")
	within, atEnd := t.TempDir(), t.TempDir()
	full := newRecorder()
	full.before = func(epoch, i int) {
		switch {
		case epoch == 1 && i == 3: // the step-2 save is the latest
			copyLast(t, straight, within)
		case epoch == 2 && i == 1: // the end-of-epoch save is the latest
			copyLast(t, straight, atEnd)
		}
	}
	train(request(straight, false), full)
	want := torchfixture.Float64s(t, loadAll(t, task.LastPath(straight)))

	for name, dir := range map[string]string{"within epoch 1": within, "after epoch 1": atEnd} {
		rec := newRecorder()
		out := filepath.Join(dir, "vae.pt")
		train(request(out, true), rec)
		if len(rec.steps) == 0 {
			t.Fatalf("%s: the resumed training took no step", name)
		}
		for k, v := range rec.steps {
			if w, ok := full.steps[k]; !ok || v != w {
				t.Errorf("%s: step %s loss %v, uninterrupted %v", name, k, v, w)
			}
		}
		for e, v := range rec.val {
			if v != full.val[e] {
				t.Errorf("%s: epoch %d validation loss %v, uninterrupted %v", name, e, v, full.val[e])
			}
		}
		// The resumed run's checkpoints add its cost to what the copied
		// checkpoint recorded of the first run.
		base, now := readCost(t, task.LastPath(straight)), readCost(t, task.LastPath(out))
		if base.Runs != 1 || now.Runs != 2 || now.Partial || !(now.WallSeconds > 0) || !(now.CPUSeconds > 0) {
			t.Errorf("%s: cost %+v after resuming; want 2 runs with their time (the first run's at its end: %+v)", name, now, base)
		}
		got := torchfixture.Float64s(t, loadAll(t, task.LastPath(out)))
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: final weight %d is %v, uninterrupted %v", name, i, got[i], want[i])
				break
			}
		}
	}
	if len(full.steps) != 6 || len(full.val) != 2 {
		t.Errorf("uninterrupted training: steps %v, validation losses %v; want 2 epochs of 3 steps", full.steps, full.val)
	}
}

// loadAll returns the tensors of a checkpoint flattened into one float64
// tensor, in the file's order.
func loadAll(t *testing.T, path string) *torch.Tensor {
	t.Helper()
	sd, err := torch.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer torch.CloseNamed(sd)
	var flat []*torch.Tensor
	for _, n := range sd {
		flat = append(flat, n.Tensor.ToDType(torch.Float64).Reshape(-1))
	}
	return torch.Cat(flat, 0)
}

// readCost returns the training cost a checkpoint's header records.
func readCost(t *testing.T, path string) models.Cost {
	t.Helper()
	h, err := models.ReadHeader(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if h.Training == nil || h.Training.Cost == nil {
		t.Fatalf("%s records no training cost", path)
	}
	return *h.Training.Cost
}
