package acq

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Selection is how Maximize picks the restarts among the raw samples.
type Selection string

// The selection heuristics.
const (
	// SelectBoltzmann draws the restarts without replacement with probability
	// proportional to exp(eta z), z the standardised acquisition value, and
	// keeps the best raw sample (BoTorch's initialize_q_batch).
	SelectBoltzmann Selection = "boltzmann"
	// SelectBest takes the best raw samples.
	SelectBest Selection = "best"
)

// DefaultBoltzmannEta is BoTorch's temperature of initialize_q_batch.
const DefaultBoltzmannEta = 1.0

// ParseSelection returns the heuristic called name ("boltzmann" or "best").
func ParseSelection(name string) (Selection, error) {
	switch s := Selection(name); s {
	case SelectBoltzmann, SelectBest:
		return s, nil
	}
	return "", fmt.Errorf("acq: unknown restart selection %q (want %q or %q)", name, SelectBoltzmann, SelectBest)
}

// selectStarts returns the indices of n of the raw samples with values vals,
// by the heuristic sel: the best n (best first), or a Boltzmann draw seeded by
// seed that always contains the best sample. NaN values are never preferred.
func selectStarts(vals []float64, n int, sel Selection, eta float64, seed uint64) []int {
	n = min(n, len(vals))
	order := make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	if sel == SelectBest {
		slices.SortStableFunc(order, func(a, b int) int { return compareDesc(vals[a], vals[b]) })
		return order[:n]
	}
	return boltzmannStarts(vals, n, eta, rand.New(rand.NewPCG(seed, 0x5e1ec7)))
}

// compareDesc orders larger values first and NaN last.
func compareDesc(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	case math.IsNaN(b):
		return -1
	}
	return cmp.Compare(b, a)
}

// boltzmannStarts is BoTorch's initialize_q_batch on the values: when they
// do not vary, n indices uniformly at random; else n indices drawn without
// replacement with weights exp(eta (v - mean)/std) (std with Bessel's
// correction), the last replaced by the best index unless it was drawn.
//
// The draw uses the Gumbel-top-k trick, which has the distribution of
// successive weighted draws without replacement (torch.multinomial) and
// works with log-weights, so no weight overflows (BoTorch lowers eta then).
// Non-finite values get weight 0: they come after every finite one.
func boltzmannStarts(vals []float64, n int, eta float64, rng *rand.Rand) []int {
	mean, std, best := finiteStats(vals)
	keys := make([]float64, len(vals))
	for i, v := range vals {
		g := -math.Log(rng.ExpFloat64()) // a standard Gumbel variable
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			keys[i] = math.Inf(-1)
		case std == 0 || math.IsNaN(std):
			keys[i] = g // uniform
		default:
			keys[i] = eta*(v-mean)/std + g
		}
	}
	order := make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	// Weight-0 entries tie at -Inf: the stable sort then takes them in order,
	// after a shuffle so that they too are uniform.
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(keys[b], keys[a]) })
	picks := order[:n]
	if best >= 0 && n > 0 && !slices.Contains(picks, best) && std > 0 {
		picks[n-1] = best
	}
	return picks
}

// finiteStats returns the mean and the standard deviation (Bessel-corrected;
// 0 for fewer than two) of the finite values and the index of the largest
// (-1 when none is finite).
func finiteStats(vals []float64) (mean, std float64, best int) {
	best = -1
	var n float64
	for i, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		n++
		mean += (v - mean) / n
		if best < 0 || v > vals[best] {
			best = i
		}
	}
	var ss float64
	for _, v := range vals {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			ss += (v - mean) * (v - mean)
		}
	}
	if n > 1 {
		std = math.Sqrt(ss / (n - 1))
	}
	return mean, std, best
}
