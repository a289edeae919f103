package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/adapters"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// optimizeCommand runs T-LBO (Algorithm 1) on a task.
func optimizeCommand() *cli.Command {
	d := bo.DefaultConfig()
	perTask := func(get func(task.Defaults) string) string { return " (" + defaultsUsage(get) + ")" }
	flags := []cli.Flag{taskFlag(),
		&cli.StringFlag{Name: "vae", Usage: "pretrained VAE checkpoint (.pt with its .json header)", Required: true}}
	flags = append(flags, elboFlags()...)
	flags = append(flags,
		&cli.StringFlag{Name: "strategy", Value: d.Strategy, Usage: "bo, random (uniform in the encoded data's box) or prior (samples of N(0, I))"},
		&cli.IntFlag{Name: "budget", Usage: "number of queries B" + perTask(func(d task.Defaults) string { return fmt.Sprint(d.Budget) })},
		&cli.IntFlag{Name: "retrain-every", Usage: "queries between retrainings r" + perTask(func(d task.Defaults) string { return fmt.Sprint(d.RetrainEvery) })},
		&cli.StringFlag{Name: "k", Usage: "rank-weight k, inf for uniform weights" + perTask(func(d task.Defaults) string { return fmtFloat(d.RankK) })},
		&cli.Float64Flag{Name: "initial-retrain-epochs", Usage: "retraining before the first query" +
			perTask(func(d task.Defaults) string { return fmtFloat(d.InitialRetrainEpochs) })},
		&cli.Float64Flag{Name: "retrain-epochs", Usage: "retraining every r queries" + perTask(func(d task.Defaults) string { return fmtFloat(d.RetrainEpochs) })},
		&cli.IntFlag{Name: "retrain-batch-size", Usage: "retraining mini-batch size" + perTask(func(d task.Defaults) string { return fmt.Sprint(d.RetrainBatchSize) })},
		&cli.Float64Flag{Name: "retrain-grad-clip", Usage: "retraining gradient-norm clipping, 0 for none" +
			perTask(func(d task.Defaults) string { return fmtFloat(d.RetrainGradClip) })},
		&cli.StringFlag{Name: "acq", Value: d.Acq, Usage: "ei or logei"},
		&cli.IntFlag{Name: "n-best", Usage: "best points of the GP's training set" + perTask(func(d task.Defaults) string { return fmt.Sprint(d.NBest) })},
		&cli.IntFlag{Name: "n-rand", Usage: "random points of the GP's training set" + perTask(func(d task.Defaults) string { return fmt.Sprint(d.NRand) })},
		&cli.IntFlag{Name: "inducing", Usage: "inducing points, 0 for an exact GP" + perTask(func(d task.Defaults) string { return fmt.Sprint(d.Inducing) })},
		&cli.StringFlag{Name: "kernel", Value: d.Kernel, Usage: "rbf or matern52"},
		&cli.StringFlag{Name: "gp-objective", Value: d.GPObjective, Usage: "sparse GP training objective: titsias or fitc"},
		&cli.Float64Flag{Name: "best-quantile", Value: d.BestQuantile, Usage: "EI incumbent: quantile of the targets"},
		&cli.Float64Flag{Name: "tau", Usage: "stop an inner loop when the maximal EI is below tau (0: never)"},
		&cli.IntFlag{Name: "raw-samples", Value: d.RawSamples, Usage: "acquisition: random points scored"},
		&cli.IntFlag{Name: "restarts", Value: d.Restarts, Usage: "acquisition: raw samples refined by L-BFGS-B"},
		&cli.StringFlag{Name: "restart-selection", Value: d.RestartSelection, Usage: "acquisition: restarts picked by boltzmann sampling or the best raw samples"},
		&cli.StringFlag{Name: "repeats", Value: d.Repeats, Usage: "skip: never evaluate an object whose score is known (the budget counts distinct evaluations); " +
			"authors: the authors' novelty check (perturb, redo, then evaluate the duplicate)"},
		&cli.IntFlag{Name: "q", Value: d.Q, Usage: "proposals per round, chosen jointly (kriging believer) and evaluated concurrently (--repeats skip)"},
		&cli.IntFlag{Name: "repeat-tries", Value: d.RepeatTries, Usage: "acquisition steps of a proposal that may end in a known object or an invalid decode before the ball fallback (--repeats skip)"},
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
		deviceFlag, threadsFlag,
		&cli.StringFlag{Name: "run-dir", Usage: "run directory", Required: true},
		&cli.BoolFlag{Name: "resume", Usage: "continue the run in --run-dir"},
		&cli.IntFlag{Name: "top", Value: 5, Usage: "best objects printed at the end"},
	)
	flags = append(append(flags, dataFlags()...), taskOptionFlags()...)
	return &cli.Command{
		Name:  "optimize",
		Usage: "Bayesian optimisation in the latent space of a pretrained VAE, retrained every r queries (T-LBO)",
		Description: "Everything of a run lives in --run-dir: config.json, journal.jsonl (one line per query,\n" +
			"flushed before the next), results.npz, the model versions model-v<N>/ and best.png.\n" +
			"--resume continues a killed run where it stopped; a different configuration is refused.\n" +
			"--elbo picks the retraining objective (default t); w is LBO with a warped GP (W-LBO).\n" +
			"--strategy random draws uniformly from the box of the encoded data instead of maximising EI\n" +
			"(prior: from N(0, I)); a run made before --restart-selection existed resumes with --strategy\n" +
			"prior (if it was random), --restart-selection best --novelty-redo 0 --perturb-tries 100\n" +
			"--restarts 10 (the error names each difference). Flags left unset take\n" +
			"the task's defaults (DESIGN.md section 9).",
		Flags:  flags,
		Action: optimizeAction,
	}
}

