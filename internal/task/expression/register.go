package expression

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	gvae "github.com/tlbo-native/tlbo-native/models/expression"
)

// TaskName is the expression task's name in the registry.
const TaskName = "expression"

// Defaults are the expression task's hyperparameters (docs/design.md,
// from the paper's appendix and T-LBO's expression scripts):
// the grammar VAE pretrained for 300 epochs at batch 256 with k = 1e-3, the
// KL weight annealed from 1e-6 to 0.04, the learning rate lowered by 0.2
// after 20 epochs without a better validation loss down to lr/10 (T-LBO's
// expr_model_pt.py, not weighted retraining's Keras schedule), beta_metric
// 10, retraining one epoch without gradient clipping (as the authors), a GP
// of 2500 + 500 points with 500 inducing points.
var Defaults = task.Defaults{
	Epochs: 300, BatchSize: 256, LR: 1e-3, K: 1e-3, Beta: models.AnnealedBeta(1e-6, 0.04, 500), GradClip: 0,
	PlateauFactor: 0.2, PlateauPatience: 20, PlateauFloor: 0.1,
	MetricWeight: 10, Eta: models.DefaultEta, PredWeight: 1,
	InitialRetrainEpochs: 1, RetrainEpochs: 1, RetrainBatchSize: 256, RetrainGradClip: 0,
	Budget: 500, RetrainEvery: 50, RankK: 1e-3, NBest: 2500, NRand: 500, Inducing: 500,
}

func init() {
	task.Register(task.Define(TaskSpec()))
	task.RegisterCommand("bench", benchGVAEStepCommand)
}

// optTarget is the expression task's one option: the target curve.
const optTarget = "target"

