package molecule

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
)

// TestJTVAEStepRuns: the steps the bench times are training steps of a
// small JT-VAE over the shipped vocabulary: each has a finite, positive
// loss, and over 20 steps the loss of the fixed batch falls (it would not
// if the update, the gradients or the optimiser's parameters were lost);
// each part of the split is recorded, and the profile holds the forward
// and backward operators of the timed steps.
func TestJTVAEStepRuns(t *testing.T) {
	vocab := shippedVocab(t)
	trace := filepath.Join(t.TempDir(), "trace.json")
	steps, err := JTVAEStep(JTVAEStepOptions{Device: torch.CPU, Vocab: vocab, Hidden: 16, Batch: 40, Steps: 2, Seed: 1,
		Profile: trace})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 {
		t.Fatalf("%d timings, want 2", len(steps))
	}
	for _, s := range steps {
		if s.Tree <= 0 || s.Graph <= 0 || s.Decoder <= 0 || s.Assembly <= 0 || s.Backward <= 0 {
			t.Errorf("a part of the split is not recorded: %+v", s)
		}
	}
	parts, total := MedianSplit(steps)
	if total <= 0 || parts.Backward <= 0 {
		t.Errorf("median split %+v, total %g", parts, total)
	}
	entries, err := torch.ReadProfile(trace)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, e := range entries {
		calls[e.Name] = e.Calls
	}
	// Forward and backward both recorded, for the two timed steps only.
	if calls["aten::embedding_bag"] == 0 || calls["aten::mm"] == 0 || calls["EmbeddingBagBackward0"] == 0 {
		t.Errorf("profile lacks the step's operators: %d names", len(entries))
	}
	checkStepsTrain(t, vocab)
	if _, err := JTVAEStep(JTVAEStepOptions{Device: torch.CPU, Vocab: vocab, Steps: 0}); err == nil {
		t.Error("zero steps accepted")
	}
	if _, err := JTVAEStep(JTVAEStepOptions{Device: torch.CPU, Vocab: Vocab{"C"}, Steps: 1}); err == nil {
		t.Error("a vocabulary without the molecules' clusters accepted")
	}
}

// checkStepsTrain runs 20 bench steps on one batch: every loss is finite
// and positive, and the mean of the last five is at least 1% below that of
// the first five. Each step draws its latent sample, so a step's loss
// varies by about 0.3% without any update; Adam at 1e-3 lowers it by about
// 0.2% a step.
func checkStepsTrain(t *testing.T, vocab Vocab) {
	t.Helper()
	steps, err := JTVAEStep(JTVAEStepOptions{Device: torch.CPU, Vocab: vocab, Hidden: 16, Batch: 40, Steps: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	mean := func(s []jtvae.StepTimes) float64 {
		sum := 0.0
		for _, st := range s {
			sum += st.Loss
		}
		return sum / float64(len(s))
	}
	for i, s := range steps {
		if !(s.Loss > 0) || math.IsInf(s.Loss, 0) {
			t.Errorf("step %d: loss %v, want finite and positive", i, s.Loss)
		}
	}
	first, last := mean(steps[:5]), mean(steps[len(steps)-5:])
	t.Logf("mean loss of the first 5 steps %.4g, of the last 5 %.4g", first, last)
	if !(last < 0.99*first) {
		t.Errorf("mean loss of the fixed batch %.4g over the last 5 of %d steps, %.4g over the first 5: the steps do not train",
			last, len(steps), first)
	}
}

func TestMedianSplit(t *testing.T) {
	steps := []jtvae.StepTimes{{Tree: 1, Backward: 5}, {Tree: 3, Backward: 1}, {Tree: 2, Backward: 3}}
	parts, total := MedianSplit(steps)
	if parts.Tree != 2 || parts.Backward != 3 || total != 5 {
		t.Errorf("median split %+v total %g, want tree 2, backward 3, total 5", parts, total)
	}
}

// TestBenchSmilesDistinct: the bench's batches up to 128 hold distinct
// molecules (a batch of repeats is merged by the step's schedule), the
// first 32 those of bench32.npz that --synthetic-data uses.
func TestBenchSmilesDistinct(t *testing.T) {
	all := benchSmiles(128)
	seen := map[string]bool{}
	for i, s := range all {
		if seen[s] {
			t.Errorf("molecule %d (%s) repeats an earlier one", i, s)
		}
		seen[s] = true
	}
	if !slices.Equal(all[:32], SampleSmiles()) {
		t.Error("the first 32 are not SampleSmiles")
	}
}

// TestJTVAEStepSmiles: with its own molecules the bench trains on them (a
// batch larger than their count repeats them), and a molecule that cannot
// be featurised, or none at all, is refused with an error naming it.
func TestJTVAEStepSmiles(t *testing.T) {
	vocab := shippedVocab(t)
	own := SampleSmiles()[5:8]
	batch, err := jtvaeBatch(vocab, 5, own)
	if err != nil {
		t.Fatal(err)
	}
	want, err := jtvaeBatch(vocab, 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, ex := range batch {
		if !slices.Equal(ex.Tree.Labels, want[5+i%3].Tree.Labels) || len(ex.Graph.Atoms) != len(want[5+i%3].Graph.Atoms) {
			t.Errorf("batch molecule %d is not molecule %d of its own", i, i%3)
		}
	}
	if _, err := JTVAEStep(JTVAEStepOptions{Device: torch.CPU, Vocab: vocab, Hidden: 16, Batch: 5, Smiles: own, Steps: 1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = JTVAEStep(JTVAEStepOptions{Device: torch.CPU, Vocab: vocab, Hidden: 16, Batch: 2, Smiles: []string{own[0], "C1CC"}, Steps: 1})
	if err == nil || !strings.Contains(err.Error(), `molecule 2 "C1CC"`) {
		t.Errorf("an unparsable molecule: %v, want an error naming molecule 2", err)
	}
	if _, err := JTVAEStep(JTVAEStepOptions{Device: torch.CPU, Vocab: vocab, Hidden: 16, Smiles: []string{}, Steps: 1}); err == nil {
		t.Error("an empty list of molecules accepted")
	}
}

// shippedVocab reads the shipped vocabulary, skipping the test without a
// data directory.
func shippedVocab(t *testing.T) Vocab {
	t.Helper()
	path, err := ShippedVocabPath("")
	if err != nil {
		t.Skipf("no data directory: %v", err)
	}
	vocab, err := ReadVocab(path)
	if err != nil {
		t.Skipf("no shipped vocabulary: %v", err)
	}
	return vocab
}