// optimizeConfig reads the loop's configuration from the flags, unset ones
// from the task's defaults.
func optimizeConfig(c *cli.Context, t task.Task, elbo models.ELBO) (bo.Config, error) {
	td := t.Defaults()
	k, err := parseK(c, "k", td.RankK)
	if err != nil {
		return bo.Config{}, err
	}
	cfg := bo.DefaultConfig()
	cfg.Strategy, cfg.Budget, cfg.RetrainEvery, cfg.RankK = c.String("strategy"), intOr(c, "budget", td.Budget), intOr(c, "retrain-every", td.RetrainEvery), k
	cfg.InitialRetrainEpochs = floatOr(c, "initial-retrain-epochs", td.InitialRetrainEpochs)
	cfg.RetrainEpochs = floatOr(c, "retrain-epochs", td.RetrainEpochs)
	cfg.NBest, cfg.NRand, cfg.Inducing = intOr(c, "n-best", td.NBest), intOr(c, "n-rand", td.NRand), intOr(c, "inducing", td.Inducing)
	cfg.Kernel, cfg.Warp, cfg.Acq, cfg.BestQuantile = c.String("kernel"), elbo.Name == "w", c.String("acq"), c.Float64("best-quantile")
	cfg.Tau, cfg.RawSamples, cfg.Restarts = c.Float64("tau"), c.Int("raw-samples"), c.Int("restarts")
	cfg.GPObjective, cfg.RestartSelection = c.String("gp-objective"), c.String("restart-selection")
	cfg.PerturbTries, cfg.NoveltyRedo = c.Int("perturb-tries"), c.Int("novelty-redo")
	cfg.Repeats, cfg.Q, cfg.RepeatTries, cfg.TrustRegion = c.String("repeats"), c.Int("q"), c.Int("repeat-tries"), c.Bool("trust-region")
	cfg.TR = bo.TrustRegionConfig{Init: c.Float64("tr-init"), Min: c.Float64("tr-min"), Max: c.Float64("tr-max"),
		Successes: c.Int("tr-successes"), Failures: c.Int("tr-failures")}
	cfg.SamplesPerModel, cfg.LabelledFraction, cfg.Seed = c.Int("samples-per-model"), c.Float64("labelled-fraction"), c.Uint64("seed")
	cfg.Extra = map[string]string{"task": t.Name(), "elbo": elbo.Name,
		"elbo-params": fmt.Sprintf("metric-weight=%g pred-weight=%g eta=%g nu=%g margin=%g", elbo.MetricWeight, elbo.PredWeight,
			elbo.Metric.Eta, elbo.Metric.Nu, elbo.Metric.Margin),
		"retrain": fmt.Sprintf("batch=%d clip=%g", intOr(c, "retrain-batch-size", td.RetrainBatchSize),
			floatOr(c, "retrain-grad-clip", td.RetrainGradClip)),
	}
	return cfg, cfg.Validate()
}

