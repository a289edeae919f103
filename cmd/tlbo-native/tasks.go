package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/task"
	_ "github.com/tlbo-native/tlbo-native/internal/task/all" // registers every task
	"github.com/tlbo-native/tlbo-native/models"
)

// Verbs whose flags depend on their task (train, optimize, encode, decode,
// checkpoint import, analyze) are parsed in two steps, so that each task's
// options are typed flags of its own and `train --task T --help` lists T's
// options only: the command found by urfave/cli takes its arguments as they
// are (SkipFlagParsing), finds the task (--task, or the network named by the
// header of --vae's checkpoint), builds the command for that task and runs
// it on the same arguments.

// taskVerb is a verb whose flags depend on its task.
type taskVerb struct {
	name, usage, description, argsUsage string
	// verb names the task options the verb takes.
	verb task.Verb
	// fromVAE lets the checkpoint of --vae name the task when --task is
	// not given; a --task that disagrees with the checkpoint is an error.
	fromVAE bool
	// optional allows running without a task (analyze on --latents).
	optional bool
	// flags returns the verb's own flags for task t (nil: without a task,
	// for help), the task's options excluded.
	flags func(t task.Task) []cli.Flag
	// action runs the verb (t is nil only when optional).
	action func(c *cli.Context, t task.Task) error
}

// taskVerbs are the verbs whose flags depend on their task, by name, for
// the tests that go through every flag of every command.
var taskVerbs = map[string]taskVerb{}

// command returns the verb's dispatching command.
func (v taskVerb) command() *cli.Command {
	taskVerbs[v.name] = v
	return &cli.Command{
		Name: v.name, Usage: v.usage, ArgsUsage: v.argsUsage, Description: v.description,
		SkipFlagParsing: true,
		HideHelp:        true,
		Action:          v.dispatch,
	}
}

// dispatch finds the task of the arguments and runs the task's command.
// Asked by the docs generator (verbOf), it hands over the verb instead.
func (v taskVerb) dispatch(c *cli.Context) error {
	if out, ok := c.Context.Value(verbRequest{}).(*taskVerb); ok {
		*out = v
		return nil
	}
	args := c.Args().Slice()
	name, vae := scanFlag(args, "task"), scanFlag(args, "vae")
	help := helpAsked(args)
	if dir := scanFlag(args, "run-dir"); name == "" && vae == "" && dir != "" && switchGiven(args, "resume") {
		// A resumed run's task is the one its kept flags name.
		kept, err := bo.ReadFlags(dir)
		if err != nil {
			return fmt.Errorf("--resume: %w", err)
		}
		if kept == nil && !help {
			// No run there, or one made before its flags were kept.
			if err := bo.CheckRunDir(bo.Options{Dir: dir, Resume: true}); err != nil {
				return err
			}
		}
		name, vae = kept["task"], kept["vae"]
	}
	var t task.Task
	var err error
	switch {
	case name != "":
		if t, err = task.Lookup(name); err != nil {
			return fmt.Errorf("--task: %w", err)
		}
		if vae != "" && v.fromVAE && !help {
			if err := task.CheckCheckpoint(t, vae); err != nil {
				return err
			}
		}
	case v.fromVAE && vae != "":
		if t, err = task.ForCheckpoint(vae); err != nil && !help {
			return fmt.Errorf("--vae: %w (or give --task)", err)
		}
	}
	if t == nil && !help && !v.optional {
		how := "--task T"
		if v.fromVAE {
			how += ", or --vae FILE.pt (whose header names the network, hence the task)"
		}
		return fmt.Errorf("%s: give %s; tasks: %s", strings.TrimPrefix(c.Command.HelpName, c.App.HelpName+" "), how,
			strings.Join(task.Names(), ", "))
	}
	cmd := v.build(t)
	// The sub-app prefixes its own name: "checkpoint import" for
	// "tlbo-native checkpoint import".
	cmd.HelpName = strings.TrimPrefix(c.Command.HelpName, c.App.HelpName+" ")
	app := &cli.App{Name: c.App.Name, HelpName: c.App.HelpName, Usage: c.App.Usage, Writer: c.App.Writer, ErrWriter: c.App.ErrWriter,
		HideHelpCommand: true, HideVersion: true, Commands: []*cli.Command{cmd}}
	return app.RunContext(c.Context, append([]string{c.App.Name, cmd.Name}, args...))
}

