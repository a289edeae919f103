package main

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/analysis"
	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/cliutil"
	"github.com/tlbo-native/tlbo-native/internal/gp"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// analyzeCommand groups the paper's analyses of latent spaces
// (docs/design.md).
func analyzeCommand() *cli.Command {
	return &cli.Command{
		Name:  "analyze",
		Usage: "the paper's analyses of VAE latent spaces, each as a table (.txt, .npz) and a PNG",
		Subcommands: []*cli.Command{
			taskVerb{
				name:  "gp-loglik",
				usage: "Table 1: GP predictive log-likelihood of the encoded labelled data over random train/test splits",
				description: "Encodes the task's labelled data with each --vae (encoder means; the task is that of the\n" +
					"checkpoints' network unless --task says it), or reads --latents/--scores, and for each of --splits\n" +
					"random splits fits an SGPR with --inducing inducing points on the training part and reports the\n" +
					"mean predictive log-likelihood per held-out point (mean ± std over splits), on the scores' scale and on the\n" +
					"standardised scale the GP is fitted on (held-out scores standardised like the training part's). Writes\n" +
					"OUT/gp_loglik.txt, .npz and .png.",
				verb: task.VerbAnalyze, fromVAE: true, optional: true,
				flags: func(t task.Task) []cli.Flag {
					return append(analyzeFlags(t),
						&cli.IntFlag{Name: "splits", Value: 5, Usage: "random train/test splits"},
						&cli.Float64Flag{Name: "test-fraction", Value: 0.2, Usage: "share of the points held out per split"},
						&cli.IntFlag{Name: "inducing", Value: 500, Usage: "inducing points (0: an exact GP)"},
						&cli.StringFlag{Name: "kernel", Value: "rbf", Usage: "rbf or matern52"},
						&cli.StringFlag{Name: "gp-objective", Value: string(gp.DefaultApproximation), Usage: "sparse GP training objective: titsias or fitc"},
						&cli.IntFlag{Name: "max-iter", Usage: "L-BFGS iterations per fit (0: the default, 200)"},
					)
				},
				action: gpLogLikAction,
			}.command(),
			taskVerb{
				name:  "latent-distances",
				usage: "Fig. 2: histograms of high-high, low-low and high-low latent distances, split at the median score",
				description: "Encodes the task's labelled data with each --vae (or reads --latents/--scores), splits it at the\n" +
					"median score and writes the normalised histograms of the pairwise latent distances, one panel\n" +
					"per VAE; a group with more than --max-pairs pairs is represented by that many sampled pairs\n" +
					"(the table says which). Writes OUT/latent_distances.txt, .npz and .png.",
				verb: task.VerbAnalyze, fromVAE: true, optional: true,
				flags: func(t task.Task) []cli.Flag {
					return append(analyzeFlags(t),
						&cli.IntFlag{Name: "max-pairs", Value: 1_000_000, Usage: "pairs per group beyond which pairs are sampled"},
						&cli.IntFlag{Name: "bins", Value: 50, Usage: "histogram bins"},
					)
				},
				action: distancesAction,
			}.command(),
			recoveryCommand(),
			pmoCommand(),
		},
	}
}

// analyzeFlags are the inputs and outputs shared by the analyses.
func analyzeFlags(t task.Task) []cli.Flag {
	flags := []cli.Flag{
		taskFlag(t, true),
		&cli.StringSliceFlag{Name: "vae", Usage: "VAE checkpoint (.pt) of the task's network; repeat for several"},
		&cli.StringSliceFlag{Name: "latents", Usage: "latent points (N x d .npy) instead of --vae; repeat for several"},
		&cli.StringSliceFlag{Name: "scores", Usage: "scores (N .npy) of the --latents, one per --latents"},
		&cli.StringSliceFlag{Name: "name", Usage: "label of each input, in order (default: the file name)"},
		&cli.IntFlag{Name: "max-points", Usage: "analyse a random subset of this many labelled points, with --vae the only ones encoded (0: all)"},
		&cli.Uint64Flag{Name: "seed", Usage: "seed of the splits, subsets and sampled pairs"},
		&cli.StringFlag{Name: "out", Required: true, Usage: "output directory"},
		cliutil.DeviceFlag(), cliutil.ThreadsFlag(),
	}
	return append(flags, dataFlags()...)
}

