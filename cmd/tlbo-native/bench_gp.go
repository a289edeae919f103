package main

import (
	"fmt"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bench"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/gp"
	"github.com/tlbo-native/tlbo-native/internal/openblas"
)

// gpBenchFlags are the problem-size flags shared by the GP benchmarks.
func gpBenchFlags(reps int) []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "n", Value: 3000, Usage: "training points"},
		&cli.IntFlag{Name: "m", Value: 500, Usage: "inducing points"},
		&cli.IntFlag{Name: "d", Value: 25, Usage: "input dimensions"},
		&cli.IntFlag{Name: "reps", Value: reps, Usage: "timed repetitions"},
		&cli.IntFlag{Name: "blas-threads", Usage: "OpenBLAS threads (0: TLBO_BLAS_THREADS, else the core count)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the synthetic data"},
	}
}

// setupBLAS applies --blas-threads and describes the BLAS in use.
func setupBLAS(c *cli.Context) string {
	if n := c.Int("blas-threads"); n > 0 {
		openblas.SetThreads(n)
	}
	return fmt.Sprintf("OpenBLAS %s kernels, %d threads", openblas.CoreName(), openblas.Threads())
}

// checkBenchSize validates the size flags.
func checkBenchSize(c *cli.Context) error {
	n, m, d, reps := c.Int("n"), c.Int("m"), c.Int("d"), c.Int("reps")
	if n < 2 || m < 1 || m > n || d < 1 || reps < 1 {
		return fmt.Errorf("bad sizes --n %d --m %d --d %d --reps %d (want n >= 2, 1 <= m <= n, d >= 1, reps >= 1)", n, m, d, reps)
	}
	return nil
}

func benchSGPREvalCommand() *cli.Command {
	return &cli.Command{
		Name: "sgpr-eval",
		Usage: "time one SGPR bound+gradient evaluation (compare with testdata/gp/bench_sgpr_torch.py, " +
			"which builds the same data)",
		Flags: gpBenchFlags(15),
		Action: func(c *cli.Context) error {
			if err := checkBenchSize(c); err != nil {
				return err
			}
			blasInfo := setupBLAS(c)
			p := gp.NewBenchProblem(c.Int("n"), c.Int("d"), c.Int("m"), c.Uint64("seed"))
			// No priors, so that the value matches the PyTorch script's bound.
			o, err := gp.NewObjective(p.X, p.Y, gp.Spec{Kernel: gp.RBF, Inducing: p.Inducing, NoPriors: true})
			if err != nil {
				return err
			}
			theta, err := o.Pack(p.Hyper, nil)
			if err != nil {
				return err
			}
			grad := make([]float64, len(theta))
			var bound float64
			times, err := bench.Repeat(c.Int("reps"), 2, func() error {
				bound, err = o.Eval(theta, grad)
				return err
			})
			if err != nil {
				return err
			}
			fmt.Printf("%s; N=%d M=%d d=%d, %d parameters, bound %.10g\n", blasInfo, c.Int("n"), c.Int("m"), c.Int("d"), len(theta), bound)
			fmt.Printf("sgpr_eval_ms %.1f\n", bench.Median(times))
			return nil
		},
	}
}

func benchBOStepCommand() *cli.Command {
	flags := append(gpBenchFlags(5),
		&cli.IntFlag{Name: "raw-samples", Value: 1024, Usage: "raw samples of the EI maximisation"},
		&cli.IntFlag{Name: "restarts", Value: 10, Usage: "restarts of the EI maximisation"},
		&cli.IntFlag{Name: "warm-iter", Usage: "L-BFGS iterations of the warm refit (0: gp's default)"},
		&cli.StringFlag{Name: "acq", Value: "ei", Usage: "ei or logei"},
		&cli.BoolFlag{Name: "sequential", Usage: "refine the restarts one after another (the path before lockstep batches)"},
	)
	return &cli.Command{
		Name: "bo-step",
		Usage: "time one BO step: a warm SGPR refit after one point is added, then one EI maximisation " +
			"(also reports a fit from scratch)",
		Flags: flags,
		Action: func(c *cli.Context) error {
			if err := checkBenchSize(c); err != nil {
				return err
			}
			kind, err := bo.ParseAcq(c.String("acq"))
			if err != nil {
				return err
			}
			blasInfo := setupBLAS(c)
			n, d, reps := c.Int("n"), c.Int("d"), c.Int("reps")
			p := gp.NewBenchProblem(n+reps, d, c.Int("m"), c.Uint64("seed"))
			st, err := gp.NewStandardizer(p.Y[:n])
			if err != nil {
				return err
			}
			y := st.Transform(p.Y)
			opts := gp.Options{Inducing: c.Int("m"), Seed: c.Uint64("seed")}
			start := time.Now()
			base, err := gp.Fit(mat.DenseCopyOf(p.X.Slice(0, n, 0, d)), y[:n], opts)
			if err != nil {
				return err
			}
			scratch := time.Since(start)
			bi := base.Info()
			fmt.Printf("%s; N=%d M=%d d=%d\n", blasInfo, n, c.Int("m"), d)
			fmt.Printf("fit from scratch: %.0f ms, %d evaluations, %d iterations, %s\n",
				ms(scratch), bi.Evaluations, bi.Iterations, bi.Status)
			lower, upper := make([]float64, d), make([]float64, d)
			for k := range upper {
				upper[k] = 1
			}
			var refits, eis, steps []time.Duration
			for r := 0; r < reps; r++ {
				x := mat.DenseCopyOf(p.X.Slice(0, n+1, 0, d))
				x.SetRow(n, p.X.RawRowView(n+r))
				yr := append(append([]float64(nil), y[:n]...), y[n+r])
				opts.Init, opts.MaxIter = base.WarmStart(), c.Int("warm-iter")
				t0 := time.Now()
				model, err := gp.Fit(x, yr, opts)
				if err != nil {
					return err
				}
				t1 := time.Now()
				f := acq.Acquisition{Model: model, Kind: kind, BestF: acq.QuantileBest(yr, 0.9)}
				res, err := acq.Maximize(f, lower, upper, acq.Options{
					RawSamples: c.Int("raw-samples"), Restarts: c.Int("restarts"), Seed: uint64(r), Sequential: c.Bool("sequential"),
				})
				if err != nil {
					return err
				}
				t2 := time.Now()
				refits, eis, steps = append(refits, t1.Sub(t0)), append(eis, t2.Sub(t1)), append(steps, t2.Sub(t0))
				fmt.Printf("step %d: warm refit %.0f ms (%d evaluations, %s), %s maximisation %.0f ms (%d evaluations, value %.4g)\n",
					r, ms(t1.Sub(t0)), model.Info().Evaluations, model.Info().Status, kind, ms(t2.Sub(t1)), res.Evaluations, res.Value)
			}
			fmt.Printf("warm_refit_ms %.1f acq_max_ms %.1f fit_scratch_ms %.1f\n", bench.Median(refits), bench.Median(eis), ms(scratch))
			fmt.Printf("bo_step_ms %.1f\n", bench.Median(steps))
			return nil
		},
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
