package molecule

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// TaskName is the molecule task's name in the registry.
const TaskName = "molecule"

// The molecule task's options.
const (
	optVocab     = "vocab"
	optMolecules = "molecules"
	optHidden    = "hidden"
	optCands     = "candidates"
	optWorkers   = "workers"
	optLimit     = "n"
	optRDKitLog  = "rdkit-log"
	optCacheDir  = "cache-dir"
	optObjective = task.ObjectiveOption
	optInitial   = task.InitialOption
	optSmiles    = "smiles"
	optFeaturise = "featurise"
)

// Defaults are the molecule task's hyperparameters (docs/design.md: the
// paper's appendix, the authors' molecule scripts and icml18-jtnn): the
// JT-VAE (latent 56) with the KL weight fixed at 1e-3, pretrained (or
// fine-tuned) at the authors' batch of 32 with clipping at 20, Adam 1e-3
// without a plateau schedule, decayed by 0.9 every 40,000 steps as
// icml18-jtnn's fast_molvae (a fine-tuning of a few epochs never reaches the
// first decay), beta_metric 1,
// retraining 0.1 epoch at batch 128 with clipping at 20 and the KL weight
// 1e-3 whatever the network was pretrained at (the authors' robust_opt_chem
// retrains at beta_final 0.001 a JT-VAE trained at 0.005; ours was
// pretrained on fast_molvae's annealing, 0.026 at its end), budget 500, r 50,
// k 1e-3, a GP over the 2000 best + 8000 random points with 500 inducing
// points. The authors fit their molecule GP on raw latent points and raw
// scores; here, as for every task, the GP's inputs are normalised to the
// unit box and its targets standardised (docs/design.md says why).
var Defaults = task.Defaults{
	Epochs: 1, BatchSize: 32, LR: 1e-3, K: 1e-3, Beta: models.FixedBeta(1e-3), GradClip: models.DefaultGradClip,
	PlateauFactor: 0.2, PlateauPatience: 20, PlateauFloor: 1, DecayFactor: 0.9, DecayEvery: 40000,
	MetricWeight: 1, Eta: models.DefaultEta, PredWeight: 1,
	RetrainBeta: 1e-3, InitialRetrainEpochs: 0.1, RetrainEpochs: 0.1, RetrainBatchSize: 128, RetrainGradClip: models.DefaultGradClip,
	Budget: 500, RetrainEvery: 50, RankK: 1e-3, NBest: 2000, NRand: 8000, Inducing: 500,
}

func init() {
	task.Register(task.Define(TaskSpec()))
	task.RegisterCommand("", moleculeCommand)
	task.RegisterCommand("bench", benchJTVAEStepCommand)
	task.RegisterCommand("bench", benchVocabCoverageCommand)
	task.RegisterCommand("bench", benchCacheMeasureCommand)
}