// latentSet is one input of an analysis.
type latentSet struct {
	name  string
	z     *mat.Dense
	y     []float64
	total int // the points z was picked from (len(y) when all)
}

func gpLogLikAction(c *cli.Context, t task.Task) error {
	if err := cliutil.NoArgs(c); err != nil {
		return err
	}
	kern, err := gp.ParseKernel(c.String("kernel"))
	if err != nil {
		return fmt.Errorf("--kernel: %w", err)
	}
	approx, err := gp.ParseApproximation(c.String("gp-objective"))
	if err != nil {
		return fmt.Errorf("--gp-objective: %w", err)
	}
	if c.Int("inducing") < 0 || c.Int("splits") < 1 {
		return fmt.Errorf("--inducing %d and --splits %d: want >= 0 and >= 1", c.Int("inducing"), c.Int("splits"))
	}
	sets, notes, err := analyzeInputs(c, t)
	if err != nil {
		return err
	}
	o := analysis.GPOptions{Splits: c.Int("splits"), TestFraction: c.Float64("test-fraction"), Inducing: c.Int("inducing"),
		Kernel: kern, Approximation: approx, MaxIter: c.Int("max-iter"), Seed: c.Uint64("seed")}
	notes = append(notes, fmt.Sprintf("%d random splits, %.0f%% held out; GP: %d inducing points (0: exact), kernel %s, objective %s, seed %d",
		o.Splits, 100*o.TestFraction, o.Inducing, kern, approx, o.Seed))
	var results []analysis.GPResult
	for _, s := range sets {
		start := time.Now()
		o.Progress = func(split int, ll, rmse float64) {
			fmt.Fprintf(os.Stderr, "%s: split %d/%d loglik %.4f rmse %.4g (%.0f s)\n", s.name, split, o.Splits, ll, rmse, time.Since(start).Seconds())
		}
		r, err := analysis.GPLogLik(s.z, s.y, o)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Printf("%s: loglik %.4f ± %.4f on the scores' scale, %.4f ± %.4f standardised, over %d splits (%d train / %d test points)\n",
			s.name, r.Mean, r.Std, r.StandardisedMean, r.StandardisedStd, len(r.LogLik), r.Train, r.Test)
		results = append(results, r)
	}
	files, err := analysis.WriteGPLogLik(c.String("out"), analysis.Report{Names: names(sets), Notes: notes}, results)
	return printFiles(files, err)
}

func distancesAction(c *cli.Context, t task.Task) error {
	if err := cliutil.NoArgs(c); err != nil {
		return err
	}
	if c.Int("max-pairs") < 1 || c.Int("bins") < 1 {
		return fmt.Errorf("--max-pairs %d and --bins %d: want >= 1", c.Int("max-pairs"), c.Int("bins"))
	}
	sets, notes, err := analyzeInputs(c, t)
	if err != nil {
		return err
	}
	o := analysis.DistanceOptions{MaxPairs: c.Int("max-pairs"), Bins: c.Int("bins"), Seed: c.Uint64("seed")}
	notes = append(notes, fmt.Sprintf("split at the median score; Euclidean distances of encoder means; at most %d pairs per group (sampled beyond); %d bins",
		o.MaxPairs, o.Bins))
	var results []analysis.DistanceResult
	for _, s := range sets {
		r, err := analysis.LatentDistances(s.z, s.y, o)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Printf("%s: mean distance high-high %.3f, low-low %.3f, high-low %.3f\n", s.name, r.Mean[analysis.HighHigh], r.Mean[analysis.LowLow], r.Mean[analysis.HighLow])
		results = append(results, r)
	}
	files, err := analysis.WriteDistances(c.String("out"), analysis.Report{Names: names(sets), Notes: notes}, results)
	return printFiles(files, err)
}

func names(sets []latentSet) []string {
	out := make([]string, len(sets))
	for i, s := range sets {
		out[i] = s.name
	}
	return out
}

func printFiles(files []string, err error) error {
	if err != nil {
		return err
	}
	fmt.Println(strings.Join(files, "\n"))
	return nil
}

