package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/gp"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// optimizeCommand runs T-LBO (Algorithm 1) on a task.
func optimizeCommand() *cli.Command {
	return taskVerb{
		name:  "optimize",
		usage: "Bayesian optimisation in the latent space of a pretrained VAE, retrained every r queries (T-LBO)",
		description: "Everything of a run lives in --run-dir: config.json, journal.jsonl (one line per query,\n" +
			"flushed before the next), results.npz, the model versions model-v<N>/ and best.png; a second\n" +
			"process on the same --run-dir fails at once, naming the holder's pid. --resume continues a killed\n" +
			"run where it stopped, with the flags it was started with (flags.json): a flag left out takes the\n" +
			"run's value, --budget extends or ends it, and another value of a setting of the run's configuration\n" +
			"is refused, naming both. The task is that of --vae's network\n" +
			"unless --task says it (a --task that disagrees is refused); a molecule checkpoint featurises with\n" +
			"its own vocabulary. --elbo picks the retraining objective (default t); --warp learns a Kumaraswamy\n" +
			"input warping with the GP, and --elbo w (W-LBO) is --elbo lbo --warp: the same run, whose config.json\n" +
			"says elbo w and warp true either way. --strategy random draws uniformly from the box of the\n" +
			"encoded data instead of maximising EI (prior: from N(0, I)); a run made before\n" +
			"--restart-selection existed resumes with --strategy prior (if it was random), --restart-selection\n" +
			"best --novelty-redo 0 --perturb-tries 100 --restarts 10 (the error names each difference). Flags\n" +
			"left unset take the task's defaults, and the loop's own defaults are the same for every task\n" +
			"(docs/design.md lists both).",
		verb:    task.VerbOptimize,
		fromVAE: true,
		flags:   optimizeFlags,
		action:  optimizeAction,
	}.command()
}

