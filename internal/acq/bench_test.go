package acq_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/gp"
	"github.com/tlbo-native/tlbo-native/internal/rusage"
)

// benchPosterior is an SGPR posterior of the GP benchmarks' problem
// (gp.NewBenchProblem: n points, m inducing points, in d dimensions, at
// its fixed hyperparameters) with EI's incumbent at the standardised
// targets' 0.9-quantile, as the loop sets it.
func benchPosterior(tb testing.TB, n, d, m int) acq.Acquisition {
	tb.Helper()
	return benchPosteriorSeed(tb, n, d, m, 1)
}

// benchPosteriorSeed is benchPosterior of the problem of the given seed.
func benchPosteriorSeed(tb testing.TB, n, d, m int, seed uint64) acq.Acquisition {
	tb.Helper()
	p := gp.NewBenchProblem(n, d, m, seed)
	st, err := gp.NewStandardizer(p.Y)
	if err != nil {
		tb.Fatal(err)
	}
	y := st.Transform(p.Y)
	model, err := gp.New(p.X, y, gp.Spec{Kernel: gp.RBF, Inducing: p.Inducing}, p.Hyper)
	if err != nil {
		tb.Fatal(err)
	}
	return acq.NewEI(model, acq.QuantileBest(y, 0.9))
}

