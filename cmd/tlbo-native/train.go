package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/tlbo-native/tlbo-native/internal/bo/adapters"
	"github.com/tlbo-native/tlbo-native/internal/task/expression"
	"github.com/tlbo-native/tlbo-native/models"
	gvae "github.com/tlbo-native/tlbo-native/models/expression"
	"github.com/tlbo-native/tlbo-native/models/weighting"
	"github.com/tlbo-native/tlbo-native/torch"
)

// trainCommand (pre)trains a task's VAE with a chosen ELBO.
func trainCommand() *cli.Command {
	b := models.ExpressionBeta()
	return &cli.Command{
		Name:  "train",
		Usage: "train a task's VAE with a chosen ELBO and write a checkpoint",
		Description: "Writes --out (a state dict that Python's torch.load reads), its configuration FILE.json\n" +
			"(network, sizes, grammar, ELBO, training state) and Adam's state FILE.adam.pt after every\n" +
			"epoch; --resume continues from them. The expression task trains on the reference's subset\n" +
			"(about 40,000 points), the first --val-fraction of it held out for validation. --elbo is one of\n" +
			strings.Join(models.ELBONames(), ", ") + " (w trains as lbo). Mini-batches are drawn with\n" +
			"replacement in proportion to rank weights with parameter --k (inf: uniform).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Value: "expression", Usage: "task (expression)"},
			&cli.StringFlag{Name: "elbo", Value: "lbo", Usage: "training objective: " + strings.Join(models.ELBONames(), ", ")},
			&cli.Float64Flag{Name: "metric-weight", Value: 10, Usage: "beta_metric, the metric-loss weight (the paper's 10 for expressions)"},
			&cli.Float64Flag{Name: "pred-weight", Value: 1, Usage: "beta_TP, the target-prediction weight"},
			&cli.Float64Flag{Name: "eta", Value: models.DefaultEta, Usage: "metric-loss threshold between positives and negatives"},
			&cli.Float64Flag{Name: "nu", Usage: "soft triplet temperature (0: unset, w_p = w_n = 1)"},
			&cli.Float64Flag{Name: "margin", Value: models.DefaultMargin, Usage: "hard triplet margin"},
			&cli.StringFlag{Name: "k", Value: "inf", Usage: "rank-weight k (inf: uniform weights)"},
			&cli.IntFlag{Name: "epochs", Value: 300, Usage: "epochs (in total, when resuming)"},
			&cli.IntFlag{Name: "batch-size", Value: 256},
			&cli.Float64Flag{Name: "lr", Value: 1e-3, Usage: "Adam learning rate"},
			&cli.Float64Flag{Name: "beta-init", Value: b.Init, Usage: "KL weight at the start"},
			&cli.Float64Flag{Name: "beta-final", Value: b.Final, Usage: "KL weight at the end of annealing"},
			&cli.IntFlag{Name: "beta-warmup", Value: b.Warmup, Usage: "steps before beta grows by 1.1 every 10 steps"},
			&cli.Float64Flag{Name: "grad-clip", Value: models.DefaultGradClip, Usage: "gradient-norm clipping (0: none)"},
			&cli.Float64Flag{Name: "labelled-fraction", Value: 1, Usage: "semi-supervised: share of training points keeping their label"},
			&cli.Float64Flag{Name: "val-fraction", Value: 0.05, Usage: "share of the data held out for validation"},
			&cli.StringFlag{Name: "data-dir", Usage: "data directory holding expression/" + expression.DataFileName},
			&cli.StringFlag{Name: "target", Value: expression.DefaultTarget, Usage: "expression task: target expression of x"},
			&cli.IntFlag{Name: "decode-attempts", Value: gvae.DefaultAttempts, Usage: "stochastic decodings per point in the final report"},
			&cli.IntFlag{Name: "prior-samples", Value: 1000, Usage: "prior samples decoded for the final validity (0: skip)"},
			&cli.Uint64Flag{Name: "seed", Usage: "seeds libtorch, the sampler and the labelled subset"},
			deviceFlag, threadsFlag,
			&cli.IntFlag{Name: "blas-threads", Value: 1, Usage: "OpenBLAS threads under libtorch's products (0: TLBO_BLAS_THREADS, else the core count); " +
				"1 keeps them from competing with libtorch's own threads"},
			&cli.StringFlag{Name: "out", Usage: "checkpoint FILE.pt", Required: true},
			&cli.BoolFlag{Name: "resume", Usage: "continue the training saved in --out"},
		},
		Action: trainAction,
	}
}

// trainSetup is what trainAction needs, read from the flags.
type trainSetup struct {
	opts   models.TrainOptions
	k      float64
	epochs int
	out    string
}

