package gp

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// BenchProblem is the synthetic problem of the speed benchmarks (`tlbo-native
// bench sgpr-eval` and `bench bo-step`), built identically by
// testdata/gp/bench_sgpr_torch.py so that both sides time the same matrices.
type BenchProblem struct {
	X        *mat.Dense // N x d, uniform in [0,1)^d from splitmix64(seed)
	Y        []float64  // Σ_k sin(3 x_k + k)
	Inducing *mat.Dense // M x d, every (N/M)-th row of X
	Hyper    Hyper      // ℓ_k = 0.4 + 0.15 k·25/d, s = 1.3, μ = 0.2, σ² = 0.05
}

// NewBenchProblem builds the benchmark problem of the given size.
func NewBenchProblem(n, d, m int, seed uint64) BenchProblem {
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	state := seed
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			state += 0x9E3779B97F4A7C15
			v := float64(splitmix64(state)>>11) / (1 << 53)
			x.Set(i, k, v)
			y[i] += math.Sin(3*v + float64(k))
		}
	}
	step := max(1, n/m)
	z := mat.NewDense(m, d, nil)
	for j := 0; j < m; j++ {
		z.SetRow(j, x.RawRowView(min(j*step, n-1)))
	}
	h := Hyper{Lengthscales: make([]float64, d), Outputscale: 1.3, Mean: 0.2, Noise: 0.05}
	for k := range h.Lengthscales {
		h.Lengthscales[k] = 0.4 + 0.15*float64(k)*25/float64(d)
	}
	return BenchProblem{X: x, Y: y, Inducing: z, Hyper: h}
}

// splitmix64 is the output function of the splitmix64 generator.
func splitmix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
