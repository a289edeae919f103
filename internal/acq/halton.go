package acq

import (
	"math"
	"math/rand/v2"
)

// Halton generates a scrambled Halton sequence in [0,1)^d: dimension k uses
// the k-th prime as base, and each digit position of each dimension gets its
// own random permutation of the digits (random-permutation scrambling), which
// removes the correlations of the plain sequence in high dimensions. The
// sequence is deterministic for a seed.
type Halton struct {
	primes []int
	digits []int     // digits per dimension, enough for float64 resolution
	perms  [][][]int // [dimension][digit position] -> permutation
	index  uint64
}

// NewHalton returns a d-dimensional scrambled Halton sequence seeded by seed.
func NewHalton(d int, seed uint64) *Halton {
	rng := rand.New(rand.NewPCG(seed, 0x68616c746f6e))
	h := &Halton{primes: firstPrimes(d), digits: make([]int, d), perms: make([][][]int, d)}
	for k, p := range h.primes {
		h.digits[k] = int(math.Ceil(53 * math.Ln2 / math.Log(float64(p))))
		h.perms[k] = make([][]int, h.digits[k])
		for j := range h.perms[k] {
			h.perms[k][j] = rng.Perm(p)
		}
	}
	// Skip the first points, whose digits are mostly the permuted zero.
	h.index = 1
	return h
}

// Next writes the next point of the sequence into dst (length d).
func (h *Halton) Next(dst []float64) {
	i := h.index
	h.index++
	for k, p := range h.primes {
		pf := float64(p)
		v, scale, rest := 0.0, 1/pf, i
		for j := 0; j < h.digits[k]; j++ {
			digit := int(rest % uint64(p))
			rest /= uint64(p)
			v += float64(h.perms[k][j][digit]) * scale
			scale /= pf
		}
		dst[k] = math.Min(v, math.Nextafter(1, 0))
	}
}

// firstPrimes returns the first n primes.
func firstPrimes(n int) []int {
	ps := make([]int, 0, n)
	for c := 2; len(ps) < n; c++ {
		prime := true
		for _, p := range ps {
			if p*p > c {
				break
			}
			if c%p == 0 {
				prime = false
				break
			}
		}
		if prime {
			ps = append(ps, c)
		}
	}
	return ps
}