// trainOptions reads the ELBO, schedule and optimiser flags.
func trainOptions(c *cli.Context, dev torch.Device) (trainSetup, error) {
	elbo, err := models.ParseELBO(c.String("elbo"))
	if err != nil {
		return trainSetup{}, fmt.Errorf("--elbo: %w", err)
	}
	elbo.MetricWeight, elbo.PredWeight = c.Float64("metric-weight"), c.Float64("pred-weight")
	if elbo.Metric.Eta > 0 {
		elbo.Metric.Eta = c.Float64("eta")
	}
	if elbo.Metric.Kind == models.MetricTriplet {
		elbo.Metric.Nu = c.Float64("nu")
	}
	if elbo.Metric.Kind == models.MetricHardTriplet {
		elbo.Metric.Margin = c.Float64("margin")
	}
	k, err := strconv.ParseFloat(c.String("k"), 64)
	if err != nil || !(k > 0) {
		return trainSetup{}, fmt.Errorf("--k %q: want a positive number or inf", c.String("k"))
	}
	beta := models.ExpressionBeta()
	beta.Init, beta.Final, beta.Warmup = c.Float64("beta-init"), c.Float64("beta-final"), c.Int("beta-warmup")
	s := trainSetup{k: k, epochs: c.Int("epochs"), out: c.String("out"), opts: models.TrainOptions{
		ELBO: elbo, Beta: beta, LR: c.Float64("lr"), BatchSize: c.Int("batch-size"), GradClip: c.Float64("grad-clip"),
		Device: dev, Seed: c.Uint64("seed"),
	}}
	if err := s.opts.Validate(); err != nil {
		return trainSetup{}, err
	}
	if s.epochs < 1 {
		return trainSetup{}, fmt.Errorf("--epochs %d: want >= 1", s.epochs)
	}
	return s, nil
}

// expressionData loads the expression subset as one-hot matrices with their
// scores, splits off the validation set, masks labels for the semi-supervised
// setting and sets the rank weights of the training part.
func expressionData(c *cli.Context, k float64) (train, val models.Data, err error) {
	ds, err := expression.Load(expression.LoadOptions{DataDir: c.String("data-dir"), Target: c.String("target"), Log: os.Stderr})
	if err != nil {
		return train, val, err
	}
	sub := ds.Select(expression.Subset(ds.Scores, 0))
	x, err := sub.OneHot()
	if err != nil {
		return train, val, err
	}
	fmt.Fprintf(os.Stderr, "data: %s, subset of %d expressions, target %s\n", ds.Source, len(sub.Exprs), ds.Target)
	train, val, err = models.Data{X: x, Labels: sub.Scores}.Split(expression.MaxRules*expression.NumProductions, c.Float64("val-fraction"))
	if err != nil {
		return train, val, fmt.Errorf("--val-fraction: %w", err)
	}
	rng := rand.New(rand.NewPCG(c.Uint64("seed"), 0x6c6162656c))
	if train.Labels, err = models.KeepLabels(train.Labels, c.Float64("labelled-fraction"), rng); err != nil {
		return train, val, fmt.Errorf("--labelled-fraction: %w", err)
	}
	train.Weights, err = weighting.RankWeights(train.Labels, k, false) // lower scores are better
	return train, val, err
}

// newExpressionTrainer builds a fresh grammar VAE and its trainer, or resumes
// the checkpoint at --out.
func newExpressionTrainer(c *cli.Context, s trainSetup) (*gvae.Model, *models.Trainer, error) {
	if c.Bool("resume") {
		m, tr, err := gvae.LoadTrainer(s.out, s.opts.Device)
		if err != nil {
			return nil, nil, fmt.Errorf("--resume: %w", err)
		}
		if tr.Opts.ELBO.Name != s.opts.ELBO.Name {
			m.Close()
			return nil, nil, fmt.Errorf("--resume: %s was trained with ELBO %q, not %q", s.out, tr.Opts.ELBO.Name, s.opts.ELBO.Name)
		}
		return m, tr, nil
	}
	m, err := gvae.New(gvae.DefaultConfig(adapters.ExpressionGrammar()))
	if err != nil {
		return nil, nil, err
	}
	tr, err := models.NewTrainer(m, s.opts)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, tr, nil
}