// analyzeInputs reads the latent sets of --vae (encoding the task's
// labelled data) or of --latents/--scores, subsampled to --max-points,
// with notes describing them; it creates --out.
func analyzeInputs(c *cli.Context, t task.Task) ([]latentSet, []string, error) {
	vaes, lats, scores := c.StringSlice("vae"), c.StringSlice("latents"), c.StringSlice("scores")
	switch {
	case len(vaes) == 0 && len(lats) == 0:
		return nil, nil, fmt.Errorf("no input: give --vae or --latents with --scores")
	case len(vaes) > 0 && len(lats) > 0:
		return nil, nil, fmt.Errorf("give either --vae or --latents, not both")
	case len(lats) != len(scores):
		return nil, nil, fmt.Errorf("%d --latents but %d --scores, want one --scores per --latents", len(lats), len(scores))
	case c.Int("max-points") < 0:
		return nil, nil, fmt.Errorf("--max-points %d: want >= 0", c.Int("max-points"))
	}
	if err := os.MkdirAll(c.String("out"), 0o755); err != nil {
		return nil, nil, fmt.Errorf("--out: %w", err)
	}
	var sets []latentSet
	var notes []string
	var err error
	if len(vaes) > 0 {
		sets, notes, err = encodeSets(c, t, vaes, c.Int("max-points"), c.Uint64("seed"))
	} else {
		sets, notes, err = readSets(lats, scores, c.Int("max-points"), c.Uint64("seed"))
	}
	if err != nil {
		return nil, nil, err
	}
	if err := labelSets(c, sets); err != nil {
		return nil, nil, err
	}
	for _, s := range sets { // after labelSets: the notes name the sets as the tables do
		if m := c.Int("max-points"); subsetOf(s.total, m) {
			notes = append(notes, fmt.Sprintf("%s: a random subset of %d of the %d points", s.name, m, s.total))
		}
	}
	return sets, notes, nil
}

// labelSets names the sets by --name, else by their files' names.
func labelSets(c *cli.Context, sets []latentSet) error {
	given := c.StringSlice("name")
	if len(given) > 0 && len(given) != len(sets) {
		return fmt.Errorf("%d --name for %d inputs, want one per input", len(given), len(sets))
	}
	for i := range sets {
		if len(given) > 0 {
			sets[i].name = given[i]
		}
	}
	return nil
}

// encodeSets encodes the task's labelled data with each VAE: all of it, or
// when there are more than maxPoints (> 0) labelled points the random subset
// that subsample would keep, the only points encoded.
func encodeSets(c *cli.Context, t task.Task, vaes []string, maxPoints int, seed uint64) ([]latentSet, []string, error) {
	if t == nil {
		return nil, nil, fmt.Errorf("--vae: no task (give --task)")
	}
	dev, err := cliutil.SetupTorch(c)
	if err != nil {
		return nil, nil, err
	}
	env, err := taskEnv(c, t, task.VerbAnalyze)
	if err != nil {
		return nil, nil, err
	}
	env.Device = dev
	rows := func(n int) []int {
		if !subsetOf(n, maxPoints) {
			return nil
		}
		return subsetRows(n, maxPoints, seed)
	}
	var sets []latentSet
	var source string
	for _, path := range vaes {
		if err := task.CheckCheckpoint(t, path); err != nil {
			return nil, nil, fmt.Errorf("--vae %s: %w", path, err)
		}
		enc, err := t.EncodeDataset(env, path, rows)
		if err != nil {
			return nil, nil, fmt.Errorf("--vae %s: %w", path, err)
		}
		if len(enc.Scores) == 0 {
			return nil, nil, fmt.Errorf("--vae %s: no labelled point to encode", path)
		}
		source = enc.Source
		n := len(enc.Scores)
		sets = append(sets, latentSet{name: stem(path), z: mat.NewDense(n, len(enc.Z)/n, enc.Z), y: enc.Scores, total: enc.Total})
	}
	notes := []string{fmt.Sprintf("task %s: %d labelled points from %s, encoder means", t.Name(), sets[0].total, source)}
	return sets, notes, nil
}

