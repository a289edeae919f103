package gp

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/openblas"
	"github.com/tlbo-native/tlbo-native/internal/rusage"
)

// BenchmarkSGPREval times one objective+gradient evaluation of each sparse
// approximation at the size (N = 3000, M = 500, d = 25);
// `tlbo-native bench sgpr-eval` reports the Titsias one.
func BenchmarkSGPREval(b *testing.B) {
	x, y := randomProblem(3000, 25, 1)
	z := KMeans(x, 500, 10, 1)
	for _, a := range []Approximation{Titsias, FITC} {
		b.Run(string(a), func(b *testing.B) {
			o, err := NewObjective(x, y, Spec{Kernel: RBF, Inducing: z, Approximation: a})
			if err != nil {
				b.Fatal(err)
			}
			theta, _ := o.Pack(testHyper(25, false), nil)
			grad := make([]float64, len(theta))
			for b.Loop() {
				if _, err := o.Eval(theta, grad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPredictGradBatch times PredictGradBatch on batches of the sizes
// an acquisition's lockstep asks (up to 50 restarts' points) for an SGPR
// posterior of the GP benchmarks' problem (N = 2000, M = 500, d = 25), on
// one OpenBLAS thread as the maximiser runs it.
func BenchmarkPredictGradBatch(b *testing.B) {
	defer openblas.OneThread()()
	const d = 25
	p, model := benchPosterior(b, 2000, d, 500)
	for _, q := range []int{50, 10} {
		b.Run(fmt.Sprintf("q=%d", q), func(b *testing.B) {
			x := mat.NewDense(q, d, nil)
			x.Copy(p.X.Slice(0, q, 0, d))
			mean, variance := make([]float64, q), make([]float64, q)
			dmean, dvar := mat.NewDense(q, d, nil), mat.NewDense(q, d, nil)
			cpu0 := rusage.CPUSeconds()
			for b.Loop() {
				model.PredictGradBatch(x, mean, variance, dmean, dvar)
			}
			b.ReportMetric(1e6*(rusage.CPUSeconds()-cpu0)/float64(b.N), "cpu-us/op")
		})
	}
}

// BenchmarkConditionGrow times ConditionGrow adding one inducing point at a
// time, each on the last's result (as a round's believer does), at the
// molecule task's GP size (N = 10,000, M = 500 growing, d = 56), on one
// OpenBLAS thread; the first call also makes the fit points' correlations.
func BenchmarkConditionGrow(b *testing.B) {
	defer openblas.OneThread()()
	const d = 56
	_, model := benchPosterior(b, 10000, d, 500)
	rng := rand.New(rand.NewPCG(3, 4))
	for b.Loop() {
		x := make([]float64, d)
		for k := range x {
			x[k] = rng.Float64()
		}
		next, err := model.ConditionGrow([][]float64{x}, []float64{0.5}, DefaultGrowTol)
		if err != nil {
			b.Fatal(err)
		}
		model = next
	}
}

// benchPosterior returns the benchmarks' problem of n points in d dimensions
// with m inducing points and its RBF SGPR posterior.
func benchPosterior(b *testing.B, n, d, m int) (BenchProblem, *Model) {
	b.Helper()
	p := NewBenchProblem(n, d, m, 1)
	model, err := New(p.X, p.Y, Spec{Kernel: RBF, Inducing: p.Inducing}, p.Hyper)
	if err != nil {
		b.Fatal(err)
	}
	return p, model
}
