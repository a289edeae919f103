package bo

import (
	"math"
	"math/rand/v2"
	"sort"
)

// orderBest returns the indices of u from the highest utility to the lowest,
// ties in index order.
func orderBest(u []float64) []int {
	idx := make([]int, len(u))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return u[idx[a]] > u[idx[b]] })
	return idx
}

// gpSubset returns the indices of the GP's training points: the nBest
// highest utilities and nRand others drawn without replacement, in that
// order. When the data hold fewer than nBest + nRand points, both shrink in
// proportion (as in the reference) and every point is used.
func gpSubset(u []float64, nBest, nRand int, rng *rand.Rand) []int {
	n := len(u)
	order := orderBest(u)
	if n <= nBest+nRand {
		return order
	}
	rest := order[nBest:]
	perm := rng.Perm(len(rest))
	out := append([]int(nil), order[:nBest]...)
	for _, p := range perm[:nRand] {
		out = append(out, rest[p])
	}
	return out
}

// labelledSubset returns the indices of a random fraction f of n points
// (at least one), sorted, for the semi-supervised start.
func labelledSubset(n int, f float64, rng *rand.Rand) []int {
	m := int(math.Round(f * float64(n)))
	m = max(1, min(m, n))
	idx := rng.Perm(n)[:m]
	sort.Ints(idx)
	return idx
}
