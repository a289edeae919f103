package main

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
)

// benchEvaluatorsCommand measures how busy the loop keeps its evaluation
// workers, round by round and asynchronously.
func benchEvaluatorsCommand() *cli.Command {
	return &cli.Command{
		Name:  "evaluators",
		Usage: "busy fraction of N evaluation workers over a BO run of a toy problem whose evaluations sleep 1-10 s",
		Description: "Runs the BO loop (--repeats skip) on the synthetic toy problem of the loop's tests (latent\n" +
			"dimension 3) with an objective that sleeps a time drawn uniformly from [--min, --max] by the object,\n" +
			"--workers evaluators and rounds of as many proposals, first asynchronously (a new round as soon as\n" +
			"a worker is free), then round by round (the next round when the round's evaluations are all in),\n" +
			"and prints each policy's busy fraction: the evaluations' summed time over workers x the span from\n" +
			"the first evaluation's start to the last one's end (from the journal). Last line: the asynchronous\n" +
			"fraction as evaluators_busy_async.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "workers", Value: 8, Usage: "evaluation workers"},
			&cli.IntFlag{Name: "evaluations", Value: 200, Usage: "evaluations per policy"},
			&cli.DurationFlag{Name: "min", Value: time.Second, Usage: "shortest evaluation"},
			&cli.DurationFlag{Name: "max", Value: 10 * time.Second, Usage: "longest evaluation"},
		},
		Action: func(c *cli.Context) error {
			if c.Int("workers") < 1 || c.Int("evaluations") < 1 || c.Duration("min") < 0 || c.Duration("max") < c.Duration("min") {
				return fmt.Errorf("bench evaluators: --workers and --evaluations at least 1, 0 <= --min <= --max")
			}
			dir, err := os.MkdirTemp("", "tlbo-bench-evaluators-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			var async float64
			for _, policy := range []struct {
				name  string
				async bool
			}{{"asynchronous", true}, {"round-synchronous", false}} {
				u, err := botest.UtilisationRun(fmt.Sprintf("%s/%s", dir, policy.name), c.Int("workers"), c.Int("evaluations"),
					c.Duration("min"), c.Duration("max"), policy.async)
				if err != nil {
					return fmt.Errorf("bench evaluators (%s): %w", policy.name, err)
				}
				fmt.Printf("%s: %d evaluations, busy %.0f s of %d workers x %.0f s: %.1f%%\n", policy.name, u.Evaluations, u.Busy,
					c.Int("workers"), u.Span, 100*u.Fraction)
				if policy.async {
					async = u.Fraction
				}
			}
			fmt.Printf("evaluators_busy_async %.3f\n", async)
			return nil
		},
	}
}