// TaskSpec describes the expression task for the registry: objects are
// expressions in the data set's spaced text form, network examples their
// one-hot rule matrices.
func TaskSpec() task.Spec[string, models.Dense] {
	return task.Spec[string, models.Dense]{
		Name:     TaskName,
		Usage:    "univariate arithmetic expressions fitted to a target curve (grammar VAE; lower is better)",
		Defaults: Defaults,
		Options: append([]task.Option{task.StringOption(optTarget, DefaultTarget,
			"target expression of x (the data set was scored with the default; the paper writes 1/3 * x * sin(x*x))",
			task.VerbData, task.VerbScore, task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.FileOption(optExpressions, "data: your own library as the data set, one expression per line, optionally a tab "+
				"and a score (every line or none), written to --out/expression/ for --data-dir", task.VerbData),
		}, task.ProgramOptions()...),
		Networks: []string{gvae.NetworkKind},
		Objective: func(env *task.Env) (task.Objective[string], error) {
			return newTaskObjective(env.Opts.String(optTarget))
		},
		Dataset:      dataset,
		BuildData:    buildData,
		Score:        scoreArgs,
		Example:      func(text string) (models.Dense, error) { return Encode(text) },
		NewNetwork:   newNetwork,
		Decode:       decode,
		Report:       report,
		ReadObjects:  ReadLines,
		WriteObjects: task.WriteLines,
		Import:       importCheckpoint,
	}
}

// taskObjective is the expression objective for the BO loop.
type taskObjective struct{ o *Objective }

func newTaskObjective(target string) (taskObjective, error) {
	o, err := NewObjective(target)
	return taskObjective{o}, err
}

func (t taskObjective) Score(text string) (float64, error) { return t.o.TryScore(text) }
func (taskObjective) FailureScore() float64                { return FailureScore }
func (taskObjective) Deterministic() bool                  { return true }
func (taskObjective) Maximize() bool                       { return !LowerIsBetter }

// Key returns the expression without spaces (tokens are unambiguous without
// them), so that spacing does not make two expressions differ.
func (taskObjective) Key(text string) string { return strings.ReplaceAll(text, " ", "") }

// Parse returns the spaced form of a key.
func (taskObjective) Parse(key string) (string, error) { return Canonical(key) }

func (t taskObjective) Describe() map[string]string { return map[string]string{"target": t.o.Target()} }

// Canonical returns an expression of the grammar in the spaced form that
// decoding produces.
func Canonical(text string) (string, error) {
	rules, err := Parse(text)
	if err != nil {
		return "", err
	}
	return Decode(rules)
}

func loadOptions(env *task.Env) LoadOptions {
	return LoadOptions{DataDir: env.DataDir, Target: env.Opts.String(optTarget), Seed: env.Seed, Synthetic: env.Synthetic, Log: env.Stderr}
}

// dataset returns the reference's training subset (seed 0) in canonical form.
func dataset(env *task.Env) ([]string, []float64, string, error) {
	ds, err := Load(loadOptions(env))
	if err != nil {
		return nil, nil, "", err
	}
	if env.Opts.Bool(task.DataScoresOption) {
		// A library of the user's, scored by the user: all of it.
		scores, err := userScores(env, len(ds.Exprs))
		return ds.Exprs, scores, fmt.Sprintf("%s, all %d with the file's own scores", ds.Source, len(ds.Exprs)), err
	}
	sub := ds.Select(Subset(ds.Scores, 0))
	return sub.Exprs, sub.Scores, fmt.Sprintf("%s, subset of %d, target %s", ds.Source, len(sub.Exprs), ds.Target), nil
}

// buildData writes expression_full.npz and expression_subset.npz.
func buildData(env *task.Env, dir string) error {
	if uint64(uint32(env.Seed)) != env.Seed {
		return fmt.Errorf("seed %d: must be below 2^32 (numpy's seed range)", env.Seed)
	}
	if env.Opts.String(optExpressions) != "" {
		return importLibrary(env, dir)
	}
	start := time.Now()
	d, err := Load(loadOptions(env))
	if err != nil {
		return err
	}
	full, subset, err := WriteDataNPZ(dir, d, uint32(env.Seed))
	if err != nil {
		return err
	}
	w := env.Stdout
	fmt.Fprintf(w, "source %s\ntarget %s\nexpressions %d\nbest_score %.6g\n", d.Source, d.Target, len(d.Exprs), slices.Min(d.Scores))
	fmt.Fprintf(w, "full %s\nsubset %s (%d points)\nseconds %.2f\n", full, subset, len(Subset(d.Scores, uint32(env.Seed))),
		time.Since(start).Seconds())
	return nil
}

// scoreArgs prints min(7, log(1 + MSE)) for each expression of args (or
// of stdin's lines when there are none): one line per input in input order,
// an input that cannot be scored (an empty line included) as the failure
// score, a tab and the reason. It returns an error after printing every line
// when any failed.
func scoreArgs(env *task.Env, args []string) error {
	obj, err := NewObjective(env.Opts.String(optTarget))
	if err != nil {
		return err
	}
	if len(args) == 0 {
		if args, err = inputLines(os.Stdin, "stdin"); err != nil {
			return err
		}
	}
	return scoreLines(env.Stdout, obj, args)
}

// scoreLines writes one line per expression of in (see scoreArgs).
func scoreLines(out io.Writer, obj *Objective, in []string) error {
	w := bufio.NewWriter(out)
	failed := 0
	for _, e := range in {
		s, err := FailureScore, errors.New("empty line")
		if strings.TrimSpace(e) != "" {
			s, err = obj.TryScore(e)
		}
		line := strconv.FormatFloat(s, 'g', -1, 64)
		if err != nil {
			failed++
			line += "\t" + strings.Join(strings.Fields(err.Error()), " ")
		}
		fmt.Fprintln(w, line)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("score expression: %d of %d expressions failed (their lines: the failure score %g, a tab, the reason)", failed, len(in), FailureScore)
	}
	return nil
}

// inputLines reads every line of r, blank ones included, spaces trimmed.
func inputLines(r io.Reader, name string) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return lines, nil
}

// Grammar returns the expression grammar in the form the grammar VAE takes.
func Grammar() gvae.Grammar {
	s := GrammarSpec()
	return gvae.Grammar{LHS: s.LHS, RHSNonterminals: s.RHSNonterminals, NumNonterminals: s.NumNonterminals,
		Start: s.Start, Padding: s.Padding, Productions: s.Productions}
}