// build returns the verb's command for task t (nil: the verb's own flags
// only, and a note on how to see a task's options).
func (v taskVerb) build(t task.Task) *cli.Command {
	flags := v.flags(t)
	desc := v.description
	if t == nil {
		desc += "\n\nEach task adds its own options: " + v.name + " --task T --help lists them (tasks: " +
			strings.Join(task.Names(), ", ") + ")."
	} else {
		flags = append(flags, optionFlags(t, v.verb)...)
		desc += "\n\nTask " + t.Name() + ": " + t.Usage() + "."
	}
	cmd := &cli.Command{Name: v.name, Usage: v.usage, ArgsUsage: v.argsUsage, Description: desc, Flags: flags,
		Action: func(c *cli.Context) error { return v.action(c, t) }}
	cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error { return usageError(v.name, string(v.verb), t, err) }
	cliutil.WithRanges([]*cli.Command{cmd}, os.Stderr)
	return cmd
}

// scanFlag returns the value of --name (or -name) in args: "--name V" or
// "--name=V"; "" when absent. Scanning stops at "--".
func scanFlag(args []string, name string) string {
	for i, a := range args {
		if a == "--" {
			return ""
		}
		for _, p := range []string{"--" + name, "-" + name} {
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v
			}
		}
	}
	return ""
}

// switchGiven reports whether args turn the switch --name (or -name) on:
// "--name" or "--name=true". Scanning stops at "--".
func switchGiven(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, p := range []string{"--" + name, "-" + name} {
			if a == p || a == p+"=true" {
				return true
			}
		}
	}
	return false
}

// helpAsked reports whether args ask for help.
func helpAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "--help" || a == "-help" {
			return true
		}
	}
	return false
}

// invalidValue matches the standard flag package's error for a value its
// flag cannot parse, which names the flag with one dash.
var invalidValue = regexp.MustCompile(`^invalid value (".*") for flag -(\S+): (.*)$`)

// usageError rewrites a flag error of a verb of task t: an option of
// another task, or of another verb of t, is named as such.
func usageError(verbName, verb string, t task.Task, err error) error {
	if m := invalidValue.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s: --%s %s: %s", verbName, m[2], m[1], m[3])
	}
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return fmt.Errorf("%s: %w", verbName, err)
	}
	name = strings.TrimPrefix(name, "-")
	which := verbName
	if t != nil {
		which = fmt.Sprintf("%s for task %s", verbName, t.Name())
		for _, o := range t.Options() {
			if o.Name == name {
				var vs []string
				for _, v := range o.Verbs {
					vs = append(vs, string(v))
				}
				return fmt.Errorf("--%s is an option of task %s for %s, not for %s (%s --help lists the options)", name, t.Name(),
					strings.Join(vs, ", "), verb, verbName)
			}
		}
	}
	var owners []string
	for _, n := range task.Names() {
		other, _ := task.Lookup(n)
		if (t == nil || n != t.Name()) && slices.ContainsFunc(other.Options(), func(o task.Option) bool { return o.Name == name }) {
			owners = append(owners, n)
		}
	}
	if len(owners) > 0 {
		if t == nil {
			return fmt.Errorf("--%s is an option of task %s: give --task", name, strings.Join(owners, ", "))
		}
		return fmt.Errorf("--%s is an option of task %s, not of %s (%s --task %s --help lists its options)", name,
			strings.Join(owners, ", "), which, verbName, t.Name())
	}
	return fmt.Errorf("%s: no option --%s (--help lists the options)", which, name)
}

// taskFlag names the task of a verb (filled in by dispatch).
func taskFlag(t task.Task, fromVAE bool) cli.Flag {
	f := &cli.StringFlag{Name: "task", Usage: "task: " + strings.Join(task.Names(), ", ")}
	if t != nil {
		f.Value = t.Name()
	}
	if fromVAE {
		f.DefaultText = "the task of --vae's network"
	}
	return f
}

// dataFlags locate a task's data set.
func dataFlags() []cli.Flag {
	return []cli.Flag{
		cliutil.DataDirFlag(),
		&cli.BoolFlag{Name: "synthetic-data", Usage: "make up data when the data set is missing (recorded in a run's configuration)"},
	}
}

// optionFlags returns the typed flags of the options of t that verb takes,
// defaults shown.
func optionFlags(t task.Task, verb task.Verb) []cli.Flag {
	var flags []cli.Flag
	for _, o := range t.Options() {
		if o.For(verb) {
			flags = append(flags, optionFlag(o))
		}
	}
	return flags
}

// optionIntFlag is the flag of a task's integer option: its range is the
// option's (task.Option.Min, checked where taskEnv reads it), not
// cliutil's table of the command line's own flags.
type optionIntFlag struct{ cli.IntFlag }

// optionFlag is the flag of a task option.
func optionFlag(o task.Option) cli.Flag {
	switch o.Kind {
	case task.KindInt:
		return &optionIntFlag{cli.IntFlag{Name: o.Name, Value: o.Zero().(int), Usage: o.Usage}}
	case task.KindBool:
		return &cli.BoolFlag{Name: o.Name, Usage: o.Usage}
	case task.KindDuration:
		return &cli.DurationFlag{Name: o.Name, Value: o.Zero().(time.Duration), Usage: o.Usage}
	case task.KindFile:
		return &cli.StringFlag{Name: o.Name, Value: o.Zero().(string), Usage: o.Usage, TakesFile: true}
	}
	return &cli.StringFlag{Name: o.Name, Value: o.Zero().(string), Usage: o.Usage}
}

