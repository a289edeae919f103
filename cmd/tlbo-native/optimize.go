package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/adapters"
	"github.com/tlbo-native/tlbo-native/internal/task/expression"
	"github.com/tlbo-native/tlbo-native/internal/task/toy"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// optimizeCommand runs T-LBO (Algorithm 1) on a task.
func optimizeCommand() *cli.Command {
	d := bo.DefaultConfig()
	return &cli.Command{
		Name:  "optimize",
		Usage: "Bayesian optimisation in the latent space of a pretrained VAE, retrained every r queries (T-LBO)",
		Description: "Everything of a run lives in --run-dir: config.json, journal.jsonl (one line per query,\n" +
			"flushed before the next), results.npz, the model versions model-v<N>/ and best.png.\n" +
			"--resume continues a killed run where it stopped; a different configuration is refused.\n" +
			"--elbo picks the retraining objective (lbo, w, tp, s, c, c-hard, lr, t, t-hard); w is LBO with\n" +
			"a warped GP (W-LBO). --strategy random samples the latent prior instead of maximising EI.\n" +
			"--task toy is a small synthetic task (no network) for trying the loop out.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Value: "expression", Usage: "expression or toy"},
			&cli.StringFlag{Name: "data-dir", Usage: "data directory holding expression/" + expression.DataFileName},
			&cli.StringFlag{Name: "target", Value: expression.DefaultTarget, Usage: "expression task: target expression of x"},
			&cli.StringFlag{Name: "vae", Usage: "pretrained VAE checkpoint (.pt with its .json header)"},
			&cli.StringFlag{Name: "elbo", Value: "t", Usage: "retraining ELBO: " + strings.Join(models.ELBONames(), ", ")},
			&cli.Float64Flag{Name: "metric-weight", Value: 10, Usage: "beta_metric, the metric-loss weight (the paper's 10 for expressions)"},
			&cli.Float64Flag{Name: "eta", Value: models.DefaultEta, Usage: "metric-loss threshold between positives and negatives"},
			&cli.Float64Flag{Name: "nu", Usage: "soft triplet temperature (0: unset, w_p = w_n = 1)"},
			&cli.StringFlag{Name: "strategy", Value: d.Strategy, Usage: "bo or random"},
			&cli.IntFlag{Name: "budget", Value: d.Budget, Usage: "number of queries B"},
			&cli.IntFlag{Name: "retrain-every", Value: d.RetrainEvery, Usage: "queries between retrainings r"},
			&cli.StringFlag{Name: "k", Value: "1e-3", Usage: "rank-weight k (inf: uniform weights)"},
			&cli.Float64Flag{Name: "initial-retrain-epochs", Value: d.InitialRetrainEpochs, Usage: "retraining before the first query"},
			&cli.Float64Flag{Name: "retrain-epochs", Value: d.RetrainEpochs, Usage: "retraining every r queries"},
			&cli.StringFlag{Name: "acq", Value: d.Acq, Usage: "ei or logei"},
			&cli.IntFlag{Name: "n-best", Value: d.NBest, Usage: "best points of the GP's training set"},
			&cli.IntFlag{Name: "n-rand", Value: d.NRand, Usage: "random points of the GP's training set"},
			&cli.IntFlag{Name: "inducing", Value: d.Inducing, Usage: "inducing points (0: exact GP)"},
			&cli.StringFlag{Name: "kernel", Value: d.Kernel, Usage: "rbf or matern52"},
			&cli.Float64Flag{Name: "best-quantile", Value: d.BestQuantile, Usage: "EI incumbent: quantile of the targets"},
			&cli.Float64Flag{Name: "tau", Usage: "stop an inner loop when the maximal EI is below tau (0: never)"},
			&cli.IntFlag{Name: "raw-samples", Value: d.RawSamples, Usage: "acquisition: random points scored"},
			&cli.IntFlag{Name: "restarts", Value: d.Restarts, Usage: "acquisition: best points refined by L-BFGS-B"},
			&cli.IntFlag{Name: "samples-per-model", Usage: "prior samples decoded and scored per model version"},
			&cli.Float64Flag{Name: "labelled-fraction", Usage: "semi-supervised: start from this fraction of the labelled data"},
			&cli.IntFlag{Name: "decode-attempts", Value: 20, Usage: "expression task: stochastic decodings per point"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of every random choice of the run"},
			deviceFlag, threadsFlag,
			&cli.StringFlag{Name: "run-dir", Usage: "run directory", Required: true},
			&cli.BoolFlag{Name: "resume", Usage: "continue the run in --run-dir"},
			&cli.IntFlag{Name: "top", Value: 5, Usage: "best objects printed at the end"},
		},
		Action: optimizeAction,
	}
}

