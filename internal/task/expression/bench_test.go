package expression

import (
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

func TestGVAEStepRuns(t *testing.T) {
	for _, elbo := range []string{"lbo", "t"} {
		times, err := GVAEStep(GVAEStepOptions{Device: torch.CPU, ELBO: elbo, Steps: 2, Seed: 1, Batch: 64})
		if err != nil {
			t.Fatal(err)
		}
		if len(times) != 2 {
			t.Fatalf("%d timings, want 2", len(times))
		}
	}
	if _, err := GVAEStep(GVAEStepOptions{Device: torch.CPU, Steps: 0}); err == nil {
		t.Fatal("zero steps accepted")
	}
	if _, err := GVAEStep(GVAEStepOptions{Device: torch.CPU, Steps: 1, ELBO: "nonesuch"}); err == nil {
		t.Fatal("unknown ELBO accepted")
	}
}

// TestGVAELossDecreases checks that the timed steps train: the loss on the
// benchmark's batch falls over 30 steps.
func TestGVAELossDecreases(t *testing.T) {
	if err := torch.ManualSeed(3); err != nil {
		t.Fatal(err)
	}
	opts := GVAEStepOptions{Device: torch.CPU, ELBO: "lbo", Seed: 3, Batch: 64}
	net, tr, err := gvaeTrainer(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	defer tr.Close()
	ex, y, err := gvaeBatch(64, 3)
	if err != nil {
		t.Fatal(err)
	}
	first, err := tr.TrainBatch(ex, y)
	if err != nil {
		t.Fatal(err)
	}
	var last float64
	for range 30 {
		l, err := tr.TrainBatch(ex, y)
		if err != nil {
			t.Fatal(err)
		}
		last = l.Rec
	}
	if !(last < first.Rec) {
		t.Fatalf("reconstruction loss %v -> %v after 30 steps on one batch", first.Rec, last)
	}
}