// optimizeFlags are optimize's own flags, defaults shown for task t (nil:
// per task).
func optimizeFlags(t task.Task) []cli.Flag {
	d := bo.DefaultConfig()
	def := taskDefault(t)
	flags := []cli.Flag{taskFlag(t, true),
		// Not Required: on --resume the run's own is taken (resumeFlags).
		&cli.StringFlag{Name: "vae", Usage: "pretrained VAE checkpoint (.pt with its .json header; required, but on --resume the run's)",
			TakesFile: true}}
	flags = append(flags, elboFlags(t, optimizeELBO)...)
	flags = append(flags,
		&cli.StringFlag{Name: "strategy", Value: string(d.Strategy), Usage: "bo, random (uniform in the encoded data's box) or prior (samples of N(0, I))"},
		def(&cli.IntFlag{Name: "budget", Usage: "evaluations B"}, func(d task.Defaults) string { return fmt.Sprint(d.Budget) }),
		def(&cli.IntFlag{Name: "retrain-every", Usage: "queries between retrainings r"}, func(d task.Defaults) string { return fmt.Sprint(d.RetrainEvery) }),
		def(&cli.StringFlag{Name: "k", Usage: "rank-weight k, inf for uniform weights"}, func(d task.Defaults) string { return fmtFloat(d.RankK) }),
		def(&cli.Float64Flag{Name: "initial-retrain-epochs", Usage: "retraining before the first query"}, func(d task.Defaults) string { return fmtFloat(d.InitialRetrainEpochs) }),
		def(&cli.Float64Flag{Name: "retrain-epochs", Usage: "retraining every r queries"}, func(d task.Defaults) string { return fmtFloat(d.RetrainEpochs) }),
		def(&cli.IntFlag{Name: "retrain-batch-size", Usage: "retraining mini-batch size"}, func(d task.Defaults) string { return fmt.Sprint(d.RetrainBatchSize) }),
		def(&cli.Float64Flag{Name: "retrain-grad-clip", Usage: "retraining gradient-norm clipping, 0 for none"}, func(d task.Defaults) string { return fmtFloat(d.RetrainGradClip) }),
		&cli.StringFlag{Name: "acq", Value: d.Acq.String(), Usage: "ei or logei"},
		def(&cli.IntFlag{Name: "n-best", Usage: "best points of the GP's training set"}, func(d task.Defaults) string { return fmt.Sprint(d.NBest) }),
		def(&cli.IntFlag{Name: "n-rand", Usage: "random points of the GP's training set"}, func(d task.Defaults) string { return fmt.Sprint(d.NRand) }),
		def(&cli.IntFlag{Name: "inducing", Usage: "inducing points, 0 for an exact GP"}, func(d task.Defaults) string { return fmt.Sprint(d.Inducing) }),
		&cli.StringFlag{Name: "kernel", Value: d.Kernel.String(), Usage: "rbf or matern52"},
		&cli.BoolFlag{Name: "warp", Usage: "learn a Kumaraswamy input warping with the GP (W-LBO is --elbo lbo --warp, alias --elbo w)"},
		&cli.StringFlag{Name: "gp-objective", Value: string(d.GPObjective), Usage: "sparse GP training objective: titsias or fitc"},
		&cli.StringFlag{Name: "gp-refit", Value: string(d.GPRefit), Usage: "when the GP's hyperparameters and inducing points are fitted: " +
			"every query or round (every, the authors'), or after each retraining and then every N evaluations (N) or when the new points' " +
			"predictive residuals say the fit is stale (auto), the posterior conditioned exactly on each point in between; " +
			"auto is the default since its ablation (docs/experiment section 2e); every is the authors' schedule, for fidelity runs"},
		&cli.IntFlag{Name: "gp-iters", Usage: fmt.Sprintf("L-BFGS iterations of a GP fit from scratch (each model version's first fit; "+
			"the warm refits after it take %d; %d since its ablation, docs/experiment section 2g)", gp.DefaultWarmIter, bo.CappedGPIters),
			DefaultText: fmt.Sprintf("%d, or %d (the authors') with --gp-refit every; on --resume the run's own, %d for a run made before the setting",
				bo.CappedGPIters, gp.DefaultMaxIter, gp.DefaultMaxIter)},
		&cli.StringFlag{Name: "gp-inducing", Usage: "between fits (--gp-refit auto or N): keep the fit's inducing points (fixed), " +
			"or make each new point that they leave unexplained an inducing point as it joins the posterior (grow: no variance floor at observed points; " +
			"Titsias objective only; the default since its ablation, docs/experiment section 2f)",
			DefaultText: "grow, or fixed with --gp-refit every or --gp-objective fitc; on --resume the run's own, fixed for a run made before the setting"},
		&cli.Float64Flag{Name: "best-quantile", Value: d.BestQuantile, Usage: "EI incumbent: quantile of the targets"},
		&cli.Float64Flag{Name: "tau", Usage: "stop an inner loop when the maximal EI is below tau (0: never)"},
		&cli.IntFlag{Name: "raw-samples", Value: d.RawSamples, Usage: "acquisition: random points scored"},
		&cli.IntFlag{Name: "restarts", Value: d.Restarts, Usage: "acquisition: raw samples refined by L-BFGS-B"},
		&cli.StringFlag{Name: "restart-selection", Value: string(d.RestartSelection), Usage: "acquisition: restarts picked by boltzmann sampling or the best raw samples"},
		&cli.IntFlag{Name: "warm-starts", Usage: "acquisition: after a round's first step, refine restarts minus this many fresh restarts and up to this many of the previous step's best distinct restart ends (--repeats skip; 0: none)",
			DefaultText: "restarts - max(1, restarts/10), 90 of 100, with --strategy bo --repeats skip, else 0; on --resume the run's own, 0 for a run made before this default"},
		&cli.StringFlag{Name: "repeats", Value: string(d.Repeats), Usage: "skip: never evaluate an object whose score is known (the budget counts distinct evaluations); " +
			"authors: the authors' novelty check (perturb, redo, then evaluate the duplicate)"},
		&cli.IntFlag{Name: "q", Value: d.Q, Usage: "proposals per round, chosen jointly (kriging believer) and evaluated concurrently (--repeats skip)"},
		&cli.IntFlag{Name: "repeat-tries", Value: d.RepeatTries, Usage: "acquisition steps of a proposal that may end in a known object or an invalid decode before the ball fallback (--repeats skip)"},
		&cli.IntFlag{Name: "evaluators", Usage: "evaluations run at once (0: q); with --async a new round is proposed as soon as one is free"},
		&cli.BoolFlag{Name: "async", Usage: "asynchronous rounds: propose as many objects as there are free evaluators as soon as one is free, " +
			"the running evaluations conditioning the GP as fantasies (--repeats skip)"},
		&cli.BoolFlag{Name: "trust-region", Usage: "restrict the acquisition to a TuRBO trust region around the incumbent, as LOL-BO (--repeats skip)"},
		&cli.Float64Flag{Name: "tr-init", Value: d.TR.Init, Usage: "trust region: initial side length in the normalised latent box"},
		&cli.Float64Flag{Name: "tr-min", Value: d.TR.Min, Usage: "trust region: restart below this length"},
		&cli.Float64Flag{Name: "tr-max", Value: d.TR.Max, Usage: "trust region: largest length"},
		&cli.IntFlag{Name: "tr-successes", Value: d.TR.Successes, Usage: "trust region: rounds in a row improving the best before the length doubles"},
		&cli.IntFlag{Name: "tr-failures", Usage: "trust region: rounds in a row not improving before the length halves (0: ceil(max(4, d) / q))"},
		&cli.IntFlag{Name: "perturb-tries", Value: d.PerturbTries, Usage: "novelty check of --repeats authors: perturbations of a duplicate's latent point"},
		&cli.IntFlag{Name: "novelty-redo", Value: d.NoveltyRedo, Usage: "novelty check of --repeats authors: acquisition steps redone away from the points tried"},
		&cli.IntFlag{Name: "samples-per-model", Usage: "prior samples decoded and scored per model version"},
		&cli.Float64Flag{Name: "labelled-fraction", Usage: "semi-supervised: start from this fraction of the labelled data"},
		&cli.IntFlag{Name: "decode-attempts", Usage: "stochastic decodings per point (0: the network's default)"},
		&cli.Uint64Flag{Name: "seed", Usage: "seed of every random choice of the run"},
		cliutil.DeviceFlag(), cliutil.ThreadsFlag(),
		&cli.StringFlag{Name: "run-dir", Usage: "run directory", Required: true},
		&cli.BoolFlag{Name: "resume", Usage: "continue the run in --run-dir"},
		&cli.IntFlag{Name: "top", Value: 5, Usage: "best objects printed and drawn at the end"},
	)
	return append(flags, dataFlags()...)
}

