package acq

import (
	"math"
	"slices"
	"testing"
)

// boltzmannVals are raw-sample values with a clear best (index 3).
var boltzmannVals = []float64{0.1, -1.2, 0.5, 2.0, 0.4, -0.3, 1.1, 0.0}

func TestBoltzmannDeterministicAndKeepsBest(t *testing.T) {
	for seed := range uint64(200) {
		a := selectStarts(boltzmannVals, 3, SelectBoltzmann, 1, seed)
		b := selectStarts(boltzmannVals, 3, SelectBoltzmann, 1, seed)
		if !slices.Equal(a, b) {
			t.Fatalf("seed %d: %v then %v", seed, a, b)
		}
		if !slices.Contains(a, 3) {
			t.Fatalf("seed %d: picks %v miss the best raw sample 3", seed, a)
		}
		if s := slices.Clone(a); len(slices.Compact(sortInts(s))) != 3 {
			t.Fatalf("seed %d: picks %v repeat", seed, a)
		}
	}
	if slices.Equal(selectStarts(boltzmannVals, 3, SelectBoltzmann, 1, 1), selectStarts(boltzmannVals, 3, SelectBoltzmann, 1, 2)) &&
		slices.Equal(selectStarts(boltzmannVals, 3, SelectBoltzmann, 1, 1), selectStarts(boltzmannVals, 3, SelectBoltzmann, 1, 3)) {
		t.Error("the seed does not change the picks")
	}
	if got := selectStarts(boltzmannVals, 3, SelectBest, 1, 0); !slices.Equal(got, []int{3, 6, 2}) {
		t.Errorf("best 3: %v, want [3 6 2]", got)
	}
}

func sortInts(s []int) []int { slices.Sort(s); return s }

// TestBoltzmannDistribution compares the frequencies of the picked pairs
// (n = 2 of 4) over 40,000 seeds with the exact probabilities of
// initialize_q_batch: two successive weighted draws without replacement, the
// second replaced by the best when neither is the best. Tolerance: 5 standard
// errors of each frequency.
func TestBoltzmannDistribution(t *testing.T) {
	vals := []float64{0, 1, 3, 0.5}
	const eta, best, runs = 1.0, 2, 40000
	mean, std, _ := finiteStats(vals)
	w := make([]float64, len(vals))
	var total float64
	for i, v := range vals {
		w[i] = math.Exp(eta * (v - mean) / std)
		total += w[i]
	}
	want := map[[2]int]float64{}
	for a := range vals {
		for b := range vals {
			if a == b {
				continue
			}
			p := w[a] / total * w[b] / (total - w[a])
			if a != best && b != best {
				b = best
			}
			want[[2]int{min(a, b), max(a, b)}] += p
		}
	}
	got := map[[2]int]float64{}
	for seed := range uint64(runs) {
		p := selectStarts(vals, 2, SelectBoltzmann, eta, seed)
		got[[2]int{min(p[0], p[1]), max(p[0], p[1])}] += 1.0 / runs
	}
	for pair, p := range want {
		if se := math.Sqrt(p * (1 - p) / runs); math.Abs(got[pair]-p) > 5*se {
			t.Errorf("pair %v: frequency %.4f, want %.4f (se %.4f)", pair, got[pair], p, se)
		}
	}
	for pair := range got {
		if _, ok := want[pair]; !ok {
			t.Errorf("pair %v picked but impossible", pair)
		}
	}
}

// TestBoltzmannDegenerate: equal values give uniform picks; NaN and infinite
// values come only after every finite one.
func TestBoltzmannDegenerate(t *testing.T) {
	flat := []float64{2, 2, 2, 2}
	counts := make([]float64, len(flat))
	const runs = 20000
	for seed := range uint64(runs) {
		for _, i := range selectStarts(flat, 1, SelectBoltzmann, 1, seed) {
			counts[i]++
		}
	}
	for i, c := range counts {
		if se := math.Sqrt(0.25 * 0.75 / runs); math.Abs(c/runs-0.25) > 5*se {
			t.Errorf("equal values: index %d picked with frequency %.4f, want 0.25", i, c/runs)
		}
	}
	bad := []float64{math.NaN(), 1, math.Inf(1), 0, math.Inf(-1), 3}
	for seed := range uint64(100) {
		p := selectStarts(bad, 3, SelectBoltzmann, 1, seed)
		if !slices.Equal(sortInts(slices.Clone(p)), []int{1, 3, 5}) {
			t.Fatalf("seed %d: picks %v, want the finite 1, 3, 5", seed, p)
		}
		if p := selectStarts(bad, 3, SelectBest, 1, seed); !slices.Equal(p, []int{2, 5, 1}) {
			t.Fatalf("best: %v, want [2 5 1] (+Inf first, NaN last)", p)
		}
	}
	if _, err := ParseSelection("top"); err == nil {
		t.Error("ParseSelection accepted an unknown heuristic")
	}
}

// TestMaximizeSelections: both heuristics find the Branin maximum with the
// default raw samples and a few restarts.
func TestMaximizeSelections(t *testing.T) {
	for _, sel := range []Selection{SelectBoltzmann, SelectBest} {
		res, err := Maximize(braninFunc, []float64{-5, 0}, []float64{10, 15},
			Options{Restarts: 10, Selection: sel, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Value+0.397887357729738) > 1e-8 {
			t.Errorf("%s: max %v at %v, want -0.3978873577", sel, res.Value, res.X)
		}
	}
	if _, err := Maximize(braninFunc, []float64{0}, []float64{1}, Options{BoltzmannEta: -1}); err == nil {
		t.Error("negative BoltzmannEta: no error")
	}
}