// taskEnv builds the environment of a verb for task t: the values of the
// task's options for the verb (checked: an existing file, an integer in
// range), and the data and seed flags that the verb has.
func taskEnv(c *cli.Context, t task.Task, verb task.Verb) (*task.Env, error) {
	env := &task.Env{Opts: task.Values{}, Stdout: os.Stdout, Stderr: os.Stderr}
	for _, o := range t.Options() {
		if !o.For(verb) {
			continue
		}
		var v any
		switch o.Kind {
		case task.KindInt:
			v = c.Int(o.Name)
		case task.KindBool:
			v = c.Bool(o.Name)
		case task.KindDuration:
			v = c.Duration(o.Name)
		default:
			v = c.String(o.Name)
		}
		if err := o.Check(v); err != nil {
			return nil, err
		}
		env.Opts[o.Name] = v
	}
	env.DataDir, env.Synthetic, env.Seed = c.String("data-dir"), c.Bool("synthetic-data"), c.Uint64("seed")
	return env, nil
}

// defaultUsage describes a setting's default, which the help shows as the
// flag's default: the task's when there is one ("10, the expression task's"),
// else every task's ("expression 10, molecule 1, topology 1").
func defaultUsage(t task.Task, get func(task.Defaults) string) string {
	if t != nil {
		return get(t.Defaults()) + ", the " + t.Name() + " task's"
	}
	var parts []string
	for _, name := range task.Names() {
		other, _ := task.Lookup(name)
		parts = append(parts, name+" "+get(other.Defaults()))
	}
	return strings.Join(parts, ", ")
}

// taskDefault returns the decorator of the flags whose default is task t's
// (every task's when t is nil): it sets the flag's default text from get.
func taskDefault(t task.Task) func(f cli.Flag, get func(task.Defaults) string) cli.Flag {
	return func(f cli.Flag, get func(task.Defaults) string) cli.Flag {
		return withDefaultText(f, defaultUsage(t, get))
	}
}

// withDefaultText makes text the default that f's help shows: a flag whose
// default depends on the task holds no value of its own (0 or ""), which
// the help would otherwise print as its default.
func withDefaultText(f cli.Flag, text string) cli.Flag {
	switch f := f.(type) {
	case *cli.IntFlag:
		f.DefaultText = text
	case *cli.Float64Flag:
		f.DefaultText = text
	case *cli.StringFlag:
		f.DefaultText = text
	case *cli.BoolFlag:
		f.DefaultText = text
	default:
		panic(fmt.Sprintf("withDefaultText: flag %T", f)) // a programming error, caught by TestHelpDefaults
	}
	return f
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// The default objectives: optimize runs T-LBO, train pretrains the plain
// VAE (LBO's), as the paper's protocol starts from it.
const (
	optimizeELBO = "t"
	trainELBO    = "lbo"
)

// elboFlags are the shared ELBO flags of train and optimize (the same
// names and meanings); elbo is the verb's default objective.
func elboFlags(t task.Task, elbo string) []cli.Flag {
	def := taskDefault(t)
	return []cli.Flag{
		&cli.StringFlag{Name: "elbo", Value: elbo, Usage: "objective: " + strings.Join(models.ELBONames(), ", ") + " (w is lbo's; optimize --elbo w is --elbo lbo --warp)"},
		def(&cli.Float64Flag{Name: "metric-weight", Usage: "beta_metric, the metric-loss weight"}, func(d task.Defaults) string { return fmtFloat(d.MetricWeight) }),
		def(&cli.Float64Flag{Name: "pred-weight", Usage: "beta_TP, the target-prediction weight"}, func(d task.Defaults) string { return fmtFloat(d.PredWeight) }),
		def(&cli.Float64Flag{Name: "eta", Usage: "metric-loss threshold between positives and negatives"}, func(d task.Defaults) string { return fmtFloat(d.Eta) }),
		def(&cli.Float64Flag{Name: "nu", Usage: "soft-triplet smoothing temperature, 0 for unset: w_p = w_n = 1"}, func(d task.Defaults) string { return fmtFloat(d.Nu) }),
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

// perTask returns one subcommand per registered task.
func perTask(build func(task.Task) *cli.Command) []*cli.Command {
	var cmds []*cli.Command
	for _, name := range task.Names() {
		t, _ := task.Lookup(name)
		cmds = append(cmds, build(t))
	}
	return cmds
}