// optimizeConfig reads the loop's configuration from the flags: unset ones
// from the task's defaults (task.Defaults.Config), the loop's own from
// bo.DefaultConfig through the flags' values.
func optimizeConfig(c *cli.Context, t task.Task, warp bool) (bo.Config, error) {
	td := t.Defaults()
	cfg := td.Config()
	k, err := parseK(c, "k", cfg.RankK)
	if err != nil {
		return cfg, err
	}
	if cfg.Strategy, err = bo.ParseStrategy(c.String("strategy")); err != nil {
		return cfg, err
	}
	if cfg.Acq, err = bo.ParseAcq(c.String("acq")); err != nil {
		return cfg, err
	}
	if cfg.Kernel, err = bo.ParseKernel(c.String("kernel")); err != nil {
		return cfg, err
	}
	if cfg.GPObjective, err = bo.ParseGPObjective(c.String("gp-objective")); err != nil {
		return cfg, err
	}
	if cfg.GPRefit, err = bo.ParseGPRefit(c.String("gp-refit")); err != nil {
		return cfg, err
	}
	cfg.GPInducing = cfg.DefaultGPInducing()
	if c.IsSet("gp-inducing") {
		if cfg.GPInducing, err = bo.ParseGPInducing(c.String("gp-inducing")); err != nil {
			return cfg, err
		}
	}
	if cfg.RestartSelection, err = bo.ParseRestartSelection(c.String("restart-selection")); err != nil {
		return cfg, err
	}
	if cfg.Repeats, err = bo.ParseRepeats(c.String("repeats")); err != nil {
		return cfg, err
	}
	cfg.Budget, cfg.RetrainEvery, cfg.RankK = intOr(c, "budget", cfg.Budget), intOr(c, "retrain-every", cfg.RetrainEvery), k
	cfg.InitialRetrainEpochs = floatOr(c, "initial-retrain-epochs", cfg.InitialRetrainEpochs)
	cfg.RetrainEpochs = floatOr(c, "retrain-epochs", cfg.RetrainEpochs)
	cfg.NBest, cfg.NRand, cfg.Inducing = intOr(c, "n-best", cfg.NBest), intOr(c, "n-rand", cfg.NRand), intOr(c, "inducing", cfg.Inducing)
	// gp-iters and warm-starts: set when given, kept by the run, or recorded
	// (recordedDefaults); else the default for the settings above.
	cfg.Warp, cfg.BestQuantile, cfg.GPIters = warp, c.Float64("best-quantile"), intOr(c, "gp-iters", cfg.DefaultGPIters())
	cfg.Tau, cfg.RawSamples, cfg.Restarts = c.Float64("tau"), c.Int("raw-samples"), c.Int("restarts")
	cfg.WarmStarts = intOr(c, "warm-starts", cfg.DefaultWarmStarts())
	cfg.PerturbTries, cfg.NoveltyRedo = c.Int("perturb-tries"), c.Int("novelty-redo")
	cfg.Q, cfg.RepeatTries, cfg.TrustRegion = c.Int("q"), c.Int("repeat-tries"), c.Bool("trust-region")
	cfg.Evaluators, cfg.Async = c.Int("evaluators"), c.Bool("async")
	cfg.TR = bo.TrustRegionConfig{Init: c.Float64("tr-init"), Min: c.Float64("tr-min"), Max: c.Float64("tr-max"),
		Successes: c.Int("tr-successes"), Failures: c.Int("tr-failures")}
	cfg.SamplesPerModel, cfg.LabelledFraction, cfg.Seed = c.Int("samples-per-model"), c.Float64("labelled-fraction"), c.Uint64("seed")
	return cfg, cfg.Validate()
}