// optimizeConfig reads the loop's configuration from the flags.
func optimizeConfig(c *cli.Context) (bo.Config, error) {
	k, err := strconv.ParseFloat(c.String("k"), 64)
	if err != nil {
		return bo.Config{}, fmt.Errorf("--k %q: %w", c.String("k"), err)
	}
	cfg := bo.Config{
		Strategy: c.String("strategy"), Budget: c.Int("budget"), RetrainEvery: c.Int("retrain-every"), RankK: k,
		InitialRetrainEpochs: c.Float64("initial-retrain-epochs"), RetrainEpochs: c.Float64("retrain-epochs"),
		NBest: c.Int("n-best"), NRand: c.Int("n-rand"), Inducing: c.Int("inducing"), Kernel: c.String("kernel"),
		Warp: strings.EqualFold(c.String("elbo"), "w"), Acq: c.String("acq"), BestQuantile: c.Float64("best-quantile"),
		Tau: c.Float64("tau"), RawSamples: c.Int("raw-samples"), Restarts: c.Int("restarts"),
		SamplesPerModel: c.Int("samples-per-model"), LabelledFraction: c.Float64("labelled-fraction"),
		Seed: c.Uint64("seed"),
	}
	def := bo.DefaultConfig()
	cfg.PerturbSigma, cfg.PerturbGrowth, cfg.PerturbTries = def.PerturbSigma, def.PerturbGrowth, def.PerturbTries
	cfg.Extra = map[string]string{"task": c.String("task"), "elbo": strings.ToLower(c.String("elbo"))}
	return cfg, cfg.Validate()
}

func optimizeAction(c *cli.Context) error {
	cfg, err := optimizeConfig(c)
	if err != nil {
		return err
	}
	switch c.String("task") {
	case "toy":
		p, err := toy.New(3, 8, 1)
		if err != nil {
			return err
		}
		return runOptimize[[]float64](c, cfg, p.Task(), p.Model(), p.Data(200, 2))
	case "expression":
		return optimizeExpression(c, cfg)
	}
	return fmt.Errorf("--task %q: want expression or toy", c.String("task"))
}

// optimizeExpression loads the expression data subset and the grammar VAE.
func optimizeExpression(c *cli.Context, cfg bo.Config) error {
	if c.String("vae") == "" {
		return fmt.Errorf("--vae: the expression task needs a pretrained grammar VAE checkpoint (see the train verb)")
	}
	dev, err := setupTorch(c)
	if err != nil {
		return err
	}
	elbo, err := models.ParseELBO(c.String("elbo"))
	if err != nil {
		return fmt.Errorf("--elbo: %w", err)
	}
	elbo.MetricWeight = c.Float64("metric-weight")
	if elbo.Metric.Eta > 0 {
		elbo.Metric.Eta = c.Float64("eta")
	}
	if nu := c.Float64("nu"); nu > 0 {
		elbo.Metric.Nu = nu
	}
	obj, err := expression.NewObjective(c.String("target"))
	if err != nil {
		return fmt.Errorf("--target: %w", err)
	}
	ds, err := expression.Load(expression.LoadOptions{DataDir: c.String("data-dir"), Target: c.String("target"), Log: os.Stderr})
	if err != nil {
		return err
	}
	var data bo.Data[string]
	for _, i := range expression.Subset(ds.Scores, 0) {
		text, err := adapters.Canonical(ds.Exprs[i])
		if err != nil {
			return fmt.Errorf("data set expression %d: %w", i, err)
		}
		data.Objects = append(data.Objects, text)
		data.Scores = append(data.Scores, ds.Scores[i])
	}
	model, err := adapters.NewExpressionModel(c.String("vae"), adapters.ExpressionOptions{
		ELBO: elbo, Attempts: c.Int("decode-attempts"), Device: dev,
	})
	if err != nil {
		return fmt.Errorf("--vae: %w", err)
	}
	defer model.Close()
	// Files are identified by content, so that a moved run or data
	// directory still resumes; bo adds the data's digest.
	sum, err := fileSHA256(c.String("vae"))
	if err != nil {
		return fmt.Errorf("--vae: %w", err)
	}
	cfg.Extra["vae-sha256"] = sum
	cfg.Extra["target"] = obj.Target()
	cfg.Extra["device"] = dev.String()
	cfg.Extra["decode-attempts"] = strconv.Itoa(c.Int("decode-attempts"))
	cfg.Extra["elbo-params"] = fmt.Sprintf("metric-weight=%g eta=%g nu=%g", elbo.MetricWeight, elbo.Metric.Eta, elbo.Metric.Nu)
	if err := torch.ManualSeed(cfg.Seed); err != nil {
		return err
	}
	return runOptimize[string](c, cfg, adapters.ExpressionTask{Objective: obj}, model, data)
}

// runOptimize runs the loop with a progress bar, then prints the best
// objects and writes DIR/best.png.
func runOptimize[O any](c *cli.Context, cfg bo.Config, task bo.Task[O], model bo.Model[O], data bo.Data[O]) error {
	dir := c.String("run-dir")
	rep := newReporter(cfg.Budget)
	res, err := bo.Run(cfg, task, model, data, bo.Options{Dir: dir, Resume: c.Bool("resume"), Progress: rep.progress, Logf: rep.logf})
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
	fmt.Printf("best of the start: %.6g\n", res.InitialBest)
	fmt.Printf("top %d of %d queries:\n", c.Int("top"), len(res.Queries))
	for i, q := range res.Top(c.Int("top")) {
		fmt.Printf("%2d  %.6g  %s  (query %d, model v%d)\n", i+1, q.Score, q.Object, q.Index, q.Version)
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
		desc = fmt.Sprintf("query %d/%d best %.4g last %.4g fit %.2fs acq %.2fs decode %.2fs", p.Done, p.Budget, p.Best, q.Score,
			q.Timing.GPFit, q.Timing.Acq, q.Timing.Decode)
	case bo.StageRetrain:
		desc = fmt.Sprintf("retraining model v%d (%d/%d queries, best %.4g)", p.Version, p.Done, p.Budget, p.Best)
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

// fileSHA256 returns the first 16 hex digits of a file's sha256.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