// TaskSpec describes the molecule task for the registry: objects are SMILES
// strings, network examples their JT-VAE featurisation over the vocabulary
// bound from the task's options.
func TaskSpec() task.Spec[string, jtvae.Example] {
	return task.Spec[string, jtvae.Example]{
		Name:     TaskName,
		Usage:    "molecules (SMILES) scored by --objective: penalised logP (the paper's), QED or a PMO task (JT-VAE; higher is better)",
		Defaults: Defaults,
		Options: append([]task.Option{
			task.FileOption(optVocab, "cluster vocabulary file (default: a checkpoint's own vocabulary; for a new network and data, "+
				ShippedVocab+" in the data directory); one that differs from the checkpoint's is refused",
				task.VerbData, task.VerbTrain, task.VerbOptimize, task.VerbEncode, task.VerbAnalyze, task.VerbImport),
			task.FileOption(optMolecules, "data set file written by the data verb (default: "+DataFileName+" in the data directory)",
				task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.IntOption(optHidden, 450, 1, "hidden size of a new JT-VAE", task.VerbTrain),
			task.BoolOption(optCands, "also enumerate every node's attachment candidates (slow)", task.VerbData),
			task.IntOption(optLimit, 0, 0, "only the first N molecules of the training split, no validation or test split (0: all)", task.VerbData),
			task.IntOption(optWorkers, 0, 0, "goroutines featurising and decoding molecules (0: all CPUs)",
				task.VerbData, task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.StringOption(optCacheDir, "", "cache of the featurised training molecules and of their scores under an --objective other than plogp "+
				"(default: next to the data set, DIR/molecules.examples and DIR/molecules.scores; none: off)",
				task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.StringOption(optFeaturise, FeaturiseOnDemand, "featurise the training split's molecules "+FeaturiseOnDemand+
				" (each the first time the GP's points or a retraining mini-batch need it, into the cache of --"+optCacheDir+
				"; needs a data file of this release's data molecule) or "+FeaturiseFull+" (all of them first, as train does); "+
				"the run's queries are the same either way", task.VerbOptimize),
			task.StringOption(optObjective, DefaultObjective, "objective, maximised: plogp (penalised logP, the paper's; the data file's scores), "+
				"qed (RDKit's QED) or a PMO task ("+strings.Join(pmoNames(), ", ")+"); other than plogp, the training "+
				"molecules are scored once and cached (--cache-dir); optimize also takes "+task.CommandPrefix+"\"CMD ARGS\", your program "+
				"(docs/objectives.md)",
				task.VerbScore, task.VerbOptimize, task.VerbAnalyze),
			task.IntOption(optInitial, 0, 0, "the PMO protocol: start from N molecules drawn at random (--seed) from the training split "+
				"and scored with --objective (a program included), the run's first N oracle calls (recorded in RUN_DIR/"+bo.InitialFile+
				" for analyze pmo; --budget counts the loop's calls after them); 0: the whole training split with its scores, no calls",
				task.VerbOptimize),
			task.BoolOption(optRDKitLog, "let RDKit print its own log lines on stderr",
				task.VerbData, task.VerbScore, task.VerbTrain, task.VerbOptimize, task.VerbEncode, task.VerbDecode, task.VerbAnalyze),
			task.FileOption(optSmiles, "data: your own library instead of ZINC250K, one SMILES per line, optionally a score "+
				"(whitespace-separated; every line or none), all of it the training split", task.VerbData),
		}, task.ProgramOptions(optObjective, optInitial)...),
		Networks:     []string{jtvae.NetworkKind},
		Objective:    objective,
		Dataset:      dataset,
		InitialCalls: func(env *task.Env) bool { return env.Opts.Int(optInitial) > 0 },
		Diversity:    Diversity,
		BuildData:    buildData,
		Score:        scoreArgs,
		Example:      example,
		Materialise:  materialise,
		Bind:         bind,
		NewNetwork:   newNetwork,
		Decode:       decode,
		DecodeWidth:  decodeWidth,
		Report:       report,
		ReadObjects:  ReadSmiles,
		WriteObjects: task.WriteLines,
		Import:       importCheckpoint,
		Plots:        plots,
	}
}

// objective is the objective of --objective.
func objective(env *task.Env) (task.Objective[string], error) {
	return ParseObjective(env.Opts.String(optObjective))
}

// bound is the featuriser of the vocabulary that the last verb bound (its
// network's), and the cached featurisation of the data set's molecules over
// it, by SMILES.
var bound struct {
	sync.Mutex
	vocab  Vocab
	f      *Featuriser
	cached map[string]Cached
	lazy   *lazyCache // the data set's featurisation on demand (lazy.go), or nil
}

// bind makes the vocabulary of the verb's network the featuriser's, so that
// molecules are featurised over the clusters the network knows (a
// checkpoint imported with its own vocabulary included). A --vocab whose
// clusters differ from the network's is refused, naming the difference.
func bind(env *task.Env, net models.VAE[jtvae.Example]) error {
	m, ok := net.(*jtvae.Model)
	if !ok {
		return fmt.Errorf("molecule task: network %T is not the JT-VAE", net)
	}
	v := Vocab(m.Config().Vocab)
	if len(v) == 0 { // a header without its vocabulary
		var err error
		if v, _, err = vocabulary(env); err != nil {
			return err
		}
	} else if p := env.Opts.String(optVocab); p != "" {
		given, err := ReadVocab(p)
		if err != nil {
			return fmt.Errorf("--%s: %w", optVocab, err)
		}
		if err := sameClusters(given, v); err != nil {
			return fmt.Errorf("--%s %s is not the checkpoint's vocabulary: %w; leave --%s out to use the checkpoint's", optVocab, p, err, optVocab)
		}
	}
	bindVocab(v)
	setDecodeWorkers(env.Opts.Int(optWorkers))
	return nil
}

// bindVocab makes v the featuriser's vocabulary.
func bindVocab(v Vocab) {
	bound.Lock()
	defer bound.Unlock()
	if bound.f == nil || !slices.Equal(bound.vocab, v) {
		bound.f, bound.vocab, bound.cached, bound.lazy = NewFeaturiser(v), slices.Clone(v), nil, nil
	}
}

// sameClusters returns nil when a (a --vocab) and b (the checkpoint's) hold
// the same clusters, in any order (featurisation maps labels onto the
// network's vocabulary by cluster), else what differs.
func sameClusters(a, b Vocab) error {
	in := func(v Vocab) map[string]bool {
		m := make(map[string]bool, len(v))
		for _, s := range v {
			m[s] = true
		}
		return m
	}
	ia, ib := in(a), in(b)
	var extra, lack []string
	for _, s := range a {
		if !ib[s] {
			extra = append(extra, s)
		}
	}
	for _, s := range b {
		if !ia[s] {
			lack = append(lack, s)
		}
	}
	if len(extra) == 0 && len(lack) == 0 {
		return nil
	}
	first := func(xs []string) string {
		if len(xs) == 0 {
			return ""
		}
		return " (the first: " + xs[0] + ")"
	}
	return fmt.Errorf("%d clusters, the checkpoint's %d: %d not in the checkpoint's%s, %d of the checkpoint's missing%s",
		len(a), len(b), len(extra), first(extra), len(lack), first(lack))
}

// example returns the cached featurisation of a data-set molecule, else
// featurises it.
func example(smiles string) (jtvae.Example, error) {
	bound.Lock()
	f, lazy := bound.f, bound.lazy
	c, ok := bound.cached[smiles]
	bound.Unlock()
	if ok {
		return c.Example, c.Err
	}
	if lazy != nil {
		if c, ok := lazy.lookup(smiles); ok {
			return c.Example, c.Err
		}
	}
	if f == nil {
		return jtvae.Example{}, fmt.Errorf("molecule %q: no vocabulary bound (give --%s)", smiles, optVocab)
	}
	return f.Featurise(smiles)
}

// materialise featurises the data-set molecules of ex that example left to
// be made on demand (lazy.go).
func materialise(ex []jtvae.Example) ([]jtvae.Example, error) {
	bound.Lock()
	lazy := bound.lazy
	bound.Unlock()
	if lazy == nil || !slices.ContainsFunc(ex, isPlaceholder) {
		return ex, nil
	}
	return lazy.materialise(ex)
}

// vocabulary returns the vocabulary of --vocab, else the data directory's
// shipped one, else (with --synthetic-data) the clusters of the built-in
// sample; path names it.
func vocabulary(env *task.Env) (Vocab, string, error) {
	if p := env.Opts.String(optVocab); p != "" {
		v, err := ReadVocab(p)
		return v, p, err
	}
	p, derr := ShippedVocabPath(env.DataDir)
	if derr == nil {
		v, err := ReadVocab(p)
		if err == nil || !errors.Is(err, os.ErrNotExist) || !env.Synthetic {
			return v, p, err
		}
	} else if !env.Synthetic {
		return nil, "", fmt.Errorf("molecule vocabulary: give --%s or a data directory: %w", optVocab, derr)
	}
	v, err := sampleVocab()
	return v, "synthetic sample", err
}

// ShippedVocabPath returns the path of the JT-VAE vocabulary shipped in the
// data directory dir ("": found as FindDataDir finds it).
func ShippedVocabPath(dir string) (string, error) {
	dir, err := FindDataDir(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ShippedVocab), nil
}

// sampleVocab is the cluster vocabulary of the built-in sample.
func sampleVocab() (Vocab, error) {
	seen := map[string]bool{}
	var v Vocab
	for _, s := range sampleSmiles {
		t, err := chem.Decompose(s)
		if err != nil {
			return nil, fmt.Errorf("sample molecule %q: %w", s, err)
		}
		for _, c := range t.Vocabulary() {
			if !seen[c] {
				seen[c] = true
				v = append(v, c)
			}
		}
		t.Close()
	}
	return v, nil
}

// dataset returns the training split of `data molecule`'s file (molecules
// every stage handled), or with --synthetic-data and no file the built-in
// sample, labelled by --objective: penalised logP from the file's scores
// (the sample's scored here), another objective's scores computed once and
// cached (objectiveScores). With --initial N (optimize), only N molecules
// drawn with the seed and scored with the objective (initialMolecules).
func dataset(env *task.Env) ([]string, []float64, string, error) {
	obj, err := ParseObjective(env.Opts.String(optObjective))
	if err != nil {
		return nil, nil, "", err
	}
	path := env.Opts.String(optMolecules)
	if path == "" {
		if dir, err := FindDataDir(env.DataDir); err == nil {
			path = filepath.Join(dir, DataFileName)
		}
	}
	if path != "" {
		smiles, scores, clusters, err := readTrainSplit(path)
		if err == nil || !errors.Is(err, os.ErrNotExist) || !env.Synthetic {
			switch {
			case errors.Is(err, os.ErrNotExist):
				return nil, nil, "", fmt.Errorf("%w (write it with `data molecule --out DIR` and give --%s DIR/%s)", err, optMolecules, DataFileName)
			case err != nil:
				return nil, nil, "", err
			case env.Opts.Bool(task.DataScoresOption):
				if scores, err = readUserScores(path); err != nil {
					return nil, nil, "", err
				}
				smiles, scores, err = useCache(env, path, smiles, scores, clusters)
				return smiles, scores, fmt.Sprintf("%s, training split of %d, the file's own scores", path, len(smiles)), err
			case env.Opts.Int(optInitial) > 0:
				return initialMolecules(env, obj, smiles, scores, fmt.Sprintf("%s, training split of %d", path, len(smiles)))
			}
			if obj.f != nil {
				if scores, err = objectiveScores(env, obj, path, smiles); err != nil {
					return nil, nil, "", err
				}
			}
			smiles, scores, err = useCache(env, path, smiles, scores, clusters)
			return smiles, scores, fmt.Sprintf("%s, training split of %d", path, len(smiles)) + scoredBy(obj), err
		}
	} else if !env.Synthetic {
		return nil, nil, "", fmt.Errorf("molecule data set: give --%s (a file of `data molecule`) or --data-dir", optMolecules)
	}
	if env.Opts.Bool(task.DataScoresOption) {
		return nil, nil, "", fmt.Errorf("--%s: the built-in sample has no scores of yours (import your library with data molecule --%s FILE)",
			task.DataScoresOption, optSmiles)
	}
	source := fmt.Sprintf("synthetic: %d built-in ZINC molecules", len(sampleSmiles))
	scores := make([]float64, len(sampleSmiles))
	for i, s := range sampleSmiles {
		scores[i], _ = Score(s) // FailureScore on error
	}
	if env.Opts.Int(optInitial) > 0 {
		return initialMolecules(env, obj, slices.Clone(sampleSmiles), scores, source)
	}
	if obj.f != nil {
		scores = scoreAll(env.Context(), obj, sampleSmiles, env.Opts.Int(optWorkers), nil)
	}
	return slices.Clone(sampleSmiles), scores, source + scoredBy(obj), nil
}

// scoredBy is what a data set's source adds for an objective other than
// penalised logP, whose sources stay as they were before --objective.
func scoredBy(obj Objective) string {
	if obj.f == nil {
		return ""
	}
	return ", scored by " + obj.Name()
}

// readTrainSplit reads the training split's SMILES, scores and clusters
// from a molecules.npz of Build; clusters is nil when the file has no
// ClusterArray, or no RecoveredArray (its ok array may then hold molecules
// that only a featurisation finds wanting).
func readTrainSplit(path string) ([]string, []float64, []string, error) {
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return nil, nil, nil, err
	}
	f := map[string]any{}
	for _, a := range arrays {
		f[a.Name] = a.Data
	}
	smiles, ok1 := f["smiles"].([]string)
	score, ok2 := f["score"].([]float64)
	split, ok3 := f["split"].([]int64)
	good, ok4 := f["ok"].([]bool)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, nil, nil, fmt.Errorf("%s: want arrays smiles (str), score (float64), split (int64), ok (bool)", path)
	}
	n := len(smiles)
	if len(score) != n || len(split) != n || len(good) != n {
		return nil, nil, nil, fmt.Errorf("%s: arrays of %d, %d, %d, %d entries", path, n, len(score), len(split), len(good))
	}
	clusters, hasClusters := f[ClusterArray].([]string)
	if _, there := f[ClusterArray]; there && (!hasClusters || len(clusters) != n) {
		return nil, nil, nil, fmt.Errorf("%s: array %s: want %d strings", path, ClusterArray, n)
	}
	if _, checked := f[RecoveredArray]; !checked {
		hasClusters = false
	}
	var s, c []string
	var y []float64
	for i := range smiles {
		if split[i] == splitTrain && good[i] {
			s, y = append(s, smiles[i]), append(y, score[i])
			if hasClusters {
				c = append(c, clusters[i])
			}
		}
	}
	if len(s) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no usable training molecule", path)
	}
	return s, y, c, nil
}