func optimizeAction(c *cli.Context) error {
	t, err := lookupTask(c)
	if err != nil {
		return err
	}
	elboName := "t"
	if c.IsSet("elbo") {
		elboName = c.String("elbo")
	}
	elbo, err := elboFromFlags(c, t, elboName)
	if err != nil {
		return err
	}
	cfg, err := optimizeConfig(c, t, elbo)
	if err != nil {
		return err
	}
	dev, err := setupTorch(c)
	if err != nil {
		return err
	}
	env, err := taskEnv(c, t)
	if err != nil {
		return err
	}
	env.Device = dev
	obj, err := t.Objective(env)
	if err != nil {
		return err
	}
	ds, err := t.Dataset(env)
	if err != nil {
		return err
	}
	td := t.Defaults()
	m, err := t.OpenModel(env, task.ModelRequest{Path: c.String("vae"), ELBO: elbo, LR: td.LR,
		BatchSize: intOr(c, "retrain-batch-size", td.RetrainBatchSize), GradClip: floatOr(c, "retrain-grad-clip", td.RetrainGradClip),
		Decode: task.DecodeOptions{Attempts: c.Int("decode-attempts")}})
	if err != nil {
		return fmt.Errorf("--vae: %w", err)
	}
	model := adapters.NewModel(m)
	defer model.Close()
	// Files are identified by content, so that a moved run or data
	// directory still resumes; bo adds the data's digest.
	sum, err := fileSHA256(c.String("vae"))
	if err != nil {
		return fmt.Errorf("--vae: %w", err)
	}
	cfg.Extra["vae-sha256"] = sum
	cfg.Extra["device"] = dev.String()
	cfg.Extra["decode-attempts"] = strconv.Itoa(c.Int("decode-attempts"))
	cfg.Extra["data-source"] = ds.Source
	for k, v := range obj.Describe() {
		cfg.Extra[k] = v
	}
	if err := torch.ManualSeed(cfg.Seed); err != nil {
		return err
	}
	return runOptimize(c, env, t, cfg, adapters.Task(obj), model, bo.Data[any]{Objects: ds.Objects, Scores: ds.Scores})
}

// runOptimize runs the loop with a progress bar, then prints the best
// objects and writes DIR/best.png.
func runOptimize(c *cli.Context, env *task.Env, t task.Task, cfg bo.Config, obj bo.Task[any], model bo.Model[any], data bo.Data[any]) error {
	dir := c.String("run-dir")
	rep := newReporter(cfg.Budget)
	res, err := bo.Run(cfg, obj, model, data, bo.Options{Dir: dir, Resume: c.Bool("resume"), Progress: rep.progress, Logf: rep.logf})
	rep.finish()
	if err != nil {
		if res != nil && len(res.Queries) > 0 {
			fmt.Fprintf(os.Stderr, "%d queries are in %s; rerun with --resume to continue\n", len(res.Queries), dir)
		}
		return err
	}
	if res.Resumed > 0 {
		fmt.Printf("resumed %d queries from %s\n", res.Resumed, filepath.Join(dir, bo.JournalFile))
	}
	if res.Exhausted != "" {
		fmt.Printf("the run ended after %d of %d evaluations: %s\n", res.Evaluated, cfg.Budget, res.Exhausted)
	}
	fmt.Printf("best of the start: %.6g\n", res.InitialBest)
	fmt.Printf("top %d of %d evaluations (%d queries, %d of them known objects or invalid decodes):\n", c.Int("top"), res.Evaluated,
		len(res.Queries), len(res.Queries)-res.Evaluated)
	var best []task.Scored
	for i, q := range res.Top(c.Int("top")) {
		// Query numbers are 1-based wherever a person reads them.
		fmt.Printf("%2d  %.6g  %s  (query %d, model v%d)\n", i+1, q.Score, q.Object, q.Index+1, q.Version)
		if o, err := obj.Parse(q.Object); err == nil {
			best = append(best, task.Scored{Object: o, Score: q.Score, Query: q.Index + 1})
		}
	}
	if err := t.Plots(env, dir, best); err != nil {
		return err
	}
	fmt.Printf("best score %.6g: %s\n", res.Best, res.BestObject)
	cv, err := bo.ReadCurve(dir)
	if err != nil {
		return err
	}
	plotPath := filepath.Join(dir, "best.png")
	title := fmt.Sprintf("%s, %s, seed %d", cfg.Extra["task"], cfg.Strategy, cfg.Seed)
	if err := writeBestPlot(plotPath, title, bo.GroupCurves([]bo.Curve{cv})); err != nil {
		return err
	}
	fmt.Printf("results %s\nplot %s\n", filepath.Join(dir, bo.ResultsFile), plotPath)
	return nil
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
		desc = fmt.Sprintf("evaluation %d/%d (query %d) best %.4g %s fit %.2fs acq %.2fs decode %.2fs eval %.2fs", p.Done, p.Budget,
			q.Index+1, p.Best, last, q.Timing.GPFit, q.Timing.Acq, q.Timing.Decode, q.Timing.Eval)
	case bo.StageRetrain:
		desc = fmt.Sprintf("retraining model v%d (%d/%d evaluations, best %.4g)", p.Version, p.Done, p.Budget, p.Best)
	case bo.StageEncode:
		desc = fmt.Sprintf("encoding the GP data of model v%d", p.Version)
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
