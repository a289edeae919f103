package expression

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bench"
	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/models"
	gvae "github.com/tlbo-native/tlbo-native/models/expression"
	"github.com/tlbo-native/tlbo-native/torch"
)

// benchGVAEStepCommand is `bench gvae-step`, the expression task's
// benchmark.
func benchGVAEStepCommand() *cli.Command {
	return &cli.Command{
		Name:  "gvae-step",
		Usage: "time training steps of the expression grammar VAE through the trainer (twin: testdata/models/gvae_epoch_torch.py)",
		Description: "Times --steps training steps (forward, backward, clipping, Adam) on one batch of random\n" +
			"derivations of the grammar; the last line is gvae_step_ms <median>.",
		Flags: []cli.Flag{
			cliutil.DeviceFlag(), cliutil.ThreadsFlag(),
			&cli.IntFlag{Name: "steps", Value: 50, Usage: "timed steps (after 3 warm-up steps)"},
			&cli.StringFlag{Name: "elbo", Value: "lbo", Usage: "training objective (lbo, t, ...)"},
			&cli.IntFlag{Name: "batch", Value: 256, Usage: "mini-batch size"},
			&cli.Uint64Flag{Name: "seed", Value: 0},
		},
		Action: func(c *cli.Context) error {
			if err := cliutil.NoArgs(c); err != nil {
				return err
			}
			if c.Int("batch") < 1 {
				return fmt.Errorf("--batch %d: want at least 1", c.Int("batch"))
			}
			dev, err := cliutil.SetupTorch(c)
			if err != nil {
				return err
			}
			times, err := GVAEStep(GVAEStepOptions{Device: dev, ELBO: c.String("elbo"), Steps: c.Int("steps"),
				Seed: c.Uint64("seed"), Batch: c.Int("batch")})
			if err != nil {
				return err
			}
			fmt.Printf("device %s threads %d elbo %s batch %d steps %d\n", dev, torch.NumThreads(), c.String("elbo"), c.Int("batch"), len(times))
			fmt.Printf("gvae_step_ms %.3f\n", bench.Median(times))
			return nil
		},
	}
}

// GVAEStepOptions configure the grammar-VAE training-step benchmark.
type GVAEStepOptions struct {
	Device torch.Device
	// ELBO is "lbo" (the plain ELBO) or any other ELBO name, e.g. "t".
	ELBO  string
	Steps int // timed steps (after 3 warm-up steps)
	Seed  uint64
	// Batch is the mini-batch size (0: 256).
	Batch int
}

// gvaeTrainer returns the expression task's grammar VAE with a trainer as
// the twin script (testdata/models/gvae_epoch_torch.py) sets it up: KL
// weight 0.04, beta_metric 10, Adam 1e-3, gradient clipping 20.
func gvaeTrainer(opts GVAEStepOptions) (*gvae.Model, *models.Trainer[models.Dense], error) {
	elbo, err := models.ParseELBO(opts.ELBO)
	if err != nil {
		return nil, nil, err
	}
	elbo.MetricWeight = 10
	net, err := gvae.New(gvae.DefaultConfig(Grammar()))
	if err != nil {
		return nil, nil, err
	}
	tr, err := models.NewTrainer(net, models.TrainOptions{ELBO: elbo, Beta: models.FixedBeta(0.04), LR: 1e-3,
		BatchSize: opts.Batch, GradClip: models.DefaultGradClip, Device: opts.Device, Seed: opts.Seed})
	if err != nil {
		net.Close()
		return nil, nil, err
	}
	return net, tr, nil
}

// gvaeBatch returns n random derivations of the expression grammar as one-hot
// examples with labels distributed like the training subset's (two thirds at
// the failure score), as the twin script draws them.
func gvaeBatch(n int, seed uint64) ([]models.Dense, []float64, error) {
	rng := rand.New(rand.NewPCG(seed, 1))
	ex := make([]models.Dense, n)
	y := make([]float64, n)
	for i, text := range Generate(n, seed) {
		var err error
		if ex[i], err = Encode(text); err != nil {
			return nil, nil, err
		}
		y[i] = FailureScore
		if rng.Float64() >= 0.66 {
			y[i] = rng.Float64() * FailureScore
		}
	}
	return ex, y, nil
}

// GVAEStep times training steps (forward, backward, clipping, Adam) of the
// expression task's grammar VAE through models.Trainer on one batch of random
// derivations, and returns the duration of every timed step.
func GVAEStep(opts GVAEStepOptions) ([]time.Duration, error) {
	if opts.Steps < 1 {
		return nil, fmt.Errorf("bench gvae-step: steps must be at least 1, got %d", opts.Steps)
	}
	if opts.Batch == 0 {
		opts.Batch = 256
	}
	if opts.ELBO == "" {
		opts.ELBO = "lbo"
	}
	if err := torch.ManualSeed(opts.Seed); err != nil {
		return nil, err
	}
	net, tr, err := gvaeTrainer(opts)
	if err != nil {
		return nil, fmt.Errorf("bench gvae-step: %w", err)
	}
	defer net.Close()
	defer tr.Close()
	ex, y, err := gvaeBatch(opts.Batch, opts.Seed)
	if err != nil {
		return nil, fmt.Errorf("bench gvae-step: %w", err)
	}
	times, err := bench.Repeat(opts.Steps, 3, func() error {
		if _, err := tr.TrainBatch(ex, y); err != nil {
			return err
		}
		return torch.Synchronize()
	})
	if err != nil {
		return nil, fmt.Errorf("bench gvae-step: %w", err)
	}
	return times, nil
}
