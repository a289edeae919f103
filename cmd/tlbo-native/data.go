package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/task/expression"
)

// dataCommand groups the data-set builders, one subcommand per task.
func dataCommand() *cli.Command {
	return &cli.Command{
		Name:  "data",
		Usage: "build a task's data set and training subset as .npz files",
		Subcommands: []*cli.Command{
			dataExpressionCommand(),
			dataTopologyCommand(),
		},
	}
}

func dataExpressionCommand() *cli.Command {
	return &cli.Command{
		Name:  "expression",
		Usage: "score the expression data set; write expression_full.npz and expression_subset.npz",
		Description: "Reads equation2_15_dataset.txt from --data-dir, $" + expression.DataEnv +
			", or shared/data above the working directory; else downloads it (sha256-checked) or, as a\n" +
			"last resort, generates expressions by sampling the grammar. The subset is the reference's:\n" +
			"the worst 35% of scores plus 5% of N drawn from the (3rd, 65th] percentile band.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "output directory", Required: true},
			&cli.StringFlag{Name: "data-dir", Usage: "data directory holding expression/" + expression.DataFileName},
			&cli.StringFlag{Name: "target", Value: expression.DefaultTarget, Usage: "target expression of x"},
			&cli.UintFlag{Name: "seed", Usage: "seed of the subset draw (the reference uses 0) and of generation"},
		},
		Action: func(c *cli.Context) error {
			seed := c.Uint("seed")
			if uint(uint32(seed)) != seed {
				return fmt.Errorf("--seed %d: must be below 2^32 (numpy's seed range)", seed)
			}
			start := time.Now()
			d, err := expression.Load(expression.LoadOptions{
				DataDir: c.String("data-dir"), Target: c.String("target"), Seed: uint64(seed), Log: os.Stderr,
			})
			if err != nil {
				return err
			}
			full, subset, err := expression.WriteDataNPZ(c.String("out"), d, uint32(seed))
			if err != nil {
				return err
			}
			fmt.Printf("source %s\n", d.Source)
			fmt.Printf("target %s\n", d.Target)
			fmt.Printf("expressions %d\n", len(d.Exprs))
			fmt.Printf("best_score %.6g\n", slices.Min(d.Scores))
			fmt.Printf("full %s\n", full)
			fmt.Printf("subset %s (%d points)\n", subset, len(expression.Subset(d.Scores, uint32(seed))))
			fmt.Printf("seconds %.2f\n", time.Since(start).Seconds())
			return nil
		},
	}
}
