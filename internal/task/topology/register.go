package topology

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/external"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	conv "github.com/tlbo-native/tlbo-native/models/topology"
)

// TaskName is the topology task's name in the registry.
const TaskName = "topology"

// Defaults are the topology task's hyperparameters (docs/design.md: the
// paper's appendix and the authors' topology script): the
// conv VAE pretrained for 300 epochs at batch 1024 with k = 1e-3 and no
// gradient clipping (the authors' script leaves it off), a constant learning
// rate (their plateau schedule's min_lr is the rate itself), no augmentation
// in pretraining (rotations and flips, which keep the labels, only in
// retraining), the KL weight annealed from 1e-6 to 1e-4 after 1000 steps,
// beta_metric 1, beta_TP 10, the soft triplet's smoothing nu 0.05 (the
// authors' topology script), retraining one epoch (one more before the first
// query) at batch 256 with clipping at 20, budget 500, r 50, a GP on 2500 best
// + 500 random points with 500 inducing points.
var Defaults = task.Defaults{
	Epochs: 300, BatchSize: 1024, LR: 1e-3, K: 1e-3, Beta: models.AnnealedBeta(1e-6, 1e-4, 1000), GradClip: 0,
	PlateauFactor: 0.2, PlateauPatience: 20, PlateauFloor: 1, PretrainAugment: false,
	MetricWeight: 1, Eta: models.DefaultEta, PredWeight: 10, Nu: 0.05,
	InitialRetrainEpochs: 1, RetrainEpochs: 1, RetrainBatchSize: 256, RetrainGradClip: models.DefaultGradClip,
	Budget: 500, RetrainEvery: 50, RankK: 1e-3, NBest: 2500, NRand: 500, Inducing: 500,
}

// init registers the task with its domain-recovery hooks (recovery.go) and
// its own commands: topology solve and plot latent-map.
func init() {
	task.Register(targetTask{task.Define(TaskSpec())})
	task.RegisterCommand("", topologyCommand)
	task.RegisterCommand("plot", latentMapCommand)
}