// readSets reads --latents and --scores pairs, each subsampled to maxPoints
// (> 0) as encodeSets picks its rows.
func readSets(lats, scores []string, maxPoints int, seed uint64) ([]latentSet, []string, error) {
	var sets []latentSet
	for i := range lats {
		z, err := readMatrix(lats[i])
		if err != nil {
			return nil, nil, fmt.Errorf("--latents: %w", err)
		}
		y, err := readVector(scores[i])
		if err != nil {
			return nil, nil, fmt.Errorf("--scores: %w", err)
		}
		if n, _ := z.Dims(); n != len(y) {
			return nil, nil, fmt.Errorf("%s has %d points but %s has %d scores", lats[i], n, scores[i], len(y))
		}
		total := len(y)
		if subsetOf(total, maxPoints) {
			z, y = subsample(z, y, maxPoints, seed)
		}
		sets = append(sets, latentSet{name: stem(lats[i]), z: z, y: y, total: total})
	}
	return sets, []string{"latent points and scores read from .npy files"}, nil
}

// subsetOf says whether --max-points m (0: all) keeps a subset of n points.
func subsetOf(n, m int) bool { return m > 0 && n > m }

// subsetRows returns the indices of m of n points drawn at random with seed:
// the rows subsample keeps, and those encodeSets encodes.
func subsetRows(n, m int, seed uint64) []int {
	return rand.New(rand.NewPCG(seed, 0x5ab)).Perm(n)[:m]
}

// subsample returns m random rows of z and their scores.
func subsample(z *mat.Dense, y []float64, m int, seed uint64) (*mat.Dense, []float64) {
	_, d := z.Dims()
	idx := subsetRows(len(y), m, seed)
	zs, ys := mat.NewDense(m, d, nil), make([]float64, m)
	for i, j := range idx {
		zs.SetRow(i, z.RawRowView(j))
		ys[i] = y[j]
	}
	return zs, ys
}

