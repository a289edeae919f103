package bench

import (
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/torch"
)

func TestGVAEStepRuns(t *testing.T) {
	times, err := GVAEStep(GVAEStepOptions{Device: torch.CPU, Steps: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 2 {
		t.Fatalf("%d timings, want 2", len(times))
	}
	if _, err := GVAEStep(GVAEStepOptions{Device: torch.CPU, Steps: 0}); err == nil {
		t.Fatal("zero steps accepted")
	}
}

func TestGVAELossDecreases(t *testing.T) {
	if err := torch.ManualSeed(3); err != nil {
		t.Fatal(err)
	}
	net := newGVAENet()
	defer net.Close()
	x, target := randomOneHot(newRNG(3))
	defer x.Close()
	defer target.Close()
	loss := func() float64 {
		var v float64
		torch.NoGrad(func() {
			net.SetTraining(false)
			v, _ = net.loss(x, target).Item()
			net.SetTraining(true)
		})
		return v
	}
	before := loss()
	adam := newAdam(net)
	for i := 0; i < 20; i++ {
		if err := gvaeTrainStep(net, adam, x, target); err != nil {
			t.Fatal(err)
		}
	}
	if after := loss(); !(after < before) {
		t.Fatalf("loss %v -> %v after 20 steps on one batch", before, after)
	}
}

func TestMedian(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	if m := Median(ms(3, 1, 2)); m != 2 {
		t.Errorf("median %v", m)
	}
	if m := Median(ms(4, 1, 2, 3)); m != 2.5 {
		t.Errorf("median %v", m)
	}
	if Median(nil) != 0 {
		t.Error("median of nothing")
	}
}
