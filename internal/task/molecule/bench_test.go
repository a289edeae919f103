package molecule

import (
	"path/filepath"
	"testing"

	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
)

// TestJTVAEStepRuns times two steps of a small JT-VAE over the shipped
// vocabulary and checks the split adds up.
func TestJTVAEStepRuns(t *testing.T) {
	path, err := ShippedVocabPath("")
	if err != nil {
		t.Skipf("no data directory: %v", err)
	}
	vocab, err := ReadVocab(path)
	if err != nil {
		t.Skipf("no shipped vocabulary: %v", err)
	}
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
			t.Errorf("a part of the step took no time: %+v", s)
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
	if _, err := JTVAEStep(JTVAEStepOptions{Device: torch.CPU, Vocab: vocab, Steps: 0}); err == nil {
		t.Error("zero steps accepted")
	}
	if _, err := JTVAEStep(JTVAEStepOptions{Device: torch.CPU, Vocab: Vocab{"C"}, Steps: 1}); err == nil {
		t.Error("a vocabulary without the molecules' clusters accepted")
	}
}

func TestMedianSplit(t *testing.T) {
	steps := []jtvae.StepTimes{{Tree: 1, Backward: 5}, {Tree: 3, Backward: 1}, {Tree: 2, Backward: 3}}
	parts, total := MedianSplit(steps)
	if parts.Tree != 2 || parts.Backward != 3 || total != 5 {
		t.Errorf("median split %+v total %g, want tree 2, backward 3, total 5", parts, total)
	}
}
