package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/runsummary"
)

// summarizeCommand writes each finished run's summary.json, and with
// --drop-latents compacts its results.npz for committing.
func summarizeCommand() *cli.Command {
	return &cli.Command{
		Name:      "summarize",
		Usage:     "write a finished run's summary.json (counts, best scores, CPU and wall time by stage) and compact it for committing",
		ArgsUsage: "RUN_DIR...",
		Description: "For each run directory writes RUN_DIR/summary.json (docs/run-directory.md has its fields): the queries,\n" +
			"known scores, distinct evaluations and initial oracle calls, the best after 100, 250, 500, 1,000 and\n" +
			"10,000 distinct evaluations and at the end (as plot counts them), the model versions, the CPU and\n" +
			"timed wall seconds of each stage as bench loop reports them, and the mean norm of the distinct\n" +
			"evaluations' latent points by block of 100. It reads config.json, results.npz (and initial.npz) and\n" +
			"the journal (journal.jsonl, else journal.jsonl.gz), and refuses a run whose journal and results.npz\n" +
			"disagree (a run still going). --drop-latents then rewrites results.npz without opt_latents, which\n" +
			"no table or figure reads (plot, analyze pmo and serve read the keys and scores), so that a committed\n" +
			"run keeps its summary, config.json and a small results.npz and its journal may go\n" +
			"(docs/experiment/collect.sh). Summarising a compacted run again keeps the latent norms of its\n" +
			"summary.json; it still needs the journal, which the CPU time comes from.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "drop-latents", Usage: "after writing summary.json, remove opt_latents from results.npz"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return fmt.Errorf("summarize: no run directory given")
			}
			for _, dir := range c.Args().Slice() {
				s, err := runsummary.Make(dir)
				if err != nil {
					return fmt.Errorf("summarize: %w", err)
				}
				if err := runsummary.Write(dir, s); err != nil {
					return fmt.Errorf("summarize: %w", err)
				}
				note := ""
				if c.Bool("drop-latents") {
					dropped, err := runsummary.DropLatents(dir)
					if err != nil {
						return fmt.Errorf("summarize: %w", err)
					}
					if dropped {
						note = "; latent points dropped from results.npz"
					}
				}
				fmt.Fprintf(c.App.Writer, "%s%s\n", s, note)
			}
			return nil
		},
	}
}
