package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// benchLoopCommand prints where the time of BO runs went, from their
// journals.
func benchLoopCommand() *cli.Command {
	return &cli.Command{
		Name:      "loop",
		Usage:     "CPU time of runs by stage (retraining, encoding, featurisation on demand, GP fit, GP conditioning between acquisition steps, acquisition, decoding, evaluation), from their journals",
		ArgsUsage: "[more run directories]",
		Description: "For each run directory (finished or running; journal.jsonl, or journal.jsonl.gz when it has none, a torn\n" +
			"last line left out) prints its distinct evaluations, queries and CPU seconds, then by stage the wall\n" +
			"seconds the journal timed, the CPU seconds attributed to the stage, its share of the run's CPU time and its\n" +
			"CPU seconds per distinct evaluation, and a total line. Each journal line holds the CPU time since the\n" +
			"previous one (cpu_s); a line's CPU time is shared among the stages it timed in proportion to their wall\n" +
			"time (exact for a retraining's or an evaluation's line), and the CPU time of lines that time nothing\n" +
			"(stops, jobs) is other. Featurisation on demand (the molecule task's) is measured on its own threads and\n" +
			"listed as a stage of its own, taken off the retraining's and the encoding's lines first. The header says\n" +
			"how much CPU time exceeded the timed wall time of its lines (untimed work such as a resume's replay, or\n" +
			"stages on several threads) and was so shared.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "run-dir", Usage: "run directory (optimize --run-dir); repeat, or name more as arguments"},
			&cli.BoolFlag{Name: "json", Usage: "write the same as a JSON array, one object a run"},
		},
		Action: func(c *cli.Context) error {
			dirs := append(c.StringSlice("run-dir"), c.Args().Slice()...)
			if len(dirs) == 0 {
				return fmt.Errorf("bench loop: no run directory (--run-dir DIR [DIR...])")
			}
			costs := make([]bo.LoopCost, 0, len(dirs))
			for _, dir := range dirs {
				lc, err := bo.ReadLoopCost(dir)
				if err != nil {
					return fmt.Errorf("bench loop: %w", err)
				}
				costs = append(costs, lc)
			}
			w := c.App.Writer
			if c.Bool("json") {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(costs)
			}
			for i, lc := range costs {
				if i > 0 {
					fmt.Fprintln(w)
				}
				if err := writeLoopCost(w, lc); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// writeLoopCost writes one run's cost as a table.
func writeLoopCost(w io.Writer, lc bo.LoopCost) error {
	fmt.Fprintf(w, "%s: %d distinct evaluations, %d queries, %d model versions, %.1f CPU s (%.2f h)\n",
		lc.Journal, lc.Evaluations, lc.Queries, lc.Versions, lc.Total.CPU, lc.Total.CPU/3600)
	if lc.Torn != "" {
		fmt.Fprintf(w, "note: %s\n", lc.Torn)
	}
	if lc.CPULines == 0 {
		fmt.Fprintln(w, "note: the journal holds no CPU time (written before cpu_s was kept): CPU columns are 0")
	}
	if lc.CPULines > 0 {
		fmt.Fprintf(w, "CPU beyond the timed wall time of its lines: %.1f s (untimed work: start-up, a resume's replay, "+
			"bookkeeping; or stages on several threads), shared among their stages\n", lc.CPUBeyondWall)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\twall_s\tcpu_s\tcpu_share\tcpu_s/eval\t")
	for _, s := range append(lc.Stages, lc.Total) {
		per := "-"
		if s.PerEvaluation != nil {
			per = fmt.Sprintf("%.2f", *s.PerEvaluation)
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f%%\t%s\t\n", s.Stage, s.Seconds, s.CPU, 100*s.Share, per)
	}
	return tw.Flush()
}
