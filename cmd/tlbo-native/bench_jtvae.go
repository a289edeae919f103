package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bench"
	"github.com/tlbo-native/tlbo-native/internal/task/molecule"
	"github.com/tlbo-native/tlbo-native/torch"
)

func benchJTVAEStepCommand() *cli.Command {
	return &cli.Command{
		Name: "jtvae-step",
		Usage: "time training steps of the JT-VAE on 32 ZINC molecules, split into its parts " +
			"(the authors' step on the same molecules: testdata/jtvae/compare.sh)",
		Flags: []cli.Flag{
			deviceFlag, threadsFlag,
			&cli.IntFlag{Name: "steps", Value: 5, Usage: "timed steps (after 2 warm-up steps)"},
			&cli.IntFlag{Name: "batch", Value: 32, Usage: "mini-batch size (the 32 molecules repeated where larger)"},
			&cli.IntFlag{Name: "hidden", Value: 450, Usage: "hidden size"},
			&cli.StringFlag{Name: "vocab", Usage: "cluster vocabulary (default: " + molecule.ShippedVocab + " in the data directory)"},
			&cli.StringFlag{Name: "data-dir", Usage: "data directory (default: $TLBO_DATA, then shared/data above the working directory)"},
			&cli.Uint64Flag{Name: "seed", Value: 0},
			&cli.StringFlag{Name: "profile", Usage: "write the timed steps' operators to `FILE` (Chrome trace) and print the costliest (slows the steps)"},
		},
		Action: func(c *cli.Context) error {
			dev, err := setupTorch(c)
			if err != nil {
				return err
			}
			path := c.String("vocab")
			if path == "" {
				if path, err = molecule.ShippedVocabPath(c.String("data-dir")); err != nil {
					return fmt.Errorf("bench jtvae-step: %w (or give --vocab)", err)
				}
			}
			vocab, err := molecule.ReadVocab(path)
			if err != nil {
				return err
			}
			steps, err := bench.JTVAEStep(bench.JTVAEStepOptions{Device: dev, Vocab: vocab, Hidden: c.Int("hidden"),
				Batch: c.Int("batch"), Steps: c.Int("steps"), Seed: c.Uint64("seed"), Profile: c.String("profile")})
			if err != nil {
				return err
			}
			if path := c.String("profile"); path != "" {
				if err := printProfile(path, len(steps), 25); err != nil {
					return err
				}
			}
			p, total := bench.MedianSplit(steps)
			fmt.Printf("device %s threads %d hidden %d vocabulary %d batch %d steps %d\n",
				dev, torch.NumThreads(), c.Int("hidden"), len(vocab), c.Int("batch"), len(steps))
			fmt.Printf("median ms: collate %.1f tree_encoder %.1f graph_encoder %.1f decoder %.1f assembly %.1f backward_adam %.1f\n",
				p.Collate, p.Tree, p.Graph, p.Decoder, p.Assembly, p.Backward)
			fmt.Printf("jtvae_step_ms %.1f\n", total)
			return nil
		},
	}
}

// printProfile prints the top operators of a trace by self time, per step.
func printProfile(path string, steps, top int) error {
	entries, err := torch.ReadProfile(path)
	if err != nil {
		return err
	}
	var all float64
	for _, e := range entries {
		all += e.Self
	}
	fmt.Printf("profile %s: operators by self time per step (profiled steps run slower)\n", path)
	fmt.Printf("%-44s %9s %9s %7s %6s\n", "operator", "self_ms", "total_ms", "calls", "self%")
	for _, e := range entries[:min(top, len(entries))] {
		n := float64(steps)
		fmt.Printf("%-44s %9.2f %9.2f %7.0f %5.1f%%\n", e.Name, e.Self/1e3/n, e.Total/1e3/n, float64(e.Calls)/n, 100*e.Self/all)
	}
	return nil
}