func optimizeAction(c *cli.Context, t task.Task) error {
	if err := cliutil.NoArgs(c); err != nil {
		return err
	}
	dir := c.String("run-dir")
	flags, err := resumeFlags(c, dir)
	if err != nil {
		return err
	}
	if c.String("vae") == "" {
		return fmt.Errorf("optimize: --vae is required (on --resume, the run's own: %s keeps it)", filepath.Join(dir, bo.FlagsFile))
	}
	name, warp, err := warpAlias(c)
	if err != nil {
		return err
	}
	elbo, err := elboFromFlags(c, t, name)
	if err != nil {
		return err
	}
	cfg, err := optimizeConfig(c, t, warp)
	if err != nil {
		return err
	}
	dev, err := cliutil.SetupTorch(c)
	if err != nil {
		return err
	}
	env, err := taskEnv(c, t, task.VerbOptimize)
	if err != nil {
		return err
	}
	env.Device = dev
	ctx, stopWatch := stopOnSignal(c.Context)
	defer stopWatch()
	env.Ctx = ctx
	td := t.Defaults()
	rep := newReporter(cfg.Budget)
	var manualReq *task.ManualRequest
	if task.IsManual(env) {
		if manualReq = manualCall(c); manualReq == nil {
			manualReq = &task.ManualRequest{} // optimize sets the run up
			if err := keepSetUpFlags(c, t, cfg, flags); err != nil {
				return err
			}
		}
	}
	res, err := t.Optimize(env, task.OptimizeRequest{
		Model: task.ModelRequest{Path: c.String("vae"), ELBO: elbo, LR: td.LR,
			BatchSize: intOr(c, "retrain-batch-size", td.RetrainBatchSize), GradClip: floatOr(c, "retrain-grad-clip", td.RetrainGradClip),
			Decode: task.DecodeOptions{Attempts: c.Int("decode-attempts")}},
		Config:  cfg,
		Options: bo.Options{Dir: dir, Resume: c.Bool("resume"), Progress: rep.progress, Logf: rep.logf, Flags: flags},
		Top:     c.Int("top"),
		Manual:  manualReq,
	})
	rep.finish()
	if task.IsManual(env) && err == nil {
		printManual(dir, manualReq)
		return nil
	}
	if err != nil {
		if res != nil && len(res.Queries) > 0 {
			fmt.Fprintf(os.Stderr, "%d queries are in %s; rerun with --resume to continue\n", len(res.Queries), dir)
		}
		return err
	}
	return printSummary(c, dir, t.Name(), cfg, res)
}