// buildData runs Build into dir with the task's options (ImportSmiles
// with --smiles).
func buildData(env *task.Env, dir string) error {
	chem.SetLogging(env.Opts.Bool(optRDKitLog))
	if env.Opts.String(optSmiles) != "" {
		return importSmiles(env, dir)
	}
	data, err := FindDataDir(env.DataDir)
	if err != nil {
		return err
	}
	o := BuildOptions{DataDir: data, OutDir: dir, Vocab: env.Opts.String(optVocab), Candidates: env.Opts.Bool(optCands),
		Workers: env.Opts.Int(optWorkers), Limit: env.Opts.Int(optLimit), Ctx: env.Ctx}
	if env.Progress != nil {
		o.Progress = func(done, total int) { env.Progress.Count("molecules", done, total) }
	}
	rep, err := Build(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "molecules %d, failed %d, vocabulary %d (not in the shipped one %d, shipped but not made %d); see %s\n",
		rep.Total, len(rep.Failures), len(rep.Vocab), len(rep.OnlyOurs), len(rep.OnlyShipped), filepath.Join(dir, ReportFileName))
	return nil
}

// scoreArgs prints "SMILES<tab>score" (under --objective) for each SMILES of args (or of the
// first field of each of stdin's lines): one line per input in input order,
// an input that cannot be scored (an empty line included) with the failure
// score, a tab and the reason. It returns an error after printing every line
// when any failed.
func scoreArgs(env *task.Env, args []string) error {
	chem.SetLogging(env.Opts.Bool(optRDKitLog))
	if len(args) == 0 {
		var err error
		if args, err = inputLines(os.Stdin, "stdin"); err != nil {
			return err
		}
	}
	obj, err := ParseObjective(env.Opts.String(optObjective))
	if err != nil {
		return err
	}
	return scoreLines(env.Stdout, obj, args)
}

