package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bench"
	"github.com/tlbo-native/tlbo-native/torch"
)

// deviceFlag and threadsFlag are shared by the verbs that run networks.
var (
	deviceFlag  = &cli.StringFlag{Name: "device", Value: "auto", Usage: "auto, cpu, cuda or cuda:N"}
	threadsFlag = &cli.IntFlag{Name: "threads", Usage: "libtorch intra-op threads (0: libtorch's default)"}
)

// setupTorch applies the --device and --threads flags.
func setupTorch(c *cli.Context) (torch.Device, error) {
	if n := c.Int("threads"); n > 0 {
		if err := torch.SetNumThreads(n); err != nil {
			return torch.Device{}, err
		}
	}
	return torch.ParseDevice(c.String("device"))
}

func benchGVAEStepCommand() *cli.Command {
	return &cli.Command{
		Name:  "gvae-step",
		Usage: "time training steps of the expression grammar VAE through the trainer (twin: testdata/models/gvae_epoch_torch.py)",
		Flags: []cli.Flag{
			deviceFlag, threadsFlag,
			&cli.IntFlag{Name: "steps", Value: 50, Usage: "timed steps (after 3 warm-up steps)"},
			&cli.StringFlag{Name: "elbo", Value: "lbo", Usage: "training objective (lbo, t, ...)"},
			&cli.IntFlag{Name: "batch", Value: 256, Usage: "mini-batch size"},
			&cli.Uint64Flag{Name: "seed", Value: 0},
		},
		Action: func(c *cli.Context) error {
			dev, err := setupTorch(c)
			if err != nil {
				return err
			}
			times, err := bench.GVAEStep(bench.GVAEStepOptions{Device: dev, ELBO: c.String("elbo"), Steps: c.Int("steps"),
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