// warpAlias reads --elbo and --warp: --elbo w, W-LBO's name, is --elbo lbo
// --warp (the warping is the GP's, a setting of the loop). It returns the
// retraining objective's name and whether the GP is warped.
func warpAlias(c *cli.Context) (elbo string, warp bool, err error) {
	elbo, warp = c.String("elbo"), c.Bool("warp")
	if !strings.EqualFold(elbo, "w") {
		return elbo, warp, nil
	}
	if c.IsSet("warp") && !warp {
		return "", false, fmt.Errorf("--elbo w is --elbo lbo --warp: it cannot be given with --warp=false")
	}
	return "lbo", true, nil
}

// notKept are the flags a run does not keep for its resumes: where it is
// and whether to resume it.
var notKept = map[string]bool{"run-dir": true, "resume": true, "help": true}

// resumeFlags returns the flags the user gave, to keep with the run
// (bo.Options.Flags). On --resume, the flags left out first take the
// values the run keeps (bo.FlagsFile), as train --resume takes a
// checkpoint's settings, and are kept again; a flag given with another
// value than the run's is taken as given: bo.Run refuses it, naming both
// values, when it changes the run's configuration (--budget may: it extends
// or ends the run), and side settings (--threads, --top) simply change.
// The settings whose default has changed that are still left out then take
// the run's recorded values (recordedDefaults).
func resumeFlags(c *cli.Context, dir string) (map[string]string, error) {
	given := map[string]string{}
	defined := map[string]bool{}
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		defined[name] = true
		if notKept[name] || !c.IsSet(name) {
			continue
		}
		switch v := c.Value(name).(type) {
		case cli.StringSlice, []string:
			// None of optimize's flags is a list; a task's might be.
		default:
			given[name] = fmt.Sprint(v)
		}
	}
	if !c.Bool("resume") {
		return given, nil
	}
	kept, err := bo.ReadFlags(dir)
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	if kept == nil {
		fmt.Fprintf(os.Stderr, "note: %s keeps no %s (a run made before its flags were kept): the run takes the flags given now, "+
			"and keeps them for its next resume\n", dir, bo.FlagsFile)
	}
	for _, name := range slices.Sorted(maps.Keys(kept)) {
		if _, ok := given[name]; ok || notKept[name] {
			continue
		}
		if !defined[name] {
			fmt.Fprintf(os.Stderr, "note: %s keeps --%s %s, which optimize no longer has: left out\n",
				filepath.Join(dir, bo.FlagsFile), name, kept[name])
			continue
		}
		if err := c.Set(name, kept[name]); err != nil {
			return nil, fmt.Errorf("--resume: the run's --%s %s (%s): %w", name, kept[name], filepath.Join(dir, bo.FlagsFile), err)
		}
		given[name] = kept[name]
	}
	if err := recordedDefaults(c, dir, given, defined); err != nil {
		return nil, err
	}
	return given, nil
}