func newNetwork(_ *task.Env, latent int) (models.VAE[models.Dense], error) {
	cfg := gvae.DefaultConfig(Grammar())
	if latent > 0 {
		cfg.Latent = latent
	}
	return gvae.New(cfg)
}

// decode decodes latent points with the grammar VAE: greedily, or with
// grammar-masked Gumbel-max sampling (opts.Attempts samples, the most
// frequent valid expression kept) drawn from seed.
func decode(net models.VAE[models.Dense], z []float64, opts task.DecodeOptions, seed uint64) ([]string, []bool, error) {
	m, ok := net.(*gvae.Model)
	if !ok {
		return nil, nil, fmt.Errorf("expression decode: network %T is not the grammar VAE", net)
	}
	attempts := opts.Attempts
	if attempts == 0 {
		attempts = gvae.DefaultAttempts
	}
	var rng *rand.Rand
	if opts.Greedy {
		attempts = 0
	} else {
		rng = rand.New(rand.NewPCG(seed, 0x6465636f6465))
	}
	rules, err := m.Decode(z, attempts, rng)
	if err != nil {
		return nil, nil, err
	}
	texts, valid := make([]string, len(rules)), make([]bool, len(rules))
	for i, r := range rules {
		if r == nil {
			continue
		}
		if texts[i], err = Decode(r); err == nil {
			valid[i] = true
		}
	}
	return texts, valid, nil
}

// report prints the validation reconstruction accuracy (greedy and
// sampled) and the validity of prior decodes.
func report(env *task.Env, net models.VAE[models.Dense], val []models.Dense, opts task.ReportOptions) error {
	m, ok := net.(*gvae.Model)
	if !ok {
		return fmt.Errorf("expression report: network %T is not the grammar VAE", net)
	}
	attempts := opts.Decode.Attempts
	if attempts == 0 {
		attempts = gvae.DefaultAttempts
	}
	rng := rand.New(rand.NewPCG(env.Seed, 0x7265706f7274))
	if len(val) > 0 {
		x := slices.Concat(val...)
		greedy, err := m.ReconstructionAccuracy(x, 0, nil)
		if err != nil {
			return err
		}
		sampled, err := m.ReconstructionAccuracy(x, attempts, rng)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "val_reconstruction_greedy %.4f\nval_reconstruction_sampled %.4f (%d attempts)\n", greedy, sampled, attempts)
	}
	if n := opts.PriorSamples; n > 0 {
		valid, distinct, err := m.PriorValidity(n, attempts, rng)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "prior_validity %.4f (%d samples, %d distinct valid)\n", valid, n, distinct)
	}
	return nil
}

// ReadLines reads a text file of expressions, one per line (blank lines
// skipped), in canonical spaced form; a line outside the grammar is kept as
// written, so that encoding refuses it as one object (naming it, its
// error, and --skip-invalid, which encodes the others) rather than failing
// the file here.
func ReadLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lines, err := readTextLines(f, path)
	if err != nil {
		return nil, err
	}
	for i, l := range lines {
		if c, err := Canonical(l); err == nil {
			lines[i] = c
		}
	}
	return lines, nil
}

func readTextLines(f *os.File, name string) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return lines, nil
}

// importCheckpoint converts the authors' grammar VAE (a Lightning checkpoint
// or a bare state dict of the same module layout: encoder.*, decoder.*,
// prior_mu, prior_sigma) into a checkpoint of ours; unknown tensors are
// dropped with a note.
func importCheckpoint(env *task.Env, req task.ImportRequest) error {
	net, err := gvae.New(gvae.DefaultConfig(Grammar()))
	if err != nil {
		return err
	}
	defer net.Close()
	known := map[string]bool{}
	for _, n := range net.StateDict() {
		known[n.Name] = true
	}
	return task.ImportStateDict(env, req.From, req.Out, net, func(name string) (string, bool) {
		return name, known[name]
	})
}
