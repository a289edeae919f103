package simp

import (
	"math"
	"math/rand/v2"
)

// Parameters of the random problems (docs/design.md section 7, after the TOP4040
// data set): a 40x40 mesh, Poisson counts of x-supports, y-supports and unit
// downward loads, boundary nodes 100 times likelier than inner ones, and a
// volume fraction ~ N(0.5, 0.1) clipped to [0.05, 0.95].
const (
	RandomSize        = 40
	meanXFixed        = 2.0
	meanYFixed        = 1.0
	meanLoads         = 1.0
	boundaryWeight    = 100.0
	volFracMean       = 0.5
	volFracSD         = 0.1
	volFracLo         = 0.05
	volFracHi         = 0.95
	maxRandomAttempts = 100000
)

// NewRNG returns the random stream of design index under seed; every design
// of a data set depends on (seed, index) only.
func NewRNG(seed uint64, index int) *rand.Rand {
	return rand.New(rand.NewPCG(splitmix(seed), splitmix(uint64(index)^0x6a09e667f3bcc909)))
}

// splitmix is SplitMix64's finaliser: it decorrelates neighbouring seeds.
func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// RandomProblem returns the random problem number index under seed: the
// x-supports, the y-supports and the loads are each drawn without
// replacement within their set (a node may carry an x- and a y-support, or a
// support and a load), and draws are repeated until the problem has a load
// on a free dof and no rigid-body mode.
func RandomProblem(seed uint64, index int) Problem {
	rng := NewRNG(seed, index)
	for range maxRandomAttempts {
		if p, ok := drawProblem(rng); ok {
			return p
		}
	}
	// Unreachable in practice: about one draw in four is accepted.
	panic("simp: no valid random problem drawn")
}

// drawProblem makes one draw and reports whether it is acceptable.
func drawProblem(rng *rand.Rand) (Problem, bool) {
	p := NewProblem(RandomSize, RandomSize, 0)
	nx, ny, nl := poisson(rng, meanXFixed), poisson(rng, meanYFixed), poisson(rng, meanLoads)
	w := nodeWeights(p)
	for _, n := range sampleNodes(rng, w, nx) {
		p.Fixed = append(p.Fixed, Fixed{Node: n, Axis: X})
	}
	w = nodeWeights(p)
	for _, n := range sampleNodes(rng, w, ny) {
		p.Fixed = append(p.Fixed, Fixed{Node: n, Axis: Y})
	}
	w = nodeWeights(p)
	for _, n := range sampleNodes(rng, w, nl) {
		p.Loads = append(p.Loads, Load{Node: n, Axis: Y, Value: -1})
	}
	p.VolFrac = min(volFracHi, max(volFracLo, volFracMean+volFracSD*rng.NormFloat64()))
	return p, p.Validate() == nil
}

// nodeWeights returns the sampling weight of each node: boundaryWeight on
// the boundary of the mesh, 1 inside.
func nodeWeights(p Problem) []float64 {
	w := make([]float64, p.Nodes())
	for n := range w {
		ix, iy := p.NodeXY(n)
		w[n] = 1
		if ix == 0 || iy == 0 || ix == p.NelX || iy == p.NelY {
			w[n] = boundaryWeight
		}
	}
	return w
}

// sampleNodes draws k nodes without replacement with probabilities
// proportional to w (zeroing the weights of the nodes drawn).
func sampleNodes(rng *rand.Rand, w []float64, k int) []int {
	total := 0.0
	for _, v := range w {
		total += v
	}
	out := make([]int, 0, k)
	for range min(k, len(w)) {
		r := rng.Float64() * total
		n := len(w) - 1
		for i, v := range w {
			if r < v {
				n = i
				break
			}
			r -= v
		}
		for w[n] == 0 { // rounding ran past the last positive weight
			n--
		}
		out = append(out, n)
		total -= w[n]
		w[n] = 0
	}
	return out
}

// poisson draws a Poisson variate by Knuth's product of uniforms (small means).
func poisson(rng *rand.Rand, mean float64) int {
	limit, prod, k := math.Exp(-mean), rng.Float64(), 0
	for prod > limit {
		prod *= rng.Float64()
		k++
	}
	return k
}