// scoreLines writes one line per SMILES of in under obj (see scoreArgs).
func scoreLines(out io.Writer, obj Objective, in []string) error {
	w := bufio.NewWriter(out)
	failed := 0
	for _, s := range in {
		v, err := obj.Score(s)
		fmt.Fprintf(w, "%s\t%s", s, strconv.FormatFloat(v, 'g', -1, 64))
		if err != nil {
			failed++
			fmt.Fprintf(w, "\t%s", strings.Join(strings.Fields(err.Error()), " "))
		}
		fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("score molecule: %d of %d molecules failed (their lines: SMILES, the failure score %g, the reason, tab-separated)",
			failed, len(in), obj.FailureScore())
	}
	return nil
}

// inputLines reads the first field of every line of r, "" for a blank one.
func inputLines(r io.Reader, name string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		first := ""
		if fs := strings.Fields(sc.Text()); len(fs) > 0 {
			first = fs[0]
		}
		out = append(out, first)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

// newNetwork returns a JT-VAE over the bound vocabulary with --hidden.
func newNetwork(env *task.Env, latent int) (models.VAE[jtvae.Example], error) {
	v, _, err := vocabulary(env)
	if err != nil {
		return nil, err
	}
	cfg := jtvae.DefaultConfig(v)
	if h := env.Opts.Int(optHidden); h > 0 {
		cfg.Hidden = h
	}
	if latent > 0 {
		if latent%2 != 0 {
			return nil, fmt.Errorf("latent %d: the JT-VAE splits it evenly between tree and graph", latent)
		}
		cfg.Latent, cfg.LatentTree = latent, latent/2
	}
	return jtvae.New(cfg)
}

// decode decodes latent points with the checkpoint's vocabulary (Decoder):
// greedily by default and with opts.Greedy (the authors' decode_deterministic,
// which their BO uses); with opts.Attempts > 0 and not Greedy, that many
// stochastic decodings (their prob_decode) from seed, keeping each point's
// most frequent molecule.
func decode(net models.VAE[jtvae.Example], z []float64, opts task.DecodeOptions, seed uint64) ([]string, []bool, error) {
	m, ok := net.(*jtvae.Model)
	if !ok {
		return nil, nil, fmt.Errorf("molecule decode: network %T is not the JT-VAE", net)
	}
	d, err := NewDecoder(m, nil)
	if err != nil {
		return nil, nil, err
	}
	attempts := 1
	if !opts.Greedy && opts.Attempts > 0 {
		attempts = opts.Attempts
		d.Sampled, d.Seed = true, seed
	}
	d.Workers = int(decodeWorkers.Load())
	lat := m.LatentDim()
	n := len(z) / lat
	smiles, errs, err := d.Decode(slices.Repeat(float32s(z), attempts))
	if err != nil {
		return nil, nil, err
	}
	out, valid := make([]string, n), make([]bool, n)
	for i := range n {
		counts := map[string]int{}
		for a := range attempts {
			k := a*n + i
			if errs[k] != nil || smiles[k] == "" {
				continue
			}
			if counts[smiles[k]]++; counts[smiles[k]] > counts[out[i]] || !valid[i] {
				out[i], valid[i] = smiles[k], true
			}
		}
	}
	return out, valid, nil
}

// decodeWidth is the number of molecules a greedy decoding handles at
// once, its workers: each molecule costs its own tree search and assembly,
// and greedy molecules depend on nothing but their latent point. Sampled
// decoding draws each row from the seed's stream for its place in the call,
// so it reports 0.
func decodeWidth(opts task.DecodeOptions) int {
	if !opts.Greedy && opts.Attempts > 0 {
		return 0
	}
	return workerCount(int(decodeWorkers.Load()), math.MaxInt)
}

// importCheckpoint converts the authors' JT-VAE checkpoint with the
// vocabulary of --vocab (or the data directory's).
func importCheckpoint(env *task.Env, req task.ImportRequest) error {
	v, _, err := vocabulary(env)
	if err != nil {
		return err
	}
	net, notes, err := jtvae.ImportModel(req.From, v)
	if err != nil {
		return err
	}
	defer net.Close()
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "import %s: %s\n", req.From, n)
	}
	if err := models.SaveNetwork(req.Out, net); err != nil {
		return err
	}
	cfg := net.Config()
	fmt.Fprintf(env.Stdout, "imported %s (hidden %d, latent %d, %d clusters) from %s: %s (+ %s)\n", jtvae.NetworkKind,
		cfg.Hidden, cfg.Latent, cfg.VocabSize, req.From, req.Out, models.HeaderPath(req.Out))
	return nil
}