// recordedDefaults sets, on --resume, the settings whose default has
// changed (bo.RecordedDefaults: --gp-refit, --repeats, --warm-starts, ...) that neither
// the command line nor the run's kept flags give to the run's own values
// from its config.json, so that a run made under an older default resumes
// as it was made instead of being refused as a change. They are not kept
// as given flags: the run's config.json already records them.
func recordedDefaults(c *cli.Context, dir string, given map[string]string, defined map[string]bool) error {
	recorded, err := bo.RecordedDefaults(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // stopped before the run began: a new run's defaults
	}
	if err != nil {
		return fmt.Errorf("--resume: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(recorded)) {
		if _, ok := given[name]; ok || !defined[name] {
			continue
		}
		if err := c.Set(name, recorded[name]); err != nil {
			return fmt.Errorf("--resume: the run's %s %q (%s): %w", name, recorded[name], filepath.Join(dir, bo.ConfigFile), err)
		}
	}
	return nil
}

// printSummary prints a finished run's best objects and writes
// DIR/best.png.
func printSummary(c *cli.Context, dir, taskName string, cfg bo.Config, res *bo.Result) error {
	if res.Resumed > 0 {
		fmt.Printf("resumed %d queries from %s (%d GP fits repeated to rebuild the warm start)\n", res.Resumed,
			filepath.Join(dir, bo.JournalFile), res.ReplayedFits)
	}
	if res.Exhausted != "" {
		fmt.Printf("the run ended after %d of %d evaluations: %s\n", res.Evaluated, cfg.Budget, res.Exhausted)
	}
	if math.IsNaN(res.InitialBest) {
		fmt.Println("best of the start: none (the evaluation of every start object failed)")
	} else {
		fmt.Printf("best of the start: %.6g\n", res.InitialBest)
	}
	fmt.Printf("top %d of %d evaluations (%d queries, %d of them known objects or invalid decodes):\n", c.Int("top"), res.Evaluated,
		len(res.Queries), len(res.Queries)-res.Evaluated)
	for i, q := range res.Top(c.Int("top")) {
		// Query numbers are 1-based wherever a person reads them.
		fmt.Printf("%2d  %.6g  %s  (query %d, model v%d)\n", i+1, q.Score, q.Object, q.Index+1, q.Version)
	}
	if math.IsNaN(res.Best) {
		// A failure score is no result: a run whose every evaluation
		// failed has no best object, and no curve to draw.
		fmt.Println("best score: none: no evaluation succeeded (every one failed, with the failure score)")
		printFailures(res)
		printRandom(res)
		fmt.Printf("results %s\n", filepath.Join(dir, bo.ResultsFile))
		return nil
	}
	fmt.Printf("best score %.6g: %s\n", res.Best, res.BestObject)
	printFailures(res)
	printRandom(res)
	cv, err := bo.ReadCurve(dir)
	if err != nil {
		return err
	}
	plotPath := filepath.Join(dir, "best.png")
	title := fmt.Sprintf("%s, %s, seed %d", taskName, cfg.Strategy, cfg.Seed)
	if err := writeBestPlot(plotPath, title, bo.GroupCurves([]bo.Curve{cv})); err != nil {
		return err
	}
	fmt.Printf("results %s\nplot %s\n", filepath.Join(dir, bo.ResultsFile), plotPath)
	return nil
}

// printFailures prints how many evaluations failed (the objective's
// failure score, e.g. a program's error, timeout or crash) and their
// reasons, the most frequent first; the journal has each one's.
func printFailures(res *bo.Result) {
	count := map[string]int{}
	n := 0
	for _, q := range res.Queries {
		if q.Valid && !q.Known && q.Failure != "" {
			count[q.Failure]++
			n++
		}
	}
	if n == 0 {
		return
	}
	fmt.Printf("failed evaluations %d (scored as failures; each with its reason in %s):\n", n, bo.JournalFile)
	printReasons(count)
}

// printReasons prints the counts of the five most frequent reasons, the
// most frequent first, and how many other reasons there are.
func printReasons(count map[string]int) {
	reasons := slices.Collect(maps.Keys(count))
	slices.SortFunc(reasons, func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) })
	for i, r := range reasons {
		if i == 5 {
			fmt.Printf("  ... %d other reasons\n", len(reasons)-i)
			break
		}
		fmt.Printf("  %d x %s\n", count[r], r)
	}
}