// BenchmarkMaximizeEI times one EI maximisation at the loop's defaults
// (1,000 raw samples, 100 restarts) on a 500-inducing-point SGPR in 25 and
// 56 dimensions, its restarts refined one after another (sequential, the
// path before batching), in lockstep on one worker, and in lockstep on 2
// workers (lockstep-2, the same result; compare its wall time, ns/op, with
// lockstep's on an idle machine with 2 cores or more).
func BenchmarkMaximizeEI(b *testing.B) {
	for _, d := range []int{25, 56} {
		f := benchPosterior(b, 2000, d, 500)
		lower, upper := make([]float64, d), make([]float64, d)
		for k := range upper {
			upper[k] = 1
		}
		for _, path := range []string{"sequential", "lockstep", "lockstep-2"} {
			b.Run(fmt.Sprintf("d=%d/%s", d, path), func(b *testing.B) {
				var evals int
				opts := acq.Options{Seed: 3, Sequential: path == "sequential", Workers: 1}
				if path == "lockstep-2" {
					opts.Workers = 2
				}
				cpu0 := rusage.CPUSeconds()
				for b.Loop() {
					res, err := acq.Maximize(f, lower, upper, opts)
					if err != nil {
						b.Fatal(err)
					}
					evals = res.Evaluations
				}
				b.ReportMetric(float64(evals), "evals/op")
				// CPU time is steadier than wall time on a shared machine.
				b.ReportMetric(1e3*(rusage.CPUSeconds()-cpu0)/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// BenchmarkWarmStarts measures what starting a maximisation from the
// restarts' ends of the previous one costs in quality, on chains of
// posteriors each conditioned on the previous proposal at its predicted
// mean (as a known object's repeat conditions the loop's GP): cold is the
// loop's maximisation (1,000 raw samples, 100 Boltzmann restarts), warm
// the same raw samples with fresh Boltzmann restarts and up to 100 -
// fresh ends of the previous warm maximisation as Options.Starts, the
// best distinct ones (BestEnds with acq.DistinctTol),
// and cold2 the loop's maximisation with another seed (how much the
// current method's own optimum varies). It reports the evaluations of
// cold and warm, warm's and cold2's shortfall relative to cold's value in
// parts per million (mean and worst over the chains; negative where they
// found more), and the fraction of steps where their point is elsewhere
// than cold's (a coordinate more than 1e-4 away). The
// posteriors are EI of SGPRs (d = 25, M = 500): the GP benchmarks'
// (uniform data, fixed hyperparameters) and clusteredPosterior (data
// around the box's centre with an expression run's fitted
// hyperparameters).
func BenchmarkWarmStarts(b *testing.B) {
	const d, steps = 25, 6
	lower, upper := unitBounds(d)
	for _, kind := range []string{"uniform", "clustered"} {
		for _, fresh := range []int{10, 25} {
			b.Run(fmt.Sprintf("%s/fresh=%d", kind, fresh), func(b *testing.B) {
				var coldEvals, warmEvals, n, moved, moved2 int
				var sum, worst, sum2, worst2 float64
				for b.Loop() {
					for p := uint64(1); p <= 3; p++ {
						f := benchPosteriorSeed(b, 2000, d, 500, p)
						if kind == "clustered" {
							f = clusteredPosterior(b, 3000, d, 500, p)
						}
						var prev acq.Result
						for step := range steps {
							seed := 100*p + uint64(step)
							cold, err := acq.Maximize(f, lower, upper, acq.Options{Seed: seed, Workers: 1})
							if err != nil {
								b.Fatal(err)
							}
							opts := acq.Options{Seed: seed, Workers: 1}
							if step > 0 {
								opts.Restarts = fresh
								opts.Starts = prev.BestEnds(acq.DefaultRestarts-fresh, acq.DistinctTol)
							}
							warm, err := acq.Maximize(f, lower, upper, opts)
							if err != nil {
								b.Fatal(err)
							}
							prev = warm
							if step > 0 {
								cold2, err := acq.Maximize(f, lower, upper, acq.Options{Seed: seed + 1000, Workers: 1})
								if err != nil {
									b.Fatal(err)
								}
								coldEvals += cold.Evaluations
								warmEvals += warm.Evaluations
								short := (cold.Value - warm.Value) / math.Abs(cold.Value)
								short2 := (cold.Value - cold2.Value) / math.Abs(cold.Value)
								sum, sum2 = sum+short, sum2+short2
								worst, worst2 = max(worst, short), max(worst2, short2)
								if maxAbsDiff(warm.X, cold.X) > 1e-4 {
									moved++
								}
								if maxAbsDiff(cold2.X, cold.X) > 1e-4 {
									moved2++
								}
								n++
							}
							mean, _ := f.Model.PredictGrad(cold.X, nil, nil)
							m, err := f.Model.(*gp.Model).Condition([][]float64{cold.X}, []float64{mean})
							if err != nil {
								b.Fatal(err)
							}
							f.Model = m
						}
					}
				}
				b.ReportMetric(float64(coldEvals)/float64(n), "cold-evals")
				b.ReportMetric(float64(warmEvals)/float64(n), "warm-evals")
				b.ReportMetric(1e6*sum/float64(n), "warm-mean-short-ppm")
				b.ReportMetric(1e6*worst, "warm-worst-short-ppm")
				b.ReportMetric(float64(moved)/float64(n), "warm-elsewhere")
				b.ReportMetric(1e6*sum2/float64(n), "cold2-mean-short-ppm")
				b.ReportMetric(1e6*worst2, "cold2-worst-short-ppm")
				b.ReportMetric(float64(moved2)/float64(n), "cold2-elsewhere")
			})
		}
	}
}

// clusteredPosterior is EI at the targets' 0.9-quantile of an SGPR of n
// points around the box's centre (normal, sd 0.12, clamped to the box)
// with targets Σ_k sin(3 x_k + k) plus noise, standardised, its inducing
// points every (n/m)-th point, at hyperparameters like an expression run's
// fit (length-scales 0.2 to 1.6, output scale 0.5, noise 0.58, mean -0.5).
func clusteredPosterior(tb testing.TB, n, d, m int, seed uint64) acq.Acquisition {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0xc1))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			v := math.Min(math.Max(0.55+0.12*rng.NormFloat64(), 0), 1)
			x.Set(i, k, v)
			y[i] += math.Sin(3*v + float64(k))
		}
		y[i] += 0.3 * rng.NormFloat64()
	}
	z := mat.NewDense(m, d, nil)
	for j := 0; j < m; j++ {
		z.SetRow(j, x.RawRowView(j*(n/m)))
	}
	h := gp.Hyper{Lengthscales: make([]float64, d), Outputscale: 0.51, Mean: -0.49, Noise: 0.58}
	for k := range h.Lengthscales {
		h.Lengthscales[k] = 0.2 + 1.4*float64(k)/float64(d-1)
	}
	st, err := gp.NewStandardizer(y)
	if err != nil {
		tb.Fatal(err)
	}
	ys := st.Transform(y)
	model, err := gp.New(x, ys, gp.Spec{Kernel: gp.RBF, Inducing: z}, h)
	if err != nil {
		tb.Fatal(err)
	}
	return acq.NewEI(model, acq.QuantileBest(ys, 0.9))
}

// maxAbsDiff returns the largest coordinate difference of a and b.
func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = max(m, math.Abs(a[i]-b[i]))
	}
	return m
}