// TaskSpec describes the topology task for the registry: objects are
// designs, network examples their pixels as float32.
func TaskSpec() task.Spec[Design, models.Dense] {
	return task.Spec[Design, models.Dense]{
		Name:     TaskName,
		Usage:    "40x40 SIMP designs matched to a held-out target by cosine similarity (conv VAE; higher is better)",
		Defaults: Defaults,
		Options: append([]task.Option{
			task.FileOption(optDesigns, "the data set file (default: topology.npz in the data directory)",
				task.VerbScore, task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.FileOption(optTarget, "target design (.npy, 40x40 of 0/1); default: a design of the data set drawn by --target-seed",
				task.VerbScore, task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.IntOption(optTargetSeed, 0, 0, "seed of the held-out target's index in the data set",
				task.VerbScore, task.VerbTrain, task.VerbOptimize, task.VerbAnalyze),
			task.IntOption(optN, 10000, 1, "number of designs to solve", task.VerbData),
			task.IntOption(optDenseWidth, conv.AuthorsDenseWidth, 1, "width of a new VAE's dense layers on each side of the latent "+
				"space (the authors': 800)", task.VerbTrain),
		}, task.ProgramOptions()...),
		Networks:     []string{conv.NetworkKind},
		Objective:    objective,
		Text:         designText,
		Dataset:      dataset,
		BuildData:    buildData,
		Score:        scoreArgs,
		Example:      example,
		NewNetwork:   newNetwork,
		Decode:       decode,
		Augment:      Augment,
		Report:       report,
		ReadObjects:  ReadDesigns,
		WriteObjects: WriteDesigns,
		Import:       importCheckpoint,
		Plots:        plots,
	}
}

// designText is a design's text form for a program objective: the path of
// a uint8 .npy (40 x 40, 0/1) below dir named by a digest of its key.
func designText(_ *task.Env, dir, key string, d Design) (string, error) {
	return external.ObjectFile(dir, key, numpy.Array{Shape: []int{Side, Side}, Data: []uint8(d)})
}

// Objective is the cosine similarity with a target design.
type Objective struct {
	Target Design
	desc   string
}

func objective(env *task.Env) (task.Objective[Design], error) {
	var tg target
	var err error
	if env.Opts.String(optTarget) != "" {
		tg, err = pickTarget(env, nil, "")
	} else {
		tg, _, _, _, err = loadTask(env)
	}
	if err != nil {
		return nil, err
	}
	return Objective{Target: tg.design, desc: tg.desc}, nil
}

// Score returns the cosine similarity of d with the target.
func (o Objective) Score(d Design) (float64, error) {
	if len(d) != Pixels {
		return 0, fmt.Errorf("design of %d pixels, want %d", len(d), Pixels)
	}
	return Similarity(d, o.Target), nil
}

// FailureScore is the score of an empty design.
func (Objective) FailureScore() float64 { return 0 }

// Deterministic is true: the similarity is a function of the design.
func (Objective) Deterministic() bool { return true }

// Maximize is true: higher similarity is better.
func (Objective) Maximize() bool { return true }

// Key returns the design's packed hex form.
func (Objective) Key(d Design) string { return Key(d) }

// Parse returns the design of a key.
func (Objective) Parse(key string) (Design, error) { return ParseKey(key) }

// Describe records the target.
func (o Objective) Describe() map[string]string {
	return map[string]string{"target": o.desc, "target-key": Key(o.Target)}
}

// scoreArgs prints the similarity with the target of every design of the
// .npy files named by args: one line per design in input order; a design
// with a pixel other than 0 or 1 gets the failure score, a tab and the
// reason, and so does a file that cannot be read as designs (one line for
// the file). It returns an error after printing every line when any failed.
func scoreArgs(env *task.Env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("score topology: name one or more .npy files of designs")
	}
	obj, err := objective(env)
	if err != nil {
		return err
	}
	o := obj.(Objective)
	fmt.Fprintf(env.Stderr, "target: %s\n", o.desc)
	w := bufio.NewWriter(env.Stdout)
	n, failed := 0, 0
	fail := func(err error) {
		failed++
		fmt.Fprintf(w, "%s\t%s\n", strconv.FormatFloat(o.FailureScore(), 'g', -1, 64), strings.Join(strings.Fields(err.Error()), " "))
	}
	for _, path := range args {
		a, err := numpy.ReadNPY(path)
		var ds []Design
		var errs []error
		if err == nil {
			ds, errs, err = checkDesigns(path, a)
		}
		if err != nil {
			n++
			fail(err)
			continue
		}
		for i, d := range ds {
			n++
			if errs[i] != nil {
				fail(errs[i])
				continue
			}
			fmt.Fprintln(w, strconv.FormatFloat(Similarity(d, o.Target), 'g', -1, 64))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("score topology: %d of %d inputs failed (their lines: the failure score %g, a tab, the reason)", failed, n, o.FailureScore())
	}
	return nil
}

func newNetwork(env *task.Env, latent int) (models.VAE[models.Dense], error) {
	cfg := conv.DefaultConfig()
	if w := env.Opts.Int(optDenseWidth); w > 0 {
		cfg.DenseWidth = w
	}
	if latent > 0 {
		cfg.Latent = latent
	}
	return conv.New(cfg)
}

// decode rounds the decoded designs; every latent point decodes to a design
// (decoding is deterministic: opts and seed do not matter).
func decode(net models.VAE[models.Dense], z []float64, _ task.DecodeOptions, _ uint64) ([]Design, []bool, error) {
	m, ok := net.(*conv.Model)
	if !ok {
		return nil, nil, fmt.Errorf("topology decode: network %T is not the conv VAE", net)
	}
	imgs, err := m.Decode(z)
	if err != nil {
		return nil, nil, err
	}
	out, valid := make([]Design, len(imgs)), make([]bool, len(imgs))
	for i, d := range imgs {
		out[i], valid[i] = d, true
	}
	return out, valid, nil
}

// report prints the validation designs' mean pixel accuracy and mean cosine
// similarity of their rounded reconstructions (from the encoder means).
func report(env *task.Env, net models.VAE[models.Dense], val []models.Dense, _ task.ReportOptions) error {
	if len(val) == 0 {
		return nil
	}
	m, ok := net.(*conv.Model)
	if !ok {
		return fmt.Errorf("topology report: network %T is not the conv VAE", net)
	}
	acc, sim, err := reconstruction(m, val)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "val_pixel_accuracy %.4f\nval_similarity %.4f (cosine, rounded reconstruction from the mean)\n", acc, sim)
	return nil
}

// reconstruction returns the mean pixel accuracy and the mean cosine
// similarity of the rounded decodes of the encoder means of xs (0/1
// designs as examples, at least one), each against its original.
func reconstruction(m *conv.Model, xs []models.Dense) (acc, sim float64, err error) {
	mu, err := models.EncodeMeans[models.Dense](m, xs)
	if err != nil {
		return 0, 0, err
	}
	rec, err := m.Decode(mu)
	if err != nil {
		return 0, 0, err
	}
	for i, x := range xs {
		d := make(Design, Pixels)
		same := 0
		for j, v := range x {
			d[j] = uint8(v)
			if rec[i][j] == d[j] {
				same++
			}
		}
		acc += float64(same) / Pixels
		sim += Similarity(rec[i], d)
	}
	n := float64(len(xs))
	return acc / n, sim / n, nil
}

// importCheckpoint converts the authors' TopologyVAE (a Lightning checkpoint
// or a bare state dict: encoder.*, decoder.*, and BaseVAE's prior_mu and
// prior_sigma, which are dropped with a note) into a checkpoint of ours; the
// latent size and the dense width are read from the encoder's dense layers.
func importCheckpoint(env *task.Env, req task.ImportRequest) error {
	cfg, err := importedConfig(req.From)
	if err != nil {
		return err
	}
	net, err := conv.New(cfg)
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
