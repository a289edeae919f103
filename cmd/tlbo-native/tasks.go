package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/task"
	_ "github.com/tlbo-native/tlbo-native/internal/task/all" // registers every task
	"github.com/tlbo-native/tlbo-native/models"
)

// taskFlag names the task of a verb.
func taskFlag() cli.Flag {
	return &cli.StringFlag{Name: "task", Required: true, Usage: "task: " + strings.Join(task.Names(), ", ")}
}

// dataFlags locate a task's data set.
func dataFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "data-dir", Usage: "data directory (default: $TLBO_DATA, then shared/data above the working directory)"},
		&cli.BoolFlag{Name: "synthetic-data", Usage: "make up data when the data set is missing (recorded in a run's configuration)"},
	}
}

// taskOptionFlags returns one flag per option of the registered tasks; each
// option applies to the tasks that declare it.
func taskOptionFlags() []cli.Flag {
	usage := map[string][]string{}
	var names []string
	for _, name := range task.Names() {
		t, _ := task.Lookup(name)
		for _, o := range t.Options() {
			if _, ok := usage[o.Name]; !ok {
				names = append(names, o.Name)
			}
			usage[o.Name] = append(usage[o.Name], fmt.Sprintf("%s task: %s (default %q)", name, o.Usage, o.Default))
		}
	}
	flags := make([]cli.Flag, len(names))
	for i, n := range names {
		flags[i] = &cli.StringFlag{Name: n, Usage: strings.Join(usage[n], "; ")}
	}
	return flags
}

// lookupTask returns the task of --task.
func lookupTask(c *cli.Context) (task.Task, error) {
	t, err := task.Lookup(c.String("task"))
	if err != nil {
		return nil, fmt.Errorf("--task: %w", err)
	}
	return t, nil
}

// taskEnv builds the environment of a verb for task t: its options (a
// flag the user set, else the task's default; an option of another task is
// refused), the data and seed flags that the verb has.
func taskEnv(c *cli.Context, t task.Task) (*task.Env, error) {
	env := &task.Env{Params: map[string]string{}, Stdout: os.Stdout, Stderr: os.Stderr}
	own := map[string]bool{}
	for _, o := range t.Options() {
		own[o.Name] = true
		env.Params[o.Name] = o.Default
		if c.IsSet(o.Name) {
			env.Params[o.Name] = c.String(o.Name)
		}
	}
	for _, f := range taskOptionFlags() {
		if name := f.Names()[0]; c.IsSet(name) && !own[name] {
			return nil, fmt.Errorf("--%s is not an option of task %s", name, t.Name())
		}
	}
	env.DataDir, env.Synthetic, env.Seed = c.String("data-dir"), c.Bool("synthetic-data"), c.Uint64("seed")
	return env, nil
}

// defaultsUsage describes a setting's per-task defaults for --help, e.g.
// "expression 10, topology 1".
func defaultsUsage(get func(task.Defaults) string) string {
	var parts []string
	for _, name := range task.Names() {
		t, _ := task.Lookup(name)
		parts = append(parts, name+" "+get(t.Defaults()))
	}
	return "default per task: " + strings.Join(parts, ", ")
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// The shared ELBO flags of train and optimize: the same names and meanings.
func elboFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "elbo", Usage: "objective: " + strings.Join(models.ELBONames(), ", ") + " (w is LBO with a warped GP)"},
		&cli.Float64Flag{Name: "metric-weight", Usage: "beta_metric, the metric-loss weight (" +
			defaultsUsage(func(d task.Defaults) string { return fmtFloat(d.MetricWeight) }) + ")"},
		&cli.Float64Flag{Name: "pred-weight", Usage: "beta_TP, the target-prediction weight (" +
			defaultsUsage(func(d task.Defaults) string { return fmtFloat(d.PredWeight) }) + ")"},
		&cli.Float64Flag{Name: "eta", Usage: "metric-loss threshold between positives and negatives (" +
			defaultsUsage(func(d task.Defaults) string { return fmtFloat(d.Eta) }) + ")"},
		&cli.Float64Flag{Name: "nu", Usage: "soft-triplet smoothing temperature, 0 for unset: w_p = w_n = 1 (" +
			defaultsUsage(func(d task.Defaults) string { return fmtFloat(d.Nu) }) + ")"},
		&cli.Float64Flag{Name: "margin", Value: models.DefaultMargin, Usage: "hard-triplet margin"},
	}
}

// elboFromFlags reads the shared ELBO flags, filling unset weights from the
// task's defaults; elbo is the --elbo value or the verb's default.
func elboFromFlags(c *cli.Context, t task.Task, elbo string) (models.ELBO, error) {
	e, err := models.ParseELBO(elbo)
	if err != nil {
		return e, fmt.Errorf("--elbo: %w", err)
	}
	d := t.Defaults()
	e.MetricWeight, e.PredWeight = floatOr(c, "metric-weight", d.MetricWeight), floatOr(c, "pred-weight", d.PredWeight)
	if e.Metric.Eta > 0 {
		e.Metric.Eta = floatOr(c, "eta", d.Eta)
	}
	if c.IsSet("nu") {
		if e.Metric.Kind != models.MetricTriplet {
			return e, fmt.Errorf("--nu: only the soft triplet ELBO (t) has a temperature, not %q", e.Name)
		}
		e.Metric.Nu = c.Float64("nu")
	} else if e.Metric.Kind == models.MetricTriplet {
		e.Metric.Nu = d.Nu
	}
	if c.IsSet("margin") && e.Metric.Kind != models.MetricHardTriplet {
		return e, fmt.Errorf("--margin: only the hard triplet ELBO (t-hard) has a margin, not %q", e.Name)
	}
	if e.Metric.Kind == models.MetricHardTriplet {
		e.Metric.Margin = c.Float64("margin")
	}
	return e, e.Validate()
}

// floatOr returns the flag's value when the user set it, else def.
func floatOr(c *cli.Context, name string, def float64) float64 {
	if c.IsSet(name) {
		return c.Float64(name)
	}
	return def
}

// intOr returns the flag's value when the user set it, else def.
func intOr(c *cli.Context, name string, def int) int {
	if c.IsSet(name) {
		return c.Int(name)
	}
	return def
}

// parseK reads a rank-weight k flag ("inf" for uniform weights), def when
// the user did not set it.
func parseK(c *cli.Context, name string, def float64) (float64, error) {
	if !c.IsSet(name) {
		return def, nil
	}
	k, err := strconv.ParseFloat(c.String(name), 64)
	if err != nil || !(k > 0) {
		return 0, fmt.Errorf("--%s %q: want a positive number or inf", name, c.String(name))
	}
	return k, nil
}
