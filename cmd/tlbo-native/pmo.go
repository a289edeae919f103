package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/analysis"
	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// pmoCommand prints the PMO benchmark's metrics of runs.
func pmoCommand() *cli.Command {
	return &cli.Command{
		Name:      "pmo",
		Usage:     "the PMO benchmark's metrics of runs: top-1, top-10 and top-100 AUC over the budget's oracle calls, and the top molecules",
		ArgsUsage: " ",
		Description: "Counts a run's distinct evaluations as oracle calls (a known score or an invalid decode is no call),\n" +
			"in the order they were made, up to --budget. Every 100 calls the mean of the k best scores so far is\n" +
			"recorded; auc_topk is the area under those records (trapezoids from 0 before the first call, the last\n" +
			"mean carried to the budget) divided by the budget, as mol_opt's top_auc (Gao et al., NeurIPS 2022).\n" +
			"Prints one line per run, the mean and sample standard deviation over the runs, and each run's --top\n" +
			"best objects. Runs must maximise their objective.",
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
	aucs := make(map[int][]float64)
	for _, r := range runs {
		var cols []string
		for _, k := range ks {
			cols = append(cols, fmt.Sprintf("auc_top%d %.4f", k, r.AUC[k]))
			aucs[k] = append(aucs[k], r.AUC[k])
		}
		fmt.Printf("%s  calls %d  %s\n", r.Dir, r.Calls, strings.Join(cols, "  "))
	}
	var cols []string
	for _, k := range ks {
		m, s := analysis.MeanStd(aucs[k])
		cols = append(cols, fmt.Sprintf("auc_top%d %.4f ± %.4f", k, m, s))
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
