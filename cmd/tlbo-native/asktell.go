package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/manual"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// askKey carries ask's request through the optimize command it runs.
type askKey struct{}

// askCommand hands out objects of a manual run to be measured.
func askCommand() *cli.Command {
	return &cli.Command{
		Name:  "ask",
		Usage: "hand out N objects of a manual run (optimize --objective manual) to be measured: a CSV with their ids",
		Description: "Continues the run in --run-dir as optimize --resume would (with the flags it was set up with):\n" +
			"the results told since the last ask are journaled (the model is retrained once r of them are in), then\n" +
			"N objects are handed out: first the start's (--initial N) while it is measured, then the proposals\n" +
			"an earlier ask made but never wrote (it was killed), then new ones, chosen jointly (q a round) with\n" +
			"every pending one as a fantasy. No object already evaluated or pending is handed out. The CSV has\n" +
			"the columns id, object (a SMILES, an expression, or a topology design's .npy path), mean and sd (the\n" +
			"GP's predicted score) and acq (the acquisition value); for molecules --out also gets an SDF and a PNG\n" +
			"grid beside it. Fewer than N come out when the model version's r (or the budget) are all pending:\n" +
			"tell their results first. The run directory's lock keeps it from running with another ask or a tell.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run-dir", Usage: "the run directory", Required: true},
			&cli.IntFlag{Name: "n", Value: 1, Usage: "objects to hand out"},
			&cli.StringFlag{Name: "out", Usage: "write the CSV to this file (atomically) instead of standard output", TakesFile: true},
		},
		Action: func(c *cli.Context) error {
			if err := cliutil.NoArgs(c); err != nil {
				return err
			}
			dir := c.String("run-dir")
			if c.Int("n") < 1 {
				return fmt.Errorf("ask: -n %d: want at least 1", c.Int("n"))
			}
			if err := checkManualDir(dir); err != nil {
				return fmt.Errorf("ask: %w", err)
			}
			req := &task.ManualRequest{Ask: c.Int("n"), Out: c.String("out"), W: c.App.Writer}
			ctx := context.WithValue(c.Context, askKey{}, req)
			return c.App.RunContext(ctx, []string{c.App.Name, "optimize", "--run-dir", dir, "--resume"})
		},
	}
}

// checkManualDir refuses a directory that holds no manual run.
func checkManualDir(dir string) error {
	ok, err := manual.IsManual(dir)
	if err == nil && !ok {
		err = fmt.Errorf("%s holds no run set up with optimize --objective %s", dir, manual.Objective)
	}
	return err
}

// tellCommand records results of a manual run.
func tellCommand() *cli.Command {
	return &cli.Command{
		Name:      "tell",
		Usage:     "record measured results of a manual run from a CSV file (id, and score and/or error columns)",
		ArgsUsage: "FILE.csv",
		Description: "FILE.csv has a header row with a column id and a column score, error or both (other columns, such\n" +
			"as those of ask's CSV, are ignored), then a row per result: a finite score, or an error (the\n" +
			"evaluation failed: it gets the run's --failure-score, and the error is journaled as its reason). Any\n" +
			"subset of the pending ids, in any order. An id told again with the same result is a no-op; with\n" +
			"another it is refused, naming the id. An unknown id, a malformed row or a score that is not a finite\n" +
			"number refuses the whole file with its line and why, and nothing is recorded. The results are\n" +
			"written atomically into RUN_DIR/" + manual.ToldFile + "; the next ask journals them (and retrains when due).",
		Flags: []cli.Flag{&cli.StringFlag{Name: "run-dir", Usage: "the run directory", Required: true}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("tell: give one CSV file")
			}
			added, again, err := manual.TellFile(c.String("run-dir"), c.Args().First())
			if err != nil {
				if errors.Is(err, bo.ErrRunDirInUse) {
					return fmt.Errorf("tell: %w", err)
				}
				return fmt.Errorf("tell: %w; nothing was recorded", err)
			}
			fmt.Fprintf(c.App.Writer, "recorded %d new results (%d told before, unchanged); the next ask journals them\n", added, again)
			return nil
		},
	}
}

// statusCommand shows where a manual run stands.
func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show a manual run's pending ids with their age, its evaluations, its best and its model version",
		Flags: []cli.Flag{&cli.StringFlag{Name: "run-dir", Usage: "the run directory", Required: true}},
		Action: func(c *cli.Context) error {
			if err := cliutil.NoArgs(c); err != nil {
				return err
			}
			r, err := manual.Status(c.String("run-dir"))
			if err != nil {
				return fmt.Errorf("status: %w", err)
			}
			printStatus(c.App.Writer, r)
			return nil
		},
	}
}

