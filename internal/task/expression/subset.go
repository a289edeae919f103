package expression

import (
	"math"
	"slices"
)

// Training-subset parameters (docs/design.md section 7, the reference's defaults).
const (
	// SubsetWorstPercentile: every point scoring at or above this percentile is kept.
	SubsetWorstPercentile = 65
	// SubsetGoodPercent is the share of the data set drawn from the band below it.
	SubsetGoodPercent = 5
	// SubsetProtectPercentile: points scoring at or below this percentile (the best
	// ones) are never in the subset.
	SubsetProtectPercentile = 3
)

// Subset returns the indices of the training subset, in the order the reference lists
// them. Interpretation, taken from the reference's construction script
// (T-LBO code, expr_dataset.py; docs/design.md says the same): percentiles are of the raw
// scores (lower is better), so the subset holds the WORST 35% of the data set (every
// point with score >= the 65th percentile) plus 5% of N points drawn without replacement
// from the band (3rd percentile, 65th percentile] of scores, so that the best 3% and most
// good points are held back and BO has room to improve. A score equal to the 65th
// percentile falls in both sets, so (as in the reference) such a point can appear twice.
// The random draws replay numpy's legacy RandomState seeded with seed (the reference
// uses seed 0): permute the worst points, draw the good ones with
// choice(replace=False), then permute the concatenation; with the same scores the
// result is the reference's subset, index for index. About 40,000 of 100,000 points.
func Subset(scores []float64, seed uint32) []int {
	n := len(scores)
	if n == 0 {
		return nil
	}
	sorted := slices.Clone(scores)
	slices.Sort(sorted)
	worstCut := percentile(sorted, SubsetWorstPercentile)
	bestCut := percentile(sorted, SubsetProtectPercentile)
	var worst, good []int
	for i, s := range scores {
		if s >= worstCut {
			worst = append(worst, i)
		}
		if s <= worstCut && s > bestCut {
			good = append(good, i)
		}
	}
	rng := newMT19937(seed)
	out := permuted(worst, rng.permutation(len(worst)))
	nGood := min(SubsetGoodPercent*n/100, len(good))
	if nGood == 0 {
		return out
	}
	pick := rng.permutation(len(good))[:nGood]
	out = append(out, permuted(good, pick)...)
	return permuted(out, rng.permutation(len(out)))
}

// permuted returns xs[perm[0]], xs[perm[1]], ...
func permuted(xs, perm []int) []int {
	out := make([]int, len(perm))
	for i, p := range perm {
		out[i] = xs[p]
	}
	return out
}

// percentile is numpy.percentile(a, q) with the default linear method, a sorted.
func percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	q /= 100
	// numpy's _compute_virtual_index with alpha = beta = 1, operation for operation.
	v := float64(n)*q + (1 + q*(1-1-1)) - 1
	lo := math.Floor(v)
	g := v - lo
	i := min(max(int(lo), 0), n-1)
	j := min(i+1, n-1)
	if v < 0 {
		return sorted[0]
	}
	a, b := sorted[i], sorted[j]
	d := b - a
	if g >= 0.5 {
		return b - d*(1-g)
	}
	return a + d*g
}

// mt19937 is the Mersenne Twister as numpy's legacy RandomState uses it.
type mt19937 struct {
	state [624]uint32
	pos   int
}

// newMT19937 seeds like numpy.random.seed(seed) with an integer seed (init_genrand).
func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{pos: 624}
	m.state[0] = seed
	for i := 1; i < 624; i++ {
		prev := m.state[i-1]
		m.state[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	return m
}

func (m *mt19937) uint32() uint32 {
	const upper, lower, matrix = 0x80000000, 0x7fffffff, 0x9908b0df
	if m.pos >= 624 {
		for i := range 624 {
			y := m.state[i]&upper | m.state[(i+1)%624]&lower
			v := m.state[(i+397)%624] ^ y>>1
			if y&1 != 0 {
				v ^= matrix
			}
			m.state[i] = v
		}
		m.pos = 0
	}
	y := m.state[m.pos]
	m.pos++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// interval returns a uniform integer in [0, max] by masked rejection (numpy's
// random_interval for max < 2^32).
func (m *mt19937) interval(max uint32) uint32 {
	if max == 0 {
		return 0
	}
	mask := max
	for s := uint(1); s <= 16; s <<= 1 {
		mask |= mask >> s
	}
	for {
		if v := m.uint32() & mask; v <= max {
			return v
		}
	}
}

// permutation returns numpy's RandomState.permutation(n): a Fisher-Yates shuffle of
// 0..n-1 from the last element down.
func (m *mt19937) permutation(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(m.interval(uint32(i)))
		p[i], p[j] = p[j], p[i]
	}
	return p
}
