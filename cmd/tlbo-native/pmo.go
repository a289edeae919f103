package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/analysis"
	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// pmoCommand prints the PMO benchmark's metrics of runs.
func pmoCommand() *cli.Command {
	return &cli.Command{
		Name:      "pmo",
		Usage:     "the PMO benchmark's metrics of runs: top-1, top-10 and top-100 AUC over the budget's oracle calls, the top-10 diversity and the top molecules",
		ArgsUsage: " ",
		Description: "Counts a run's distinct evaluations as oracle calls (a known score or an invalid decode is no call),\n" +
			"in the order they were made, up to --budget, after the run's initial calls when it has some (optimize\n" +
			"--initial: the starting molecules the objective scored for the run, RUN_DIR/" + bo.InitialFile + ", which PMO\n" +
			"charges to the budget). Every 100 calls the mean of the k best scores so far is recorded; auc_topk is\n" +
			"the area under those records (trapezoids from 0 before the first call, the last mean carried to the\n" +
			"budget) divided by the budget, as mol_opt's top_auc (Gao et al., NeurIPS 2022). diversity_top10 is the\n" +
			"task's diversity of the 10 best objects (molecules: TDC's, 1 - the mean pairwise Tanimoto similarity of\n" +
			"Morgan bit fingerprints, radius 2, 2048 bits), left out for a task without one. Prints one line per\n" +
			"run, the mean and sample standard deviation over the runs, and each run's --top best objects. Runs\n" +
			"must maximise their objective.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "run", Required: true, Usage: "run directory (optimize --run-dir); repeat for several"},
			&cli.IntFlag{Name: "budget", Value: 10000, Usage: "oracle calls the AUC is normalised by (PMO: 10,000)"},
			&cli.IntFlag{Name: "top", Value: 10, Usage: "best objects printed per run"},
		},
		Action: pmoAction,
	}
}

func pmoAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return fmt.Errorf("analyze pmo takes runs as --run DIR, not arguments (%q)", c.Args().First())
	}
	var curves []bo.Curve
	for _, dir := range c.StringSlice("run") {
		cv, err := bo.ReadCurve(dir)
		if err != nil {
			return fmt.Errorf("--run %s: %w", dir, err)
		}
		curves = append(curves, cv)
	}
	if err := bo.CheckAxis(curves); err != nil {
		return err
	}
	ks := []int{1, 10, 100}
	runs, err := analysis.PMO(curves, ks, c.Int("budget"), c.Int("top"))
	if err != nil {
		return err
	}
	div := diversities(curves, runs)
	aucs := make(map[int][]float64)
	var divs []float64
	for i, r := range runs {
		var cols []string
		for _, k := range ks {
			cols = append(cols, fmt.Sprintf("auc_top%d %.4f", k, r.AUC[k]))
			aucs[k] = append(aucs[k], r.AUC[k])
		}
		if div != nil {
			col := "diversity_top10 n/a (" + div[i].note + ")"
			if div[i].note == "" {
				col = fmt.Sprintf("diversity_top10 %.4f", div[i].value)
				divs = append(divs, div[i].value)
			}
			cols = append(cols, col)
		}
		calls := fmt.Sprintf("calls %d", r.Calls)
		if r.Initial > 0 {
			calls += fmt.Sprintf(" (%d initial)", r.Initial)
		}
		fmt.Printf("%s  %s  %s\n", r.Dir, calls, strings.Join(cols, "  "))
	}
	var cols []string
	for _, k := range ks {
		m, s := analysis.MeanStd(aucs[k])
		cols = append(cols, fmt.Sprintf("auc_top%d %.4f ± %.4f", k, m, s))
	}
	if len(divs) > 0 {
		m, s := analysis.MeanStd(divs)
		cols = append(cols, fmt.Sprintf("diversity_top10 %.4f ± %.4f", m, s))
	}
	fmt.Printf("mean of %d runs (budget %d)  %s\n", len(runs), c.Int("budget"), strings.Join(cols, "  "))
	for _, r := range runs {
		fmt.Printf("top %d of %s:\n", len(r.Top), r.Dir)
		for i, e := range r.Top {
			fmt.Printf("%3d  %.4f  %s\n", i+1, e.Score, e.Object)
		}
	}
	return nil
}

// diversity is a run's top-10 diversity, or why there is none.
type diversity struct {
	value float64
	note  string
}

// diversities returns the top-10 diversity of each run under the task of
// the runs' configuration (field "task"; CheckAxis made it one), nil when
// the task defines none (or the runs name no registered task).
func diversities(curves []bo.Curve, runs []analysis.PMORun) []diversity {
	if len(curves) == 0 {
		return nil
	}
	name, _ := curves[0].Field("task")
	t, err := task.Lookup(name)
	if err != nil {
		return nil
	}
	d, ok := t.(task.Diverse)
	if !ok {
		return nil
	}
	out := make([]diversity, len(runs))
	for i, r := range runs {
		var keys []string
		for _, e := range analysis.TopEvaluations(r.Evaluations, 10) {
			keys = append(keys, e.Object)
		}
		v, err := d.Diversity(keys)
		switch {
		case errors.Is(err, task.ErrNoDiversity):
			return nil
		case err != nil:
			out[i].note = err.Error()
		default:
			out[i].value = v
		}
	}
	return out
}