// printStatus prints a manual run's report.
func printStatus(w io.Writer, r manual.Report) {
	version := "none yet (the first ask trains it)"
	if r.Version >= 0 {
		version = fmt.Sprintf("v%d", r.Version)
	}
	fmt.Fprintf(w, "model version %s; evaluations journaled %d of a budget of %d; results told %d\n", version, r.Journaled, r.Budget, r.Told)
	switch {
	case math.IsNaN(r.Best):
		fmt.Fprintln(w, "best: none yet")
	case r.BestID == 0:
		fmt.Fprintf(w, "best %.6g (the labelled data's)\n", r.Best)
	default:
		fmt.Fprintf(w, "best %.6g: id %d, %s\n", r.Best, r.BestID, r.BestObject)
	}
	fmt.Fprintf(w, "pending %d\n", len(r.Pending))
	for _, p := range r.Pending {
		state := "not handed out yet (the next ask hands it out first)"
		if !p.Handed.IsZero() {
			state = "handed out " + time.Since(p.Handed).Round(time.Second).String() + " ago"
		}
		if p.Told {
			state += ", told (the next ask journals it)"
		}
		fmt.Fprintf(w, "  id %d  %s%s  %s\n", p.ID, state, prediction(p), p.Object)
	}
}

// prediction formats the GP's predicted score of a pending proposal as ask
// wrote it; the start's objects have none.
func prediction(p manual.Pending) string {
	if p.Mean == nil || p.SD == nil {
		return ""
	}
	return fmt.Sprintf(", predicted %.6g ± %.3g", *p.Mean, *p.SD)
}

// manualCall returns what optimize does on a manual run: ask's request,
// or nil to set the run up.
func manualCall(c *cli.Context) *task.ManualRequest {
	req, _ := c.Context.Value(askKey{}).(*task.ManualRequest)
	return req
}

// keepSetUpFlags completes the flags that optimize --objective manual
// keeps (bo.FlagsFile) with the values, defaults included, of those that
// name the run: until the first ask writes config.json, status and the
// dashboard read the task, method, seed and budget there
// (manual.Status). The direction, when not given, is the objective's,
// which the task layer adds once it has made it (keepSetUpDirection). The
// network and the data directory given are kept as absolute
// paths: every ask takes them from there, in whatever directory a person
// runs it.
func keepSetUpFlags(c *cli.Context, t task.Task, cfg bo.Config, flags map[string]string) error {
	for name, v := range map[string]string{"task": t.Name(), "strategy": string(cfg.Strategy), "elbo": c.String("elbo"),
		"seed": strconv.FormatUint(cfg.Seed, 10), "budget": strconv.Itoa(cfg.Budget)} {
		if _, ok := flags[name]; !ok {
			flags[name] = v
		}
	}
	for _, name := range []string{"vae", "data-dir"} {
		path := c.String(name)
		if path == "" {
			continue
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return fmt.Errorf("--%s %s: %w", name, path, err)
		}
		flags[name] = abs
	}
	return nil
}

// printManual reports a call on a manual run.
func printManual(dir string, req *task.ManualRequest) {
	r := req.Result
	if r == nil {
		return
	}
	if req.Ask == 0 {
		fmt.Fprintf(os.Stderr, "set up the manual run in %s: hand out objects to measure with\n  tlbo-native ask --run-dir %s -n N --out batch.csv\n"+
			"and record their results with\n  tlbo-native tell --run-dir %s batch.csv  (with a column score, or error)\n", dir, dir, dir)
		return
	}
	where := "standard output"
	if req.Out != "" {
		where = req.Out
	}
	switch {
	case len(r.Handed) > 0:
		fmt.Fprintf(os.Stderr, "handed out %d objects (ids %d to %d) to %s", len(r.Handed), r.Handed[0].ID, r.Handed[len(r.Handed)-1].ID, where)
		if len(r.Files) > 1 {
			fmt.Fprintf(os.Stderr, " (and %s", filepath.Base(r.Files[1]))
			for _, f := range r.Files[2:] {
				fmt.Fprintf(os.Stderr, ", %s", filepath.Base(f))
			}
			fmt.Fprint(os.Stderr, ")")
		}
		fmt.Fprintln(os.Stderr)
	case r.Done:
		fmt.Fprintln(os.Stderr, "the run is complete: its budget is spent and every result is in")
	default:
		fmt.Fprintln(os.Stderr, "nothing new to hand out until results are told")
	}
	switch {
	case r.Start && len(r.Handed) < req.Ask:
		fmt.Fprintf(os.Stderr, "the labelled start is being measured (%d handed out before await their results): the run proposes "+
			"once all its results are told\n", r.Waiting)
	case len(r.Handed) < req.Ask && !r.Done && r.Waiting > 0:
		fmt.Fprintf(os.Stderr, "%d handed out before await their results (the model version's or the budget's evaluations are all "+
			"out); tell them to get more (status lists them)\n", r.Waiting)
	}
}