// stem is a file's name without directory and extension.
func stem(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// recoveryCommand is `analyze domain-recovery`.
func recoveryCommand() *cli.Command {
	return &cli.Command{
		Name:  "domain-recovery",
		Usage: "appendix: p(l), how likely each model version of BO runs decodes near the target to the target, by method",
		Description: "For a task whose objective is the similarity to a target (topology). For each --run (an optimize\n" +
			"--run-dir) and each model version model-v<v> in it (l = v+1 retrainings; --pretrained adds the run's\n" +
			"pretrained VAE, found by its digest, as l = 0): encode the run's target; p = the fraction of --decodes\n" +
			"stochastic decodings of a latent point whose similarity with the target exceeds --threshold (with\n" +
			"--decoding mode: 1 when the task's own decode of the point exceeds it, else 0); the\n" +
			"point is carried from version to version, and candidates drawn from the version's q(z | target), at\n" +
			"most --candidates, replace it as soon as one raises p above the p reached so far or reaches 1\n" +
			"(internal/analysis DomainRecovery). Runs are grouped by method: strategy and ELBO of config.json. Writes\n" +
			"OUT/domain_recovery.txt, .npz and .png.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "task of the runs (default: the first run's): " + strings.Join(task.Names(), ", ")},
			&cli.StringSliceFlag{Name: "run", Required: true, Usage: "BO run directory (optimize --run-dir); repeat for several"},
			&cli.StringSliceFlag{Name: "pretrained", Usage: "pretrained VAE of some runs (.pt), matched to runs by config.json's vae-sha256, reported as l = 0"},
			&cli.IntFlag{Name: "decodes", Value: 100, Usage: "decodings per latent point (--decoding sampled)"},
			&cli.StringFlag{Name: "decoding", Value: "sampled", Usage: "sampled: --decodes draws from the decoder's distribution; mode: the task's own decode (topology: rounded pixels), one per point"},
			&cli.Float64Flag{Name: "threshold", Usage: "similarity a decoding must exceed", DefaultText: "the task's, 0.8 for topology"},
			&cli.IntFlag{Name: "candidates", Value: 100, Usage: "most candidates drawn from q(z | target) per version (0: carry the first encoder mean)"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of the decodings and candidates"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output directory"},
			cliutil.DeviceFlag(), cliutil.ThreadsFlag(),
		},
		Action: recoveryAction,
	}
}

// recoveryRun is a run directory to analyse: its configuration and the
// checkpoint of each version.
type recoveryRun struct {
	dir, name string
	fields    map[string]string
	versions  []int
	files     map[int]string
}

func recoveryAction(c *cli.Context) error {
	name, err := runsTask(c.String("task"), c.StringSlice("run"))
	if err != nil {
		return err
	}
	t, err := task.Lookup(name)
	if err != nil {
		return fmt.Errorf("--task: %w", err)
	}
	tt, ok := t.(task.TargetTask)
	if !ok {
		return fmt.Errorf("--task %s: its objective is not the similarity to a target, so there is no domain to recover", t.Name())
	}
	o := analysis.RecoveryOptions{Decodes: c.Int("decodes"), Threshold: tt.Recovery().Threshold, Candidates: c.Int("candidates"), Seed: c.Uint64("seed")}
	if c.IsSet("threshold") {
		o.Threshold = c.Float64("threshold")
	}
	switch c.String("decoding") {
	case "sampled":
	case "mode":
		o.Mode = true
		if c.IsSet("decodes") {
			return fmt.Errorf("--decodes %d with --decoding mode: the mode is one decoding per point", o.Decodes)
		}
	default:
		return fmt.Errorf("--decoding %q: want sampled or mode", c.String("decoding"))
	}
	if o.Decodes < 1 || o.Candidates < 0 {
		return fmt.Errorf("--decodes %d and --candidates %d: want >= 1 and >= 0", o.Decodes, o.Candidates)
	}
	runs, err := readRecoveryRuns(c.StringSlice("run"), t.Name(), c.StringSlice("pretrained"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.String("out"), 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	dev, err := cliutil.SetupTorch(c)
	if err != nil {
		return err
	}
	env := &task.Env{Opts: task.Values{}, Device: dev, Seed: o.Seed, Stdout: os.Stdout, Stderr: os.Stderr}
	var results []analysis.RecoveryRun
	targets := map[string]bool{}
	for _, r := range runs {
		res, target, err := recoverRun(tt, env, r, o)
		if err != nil {
			return err
		}
		targets[target] = true
		results = append(results, res)
	}
	rec := tt.Recovery()
	notes := []string{
		fmt.Sprintf("task %s; target: %s", t.Name(), strings.Join(slices.Sorted(maps.Keys(targets)), "; ")),
		recoveryDecodingNote(o, rec),
		fmt.Sprintf("point carried across versions (first: the encoder mean); at most %d candidates from q(z | target) per version, until one raises p; seed %d",
			o.Candidates, o.Seed),
		"l = v+1 for model-v<v> (retrainings, the initial one included); l = 0: the pretrained model (--pretrained)",
	}
	files, err := analysis.WriteRecovery(c.String("out"), notes, analysis.TabulateRecovery(results))
	return printFiles(files, err)
}

// recoveryDecodingNote says how p was measured, for the report.
func recoveryDecodingNote(o analysis.RecoveryOptions, rec task.Recovery) string {
	if o.Mode {
		return fmt.Sprintf("p = 1 when the decoder's mode has %s > %g, else 0; the mode: %s", rec.Similarity, o.Threshold, rec.Mode)
	}
	return fmt.Sprintf("p = fraction of %d decodings with %s > %g; a decoding: %s", o.Decodes, rec.Similarity, o.Threshold, rec.Decoding)
}

// runsTask returns the task of runs: given, or the first run's (its
// config.json's task field); readRecoveryRuns then refuses a run of another.
func runsTask(given string, runs []string) (string, error) {
	if given != "" || len(runs) == 0 {
		return given, nil
	}
	fields, err := bo.ReadConfigFields(runs[0])
	if err != nil {
		return "", fmt.Errorf("--run %s: %w", runs[0], err)
	}
	for _, f := range fields {
		if f.Name == "task" {
			return f.Value, nil
		}
	}
	return "", fmt.Errorf("--run %s: its %s names no task; give --task", runs[0], bo.ConfigFile)
}

// recoverRun runs the protocol over one run's versions, with progress on
// stderr and a summary on stdout; it returns the run's target description.
func recoverRun(tt task.TargetTask, env *task.Env, r recoveryRun, o analysis.RecoveryOptions) (analysis.RecoveryRun, string, error) {
	seed, err := strconv.ParseUint(r.fields["seed"], 10, 64)
	if err != nil {
		return analysis.RecoveryRun{}, "", fmt.Errorf("run %s: field seed of %s: %w", r.dir, bo.ConfigFile, err)
	}
	res := analysis.RecoveryRun{Name: r.name, Method: analysis.MethodLabel(r.fields["strategy"], r.fields["elbo"], r.fields["warp"] == "true"), Seed: seed}
	var target string
	start := time.Now()
	open := func(v int) (analysis.RecoveryModel, error) {
		m, err := tt.OpenTargetModel(env, r.files[v], r.fields)
		if err != nil {
			return nil, fmt.Errorf("%s with the target of %s: %w", r.files[v], filepath.Join(r.dir, bo.ConfigFile), err)
		}
		target = m.Target()
		return m, nil
	}
	o.Progress = func(s analysis.RecoveryStep) {
		which := fmt.Sprintf("model-v%d", s.Version)
		if s.Version < 0 {
			which = "pretrained"
		}
		raised := ""
		if s.Raised {
			raised = ", raised"
		}
		fmt.Fprintf(os.Stderr, "%s: l=%d (%s) p %.2f (carried %.2f, encoder mean %.2f, %d candidates%s) %.0f s\n", r.name,
			analysis.RecoveryL(s.Version), which, s.P, s.Carried, s.AtMean, s.Drawn, raised, time.Since(start).Seconds())
	}
	steps, err := analysis.DomainRecovery(r.versions, open, o)
	if err != nil {
		return res, "", fmt.Errorf("run %s: %w", r.dir, err)
	}
	res.Steps = steps
	ps := make([]string, len(steps))
	for i, s := range steps {
		ps[i] = fmt.Sprintf("%.2f", s.P)
	}
	fmt.Printf("%s (%s, seed %d): p = %s\n", r.name, res.Method, seed, strings.Join(ps, " "))
	return res, target, nil
}

// readRecoveryRuns reads each run directory's configuration (it must be a
// run of the task) and model versions, and matches the pretrained VAEs to
// the runs by digest.
func readRecoveryRuns(dirs []string, taskName string, pretrained []string) ([]recoveryRun, error) {
	digests := map[string]string{}
	for _, p := range pretrained {
		sum, err := fileSHA256(p)
		if err != nil {
			return nil, fmt.Errorf("--pretrained: %w", err)
		}
		digests[sum] = p
	}
	used := map[string]bool{}
	var runs []recoveryRun
	for _, dir := range dirs {
		r, err := readRecoveryRun(dir, taskName)
		if err != nil {
			return nil, err
		}
		if len(pretrained) > 0 {
			p, ok := digests[r.fields["vae-sha256"]]
			if !ok {
				return nil, fmt.Errorf("run %s: field vae-sha256 %q of %s matches none of --pretrained", dir, r.fields["vae-sha256"], bo.ConfigFile)
			}
			used[p] = true
			r.versions, r.files[-1] = append([]int{-1}, r.versions...), p
		}
		runs = append(runs, r)
	}
	for _, p := range pretrained {
		if !used[p] {
			return nil, fmt.Errorf("--pretrained %s is the pretrained VAE of none of the runs", p)
		}
	}
	nameRuns(runs)
	return runs, nil
}

// readRecoveryRun reads one run directory.
func readRecoveryRun(dir, taskName string) (recoveryRun, error) {
	fs, err := bo.ReadConfigFields(dir)
	if err != nil {
		return recoveryRun{}, fmt.Errorf("run %s: %w", dir, err)
	}
	r := recoveryRun{dir: dir, fields: map[string]string{}}
	for _, f := range fs {
		r.fields[f.Name] = f.Value
	}
	if got := r.fields["task"]; got != taskName {
		return r, fmt.Errorf("run %s: field task of %s is %q, want %q", dir, bo.ConfigFile, got, taskName)
	}
	if r.versions, r.files, err = bo.ModelVersions(dir); err != nil {
		return r, fmt.Errorf("run %s: %w", dir, err)
	}
	if len(r.versions) == 0 {
		return r, fmt.Errorf("run %s: no model versions (model-v<N>/model.pt): the run has not retrained yet, or was not made with optimize --run-dir", dir)
	}
	return r, nil
}

// nameRuns labels runs by their directory's name, or by the path as given
// when two runs share a name.
func nameRuns(runs []recoveryRun) {
	count := map[string]int{}
	for _, r := range runs {
		count[filepath.Base(filepath.Clean(r.dir))]++
	}
	for i, r := range runs {
		runs[i].name = filepath.Base(filepath.Clean(r.dir))
		if count[runs[i].name] > 1 {
			runs[i].name = filepath.Clean(r.dir)
		}
	}
}