// printRandom warns of the queries whose latent point was a random draw
// because the GP fit or the acquisition failed (results.npz's
// rand_point_due_bo_fail), with their reasons, the most frequent first: so
// many of those are random search, not BO.
func printRandom(res *bo.Result) {
	count := map[string]int{}
	n := 0
	for _, q := range res.Queries {
		if q.Random {
			reason := q.RandomReason
			if reason == "" {
				reason = "reason not journaled (a run before random_reason)"
			}
			count[reason]++
			n++
		}
	}
	if n == 0 {
		return
	}
	fmt.Printf("warning: %d of %d queries were random points, not the acquisition's (random_reason in %s):\n", n, len(res.Queries),
		bo.JournalFile)
	printReasons(count)
}

// reporter shows a run's progress: a progress bar on a terminal, one line
// per query otherwise.
type reporter struct {
	bar *progressbar.ProgressBar
	tty bool
}

func newReporter(budget int) *reporter {
	r := &reporter{tty: term.IsTerminal(int(os.Stderr.Fd()))}
	if r.tty {
		r.bar = progressbar.NewOptions(budget, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(20), progressbar.OptionSetPredictTime(true), progressbar.OptionShowDescriptionAtLineEnd())
	}
	return r
}

func (r *reporter) progress(p bo.Progress) {
	var desc string
	switch p.Stage {
	case bo.StageQuery:
		q := p.Query
		last := fmt.Sprintf("last %.4g", q.Score)
		switch {
		case q.Known:
			last = "known object, not evaluated again"
		case !q.Valid:
			last = "invalid decode"
		}
		if q.Random {
			last += " (a random point: " + q.RandomReason + ")"
		}
		desc = fmt.Sprintf("evaluation %d/%d (query %d) best %s %s fit %.2fs acq %.2fs decode %.2fs eval %.2fs", p.Done, p.Budget,
			q.Index+1, fmtBest(p.Best), last, q.Timing.GPFit, q.Timing.Acq, q.Timing.Decode, q.Timing.Eval)
	case bo.StageRetrain:
		desc = fmt.Sprintf("retraining model v%d (%d/%d evaluations, best %s)", p.Version, p.Done, p.Budget, fmtBest(p.Best))
	case bo.StageEncode:
		desc = fmt.Sprintf("encoding the GP data of model v%d", p.Version)
	case bo.StageFit:
		desc = fmt.Sprintf("fitting the GP of model v%d from scratch (%d points)", p.Version, p.Points)
	case bo.StageReplay:
		desc = fmt.Sprintf("replaying the GP fits of model v%d's %d journaled queries", p.Version, p.Done)
	}
	if !r.tty {
		fmt.Fprintln(os.Stderr, desc)
		return
	}
	r.bar.Describe(desc)
	r.bar.Set(p.Done)
}

// fmtBest formats a best score for the progress lines: NaN while no
// evaluation has succeeded.
func fmtBest(v float64) string {
	if math.IsNaN(v) {
		return "none yet"
	}
	return fmt.Sprintf("%.4g", v)
}

func (r *reporter) logf(format string, args ...any) {
	if r.tty {
		r.bar.Clear()
	}
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (r *reporter) finish() {
	if r.tty {
		r.bar.Finish()
		fmt.Fprintln(os.Stderr)
	}
}

// fileSHA256 returns the first 16 hex digits of a file's sha256, as runs
// record their VAE.
func fileSHA256(path string) (string, error) {
	sum, err := task.FileDigest(path)
	if err != nil {
		return "", err
	}
	return sum[:16], nil
}