func trainAction(c *cli.Context) error {
	if c.String("task") != "expression" {
		return fmt.Errorf("--task %q: only the expression task can be trained so far", c.String("task"))
	}
	dev, err := setupTorch(c)
	if err != nil {
		return err
	}
	blas := setupBLAS(c)
	s, err := trainOptions(c, dev)
	if err != nil {
		return err
	}
	if err := torch.ManualSeed(s.opts.Seed); err != nil {
		return err
	}
	train, val, err := expressionData(c, s.k)
	if err != nil {
		return err
	}
	m, tr, err := newExpressionTrainer(c, s)
	if err != nil {
		return err
	}
	defer m.Close()
	start, startEpoch := time.Now(), tr.Epoch
	fmt.Fprintf(os.Stderr, "training %s on %s (%d threads, %s): %d train, %d validation points, ELBO %s, from epoch %d\n",
		gvae.NetworkKind, dev, torch.NumThreads(), blas, train.Len(models.InputSize(m)), val.Len(models.InputSize(m)),
		tr.Opts.ELBO.Name, tr.Epoch)
	cpu0 := cpuSeconds()
	perEpoch, err := fitWithProgress(tr, train, val, s.epochs, func(r models.EpochReport) error {
		return gvae.SaveTrainer(s.out, m, tr, &r)
	})
	if err != nil {
		return err
	}
	if done := tr.Epoch - startEpoch; done > 0 {
		fmt.Printf("cpu_seconds_per_epoch %.2f (user+system, with validation and saving)\n", (cpuSeconds()-cpu0)/float64(done))
	}
	return reportTraining(c, m, val, perEpoch, time.Since(start), s.out)
}

// fitWithProgress runs the epochs left up to epochs with a progress bar per
// epoch (a line per epoch when stderr is not a terminal), calling save after
// each, and returns the mean seconds of training steps per epoch.
func fitWithProgress(tr *models.Trainer, train, val models.Data, epochs int, save func(models.EpochReport) error) (float64, error) {
	tty := term.IsTerminal(int(os.Stderr.Fd()))
	var bar *progressbar.ProgressBar
	var sum models.Losses
	onStep := func(i, n int, l models.Losses) {
		if !tty {
			return
		}
		if i == 1 {
			bar = progressbar.NewOptions(n, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionShowCount(),
				progressbar.OptionSetWidth(20), progressbar.OptionSetPredictTime(true), progressbar.OptionShowDescriptionAtLineEnd())
			sum = models.Losses{}
		}
		sum.Add(l, 1)
		bar.Describe(fmt.Sprintf("epoch %d/%d %s", tr.Epoch+1, epochs, sum.Scaled(1/float64(i))))
		bar.Set(i)
	}
	var total time.Duration
	done := 0
	err := tr.Fit(train, val, epochs-tr.Epoch, onStep, func(r models.EpochReport) error {
		if bar != nil {
			bar.Finish()
			fmt.Fprintln(os.Stderr)
		}
		line := fmt.Sprintf("epoch %d/%d %.1fs train %s", r.Epoch, epochs, r.Duration.Seconds(), r.Train)
		if r.Val != nil {
			line += " | val " + r.Val.String()
		}
		fmt.Fprintln(os.Stderr, line)
		total += r.TrainTime
		done++
		return save(r)
	})
	if done == 0 {
		return 0, err
	}
	return total.Seconds() / float64(done), err
}

// reportTraining prints the validation reconstruction accuracy, the validity
// of prior decodes, timings and peak memory, one "key value" per line.
func reportTraining(c *cli.Context, m *gvae.Model, val models.Data, perEpoch float64, wall time.Duration, out string) error {
	attempts := c.Int("decode-attempts")
	rng := rand.New(rand.NewPCG(c.Uint64("seed"), 0x7265706f7274))
	if len(val.X) > 0 {
		greedy, err := m.ReconstructionAccuracy(val.X, 0, nil)
		if err != nil {
			return err
		}
		sampled, err := m.ReconstructionAccuracy(val.X, attempts, rng)
		if err != nil {
			return err
		}
		fmt.Printf("val_reconstruction_greedy %.4f\n", greedy)
		fmt.Printf("val_reconstruction_sampled %.4f (%d attempts)\n", sampled, attempts)
	}
	if n := c.Int("prior-samples"); n > 0 {
		valid, distinct, err := m.PriorValidity(n, attempts, rng)
		if err != nil {
			return err
		}
		fmt.Printf("prior_validity %.4f (%d samples, %d distinct valid)\n", valid, n, distinct)
	}
	fmt.Printf("seconds_per_epoch %.2f (training steps, without validation)\n", perEpoch)
	fmt.Printf("wall_seconds %.1f\n", wall.Seconds())
	fmt.Printf("peak_rss_mb %.0f\n", peakRSSMB())
	fmt.Printf("checkpoint %s (+ %s, %s)\n", out, models.HeaderPath(out), models.AdamPath(out))
	return nil
}

// cpuSeconds returns the user and system CPU time of the process so far; on
// a shared machine it measures the work better than the wall clock.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// peakRSSMB returns the process's peak resident set size in MiB (Linux
// reports ru_maxrss in KiB).
func peakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) / 1024
}
