package acq_test

import (
	"fmt"
	"testing"

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
	p := gp.NewBenchProblem(n, d, m, 1)
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
