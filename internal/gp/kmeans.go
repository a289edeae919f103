package gp

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// KMeans returns k cluster centres of the rows of x (k x d): k-means++
// seeding from a PCG generator seeded with seed, then at most iters Lloyd
// iterations (stopping early when no assignment changes). k larger than the
// number of rows is reduced to it. The result is deterministic for a seed.
func KMeans(x *mat.Dense, k, iters int, seed uint64) *mat.Dense {
	g := toGeneral(x)
	c := kmeans(g, k, iters, rand.New(rand.NewPCG(seed, 0x6b6d65616e73)))
	return mat.NewDense(c.Rows, c.Cols, c.Data)
}

func kmeans(x blas64.General, k, iters int, rng *rand.Rand) blas64.General {
	n, d := x.Rows, x.Cols
	k = min(k, n)
	c := seedPlusPlus(x, k, rng)
	assign := make([]int, n)
	for i := range assign {
		assign[i] = -1
	}
	xSq := rowSqNorms(x, nil)
	dist := newGeneral(n, k)
	counts := make([]int, k)
	minD := make([]float64, n)
	for it := 0; it < iters; it++ {
		// Squared distances from one product: |x|² + |c|² - 2 x·c.
		cSq := rowSqNorms(c, nil)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, x, c, 0, dist)
		changed := false
		for i := 0; i < n; i++ {
			best, bestD := 0, math.Inf(1)
			row := dist.Data[i*k : (i+1)*k]
			for j, ip := range row {
				if dd := cSq[j] - 2*ip; dd < bestD {
					best, bestD = j, dd
				}
			}
			minD[i] = math.Max(bestD+xSq[i], 0)
			if assign[i] != best {
				assign[i], changed = best, true
			}
		}
		if !changed {
			break
		}
		clear(c.Data)
		clear(counts)
		for i, j := range assign {
			counts[j]++
			cr := c.Data[j*d : (j+1)*d]
			for t, v := range x.Data[i*x.Stride : i*x.Stride+d] {
				cr[t] += v
			}
		}
		for j := 0; j < k; j++ {
			cr := c.Data[j*d : (j+1)*d]
			if counts[j] == 0 {
				// An empty cluster takes the point farthest from its centre.
				far := 0
				for i := range minD {
					if minD[i] > minD[far] {
						far = i
					}
				}
				copy(cr, x.Data[far*x.Stride:far*x.Stride+d])
				minD[far] = 0
				continue
			}
			for t := range cr {
				cr[t] /= float64(counts[j])
			}
		}
	}
	return c
}

// seedPlusPlus picks k initial centres by k-means++ (D² sampling).
func seedPlusPlus(x blas64.General, k int, rng *rand.Rand) blas64.General {
	n, d := x.Rows, x.Cols
	c := newGeneral(k, d)
	row := func(i int) []float64 { return x.Data[i*x.Stride : i*x.Stride+d] }
	first := rng.IntN(n)
	copy(c.Data[:d], row(first))
	d2 := make([]float64, n)
	for i := range d2 {
		d2[i] = sqDist(row(i), c.Data[:d])
	}
	for j := 1; j < k; j++ {
		total := 0.0
		for _, v := range d2 {
			total += v
		}
		next := rng.IntN(n) // all points coincide with centres: any will do
		if total > 0 {
			u := rng.Float64() * total
			for i, v := range d2 {
				u -= v
				if u <= 0 && v > 0 {
					next = i
					break
				}
			}
		}
		cj := c.Data[j*d : (j+1)*d]
		copy(cj, row(next))
		for i := range d2 {
			d2[i] = math.Min(d2[i], sqDist(row(i), cj))
		}
	}
	return c
}

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		t := v - b[i]
		s += t * t
	}
	return s
}
