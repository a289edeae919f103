package weighting

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/fixture"
)

func closeTo(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// TestRankWeights compares with numpy's argsort-of-argsort formula.
func TestRankWeights(t *testing.T) {
	fx := fixture.LoadFloat64s(t, "models", "rank_weights.npz")
	scores, k := fx["scores"], fx["k"][0]
	for name, maximize := range map[string]bool{"maximize": true, "minimize": false} {
		w, err := RankWeights(scores, k, maximize)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range fx[name] {
			if !closeTo(w[i], want, 1e-12) {
				t.Fatalf("%s: w[%d] = %v, want %v", name, i, w[i], want)
			}
		}
	}
	w, err := RankWeights([]float64{3, math.NaN(), 1, math.NaN()}, 0.5, false)
	if err != nil {
		t.Fatal(err)
	}
	// kN = 2; labelled ranks: 1 -> 0, 3 -> 1; unlabelled share rank 2.
	if want := []float64{1 / 3.0, 1 / 4.0, 1 / 2.0, 1 / 4.0}; !equalFloats(w, want) {
		t.Errorf("with unlabelled points: %v, want %v", w, want)
	}
	if w, _ := RankWeights([]float64{5, 1}, math.Inf(1), true); w[0] != 1 || w[1] != 1 {
		t.Errorf("k = inf: %v", w)
	}
	for _, k := range []float64{0, -1, math.NaN()} {
		if _, err := RankWeights([]float64{1}, k, true); err == nil {
			t.Errorf("k = %v: no error", k)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !closeTo(a[i], b[i], 1e-15) {
			return false
		}
	}
	return true
}

func TestWeightedSampler(t *testing.T) {
	w := []float64{1, 0, 3, 0, 6}
	s, err := NewWeightedSampler(w, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, len(w))
	const n = 100000
	for _, i := range s.Sample(n) {
		counts[i]++
	}
	for i, c := range counts {
		if want := w[i] / 10 * n; math.Abs(float64(c)-want) > 0.02*n {
			t.Errorf("index %d drawn %d times, want about %v", i, c, want)
		}
	}
	if counts[1] != 0 || counts[3] != 0 {
		t.Errorf("zero weights drawn: %v", counts)
	}
	for _, bad := range [][]float64{nil, {0, 0}, {1, -1}, {math.Inf(1)}, {math.NaN()}} {
		if _, err := NewWeightedSampler(bad, nil); err == nil {
			t.Errorf("weights %v: no error", bad)
		}
	}
}