// ReadSmiles reads a text file of molecules, the first field of each
// non-blank line (so that "SMILES score" lines work too).
func ReadSmiles(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSmilesLines(f, path)
}

func readSmilesLines(r io.Reader, name string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 0 {
			out = append(out, fs[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

// sampleSmiles are 32 molecules of ZINC250K's JT-VAE test split (those of
// testdata/jtvae/bench32.npz): the data set of --synthetic-data.
var sampleSmiles = []string{
	"O=[N+]([O-])c1c(Nc2ccc(F)c(F)c2)ncnc1Oc1cccc2cccnc12",
	"Cc1ccc([C@@H](C)NC(=O)N[C@@H](CCO)c2cccs2)cc1",
	"CCN(CC)S(=O)(=O)c1ccc2nc(-c3ccncc3)cc(C(=O)[O-])c2c1",
	"CCCN(CC)c1cc[nH+]c(C(=O)[O-])c1",
	"Cc1ccccc1N1C(=O)C[C@H]([NH+](C2CCCCC2)C2CCCCC2)C1=O",
	"CS(=O)(=O)[C@H]1O[C@H]1c1ccc(Cl)cc1Cl",
	"C[C@H](CSc1ccc(C(=O)N(C)C)cn1)C(=O)[O-]",
	"CCOC(=O)[C@H]1C=C(C#N)O[C@@H](c2ccc(C)cc2)C1",
	"CCC[NH2+]C1CCC(O)(Cc2nc(C)cs2)CC1",
	"O=C1c2ccccc2N[C@H](CSC2=NC=NC3=NC=N[C@@H]32)N1c1ccc(Cl)cc1",
	"CCc1nc2ccccc2c(C(=O)NCc2ccc(OC)c(C(=O)OC)c2)c1C",
	"Cc1nnccc1C(=O)N[C@H](C)c1ccc(Cl)s1",
	"O=C(NCCCc1nc(-c2ccc(Br)o2)no1)C1CC1",
	"CCOc1cccc(NC(=O)CCc2ccc(N)cc2)c1",
	"COc1ccc(/C=C2/SC(=O)N(CC(=O)Nc3ccc(F)cc3)C2=O)cc1OC",
	"CC(C)N(C)C(=O)[C@H]1CSCN1C(=O)/C=C/SCc1ccco1",
	"CCC1(CC)[C@@H](NC(=O)Nc2ccc(C(=O)NC)cc2)[C@H](C)[C@@H]1OC",
	"N#Cc1ccnc(N2CCC([NH2+]C[C@@H]3CCCO3)CC2)c1",
	"O=C(Cn1nnn(-c2cccs2)c1=O)OC1CCCCC1",
	"COc1cccc(COc2ccc(OC)cc2CCl)c1",
	"CC[C@H](NC(=O)NCc1c(C)noc1C)c1ccc(OC)cc1",
	"COc1ccc(C(=O)/C=C(\\C)Nc2ccc(F)cc2F)cc1",
	"O=C(C=C1CCSCC1)N[C@@H]1CCC[C@H]1Cc1ccccc1",
	"Cc1cccc(C(=O)N[C@@H](C(=O)N2CCC[C@@H](C)C2)C(C)C)c1",
	"COC(=O)[C@@H](C)Sc1nnc(Nc2cccc(Br)c2)s1",
	"Cc1cnc(C(=O)Nc2ccc(N(C)C3CC[NH+](C)CC3)cc2)cn1",
	"CC(=O)Nc1nc2ccc(NC(=O)NCc3ccccc3)cc2s1",
	"C=CCN1C(=O)/C(=C/c2ccccc2F)S/C1=N\\S(=O)(=O)c1cccs1",
	"CC[C@H]1CC(=O)N(Cc2ccccc2C#CCCO)C1",
	"COc1ccc(F)cc1C(=O)Nc1nccs1",
	"CC[C@@H](CC(=O)NC1(C(=O)OC)CCSCC1)c1ccccc1",
	"Cc1ccc(C)c(-n2c(SCCCCCO)nc3ccccc3c2=O)c1",
}

// SampleSmiles returns the 32 built-in ZINC molecules (those of
// testdata/jtvae/bench32.npz, which the authors' step is timed on).
func SampleSmiles() []string { return slices.Clone(sampleSmiles) }
