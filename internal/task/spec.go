package task

import (
	"fmt"
	"math"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/manual"
	"github.com/tlbo-native/tlbo-native/models"
)

// Defaults are a task's hyperparameters (the paper's appendix tables and the
// authors' scripts, docs/design.md): they fill the flags the user did not
// set, and they are the only source of the settings that differ between
// tasks (the BO loop's own defaults are bo.DefaultConfig's).
type Defaults struct {
	// Pretraining.
	Epochs    int
	BatchSize int
	LR        float64
	// K is the rank-weight parameter of pretraining (+Inf: uniform).
	K        float64
	Beta     models.BetaSchedule
	GradClip float64
	// Pretraining's learning-rate schedules: PyTorch's ReduceLROnPlateau on
	// the validation loss with PlateauFactor and PlateauPatience, floored at
	// PlateauFloor times the learning rate (1: never lowered); and a decay by
	// DecayFactor every DecayEvery steps (DecayEvery 0: none).
	PlateauFactor   float64
	PlateauPatience int
	PlateauFloor    float64
	DecayFactor     float64
	DecayEvery      int
	// PretrainAugment applies the task's augmentation (Spec.Augment) in
	// pretraining too; retraining in the BO loop always applies it.
	PretrainAugment bool
	// MetricWeight is beta_metric and Eta the metric threshold; PredWeight
	// is beta_TP; Nu the soft triplet's smoothing temperature (0: unset).
	MetricWeight, Eta, PredWeight, Nu float64
	// Retraining in the BO loop. RetrainBeta, when positive, is its KL
	// weight whatever the pretrained network was trained at; 0: the weight
	// the network's training ended at (models.TrainingState.LastBeta; Beta's
	// final weight for a network without a training record).
	RetrainBeta                         float64
	InitialRetrainEpochs, RetrainEpochs float64
	RetrainBatchSize                    int
	RetrainGradClip                     float64
	// The BO loop.
	Budget, RetrainEvery int
	RankK                float64
	NBest, NRand         int
	Inducing             int
}

// Config returns the BO loop's configuration with the task's settings:
// bo.DefaultConfig (the loop's own defaults) with the budget, the
// retraining schedule, the rank weights' k and the GP's data and inducing
// points of the task.
func (d Defaults) Config() bo.Config {
	c := bo.DefaultConfig()
	c.Budget, c.RetrainEvery, c.RankK = d.Budget, d.RetrainEvery, d.RankK
	c.InitialRetrainEpochs, c.RetrainEpochs = d.InitialRetrainEpochs, d.RetrainEpochs
	c.NBest, c.NRand, c.Inducing = d.NBest, d.NRand, d.Inducing
	return c
}

// DecodeOptions configure a network's decoding.
type DecodeOptions struct {
	// Attempts is the number of stochastic decodings whose most frequent
	// valid result is kept (0: the network's default).
	Attempts int
	// Greedy decodes deterministically (the most likely choice at each step).
	Greedy bool
}

// TrainRequest configures pretraining. A resumed training keeps the
// settings its checkpoint records (ELBO, schedules, rate, batches, seed,
// data split and weights) and refuses a request that gives other ones
// (Given).
type TrainRequest struct {
	// Opts are the trainer's options (ELBO, beta schedule, Adam, batches).
	Opts models.TrainOptions
	// K is the rank-weight parameter (+Inf: uniform sampling).
	K float64
	// Epochs is the total number of epochs (resumed ones included).
	Epochs int
	// ValFraction is the share held out for validation; LabelledFraction
	// the share of training points keeping their label.
	ValFraction, LabelledFraction float64
	// Latent is the latent dimension of a new network (0: the task's).
	Latent int
	// Plateau lowers the learning rate when the validation loss stalls
	// (nil: never) and Decay every so many steps (nil: never).
	Plateau *models.Plateau
	Decay   *models.StepDecay
	// Augment applies the task's augmentation (Spec.Augment) to pretraining
	// mini-batches.
	Augment bool
	// Out is the checkpoint path; Resume continues the training saved there.
	// Without Resume, an existing checkpoint at Out is refused unless Force
	// (which removes it, its latest-epoch files included, before training).
	Out           string
	Resume, Force bool
	// FreshOptimizer, with Resume, continues a checkpoint whose Adam state
	// is missing with new Adam moments (models.ResumeOptions).
	FreshOptimizer bool
	// Init, when set, is a checkpoint whose network (kind, configuration,
	// weights; a molecule network's vocabulary) a new training starts from: a
	// fine-tuning, with a new optimiser, schedules and counters. It excludes
	// Resume and Latent.
	Init string
	// CheckpointEvery, when positive, also saves the latest state every that
	// many steps within an epoch (an epoch of all ZINC is hours on a CPU).
	CheckpointEvery int
	// Report configures the final report.
	Report ReportOptions
	// Given reports whether the user chose a setting, named as its train
	// flag (e.g. "lr", "val-fraction"), rather than leaving the task's
	// default; nil means none. A resumed training refuses a given setting
	// that differs from its checkpoint's.
	Given func(flag string) bool
}

// ReportOptions configure the report after training.
type ReportOptions struct {
	// Decode configures the decodings of the reconstruction accuracy.
	Decode DecodeOptions
	// PriorSamples is the number of prior samples decoded for the validity
	// (0: skip).
	PriorSamples int
}

// ModelRequest configures the retrainable model of the BO loop.
type ModelRequest struct {
	// Path is the pretrained checkpoint.
	Path string
	// ELBO is the retraining objective; Beta its KL weight (0: the task's
	// Defaults.RetrainBeta, else the weight the checkpoint's training ended
	// at).
	ELBO      models.ELBO
	Beta      float64
	LR        float64
	BatchSize int
	GradClip  float64
	Decode    DecodeOptions
}

// EncodeRequest names the files of the encode verb.
type EncodeRequest struct {
	VAE, In, Out string
	// SkipInvalid writes a row of NaN for an object the network cannot take
	// (named with its reason on Stderr) instead of failing.
	SkipInvalid bool
}

// DecodeRequest names the files of the decode verb.
type DecodeRequest struct {
	VAE, In, Out string
	Decode       DecodeOptions
}

// ImportRequest names the files of checkpoint import.
type ImportRequest struct{ From, Out string }

// OptimizeRequest configures a BO run (the optimize verb).
type OptimizeRequest struct {
	// Model is the pretrained checkpoint and its retraining.
	Model ModelRequest
	// Config is the loop's configuration; the run records in its Extra
	// the settings the task layer owns (the task, Model's objective,
	// batches and decoding, the device, the checkpoint's digest, the
	// data's source and the objective's description), over any the caller
	// put there.
	Config bo.Config
	// Options are the run directory, resume and progress.
	Options bo.Options
	// Top is how many of the best objects the task's pictures show.
	Top int
	// Manual, with --objective manual, says what the call does (nil: set
	// the run up); Optimize sets its Result.
	Manual *ManualRequest
}

// Objective is a task's black box: the loop's bo.Task over the task's
// objects, with the settings that change its scores (e.g. the target),
// which a run records in its configuration.
type Objective[O any] interface {
	bo.Task[O]
	Describe() map[string]string
}

// Scored is an object found by a run, with its score and 1-based query
// number, or an object an ask hands out, with its predicted score (NaN:
// none) and its id.
type Scored[O any] struct {
	Object O
	Score  float64
	Query  int
	// ID is the object's id in a manual run (manual.Proposal); 0 for a
	// run's query.
	ID int
}

// Title is the object's title in a picture: its score in format (e.g.
// "%.3f"), then "(id N)" or "(query N)"; only the latter when the score
// is NaN.
func (s Scored[O]) Title(format string) string {
	ref := fmt.Sprintf("query %d", s.Query)
	if s.ID > 0 {
		ref = fmt.Sprintf("id %d", s.ID)
	}
	if math.IsNaN(s.Score) {
		return ref
	}
	return fmt.Sprintf(format+" (%s)", s.Score, ref)
}

// Spec is what a task package provides: objects of type O, network examples
// of type E. Define turns it into a Task. Nil optional functions make the
// corresponding verb say that the task does not support it.
type Spec[O, E any] struct {
	Name, Usage string
	Defaults    Defaults
	// Options are the task's own settings, each offered by the verbs it
	// names.
	Options []Option
	// Networks lists the network kinds the task can use (models registry);
	// the verbs given a checkpoint find its task by them.
	Networks []string
	// Objective returns the black box under env's options.
	Objective func(env *Env) (Objective[O], error)
	// Dataset returns the training objects, their scores and their source.
	Dataset func(env *Env) (objs []O, scores []float64, source string, err error)
	// InitialCalls, when set and true under env's options, says that the
	// data set's scores were computed by the objective for the run (the PMO
	// protocol's starting molecules, the molecule task's optimize
	// --initial): they are the run's first oracle calls, which Optimize
	// records in the run directory (bo.InitialFile) for analyze pmo and
	// plot. Optional.
	InitialCalls func(env *Env) bool
	// Text, when set, is an object's text form for a user's program
	// (--objective command:...), e.g. a design written below dir as an
	// .npy file, its path; without it a string object is its own text.
	Text func(env *Env, dir, key string, o O) (string, error)
	// Diversity, when set, measures the diversity of a set of objects
	// given by their keys (analyze pmo: its top molecules'). Optional.
	Diversity func(keys []string) (float64, error)
	// BuildData writes the data-set files (optional).
	BuildData func(env *Env, dir string) error
	// Score runs the score verb (optional).
	Score func(env *Env, args []string) error
	// Example turns an object into the network's example.
	Example func(obj O) (E, error)
	// Bind, when set, is called with the network of a verb that makes
	// examples (train, encode, optimize, analyze) before the data set is
	// read: a task whose examples depend on the network (the molecule
	// task's vocabulary, the checkpoint's own) sets them up here, and
	// refuses options that disagree with the network.
	Bind func(env *Env, net models.VAE[E]) error
	// NewNetwork returns an untrained network (latent 0: the task's size).
	NewNetwork func(env *Env, latent int) (models.VAE[E], error)
	// Decode decodes n latent points (row-major) with the network.
	Decode func(net models.VAE[E], z []float64, opts DecodeOptions, seed uint64) ([]O, []bool, error)
	// DecodeWidth, when set, is how many points Decode handles at the cost
	// of one under opts, if its cost is per point and its objects depend
	// neither on the seed nor on the other points of a call, else 0
	// (bo.PointwiseDecoder). Optional.
	DecodeWidth func(opts DecodeOptions) int
	// Augment, when set, transforms each retraining mini-batch (e.g. the
	// topology task's rotations and flips).
	Augment models.Augment[E]
	// Materialise, when set, completes the examples that Example left to be
	// made on demand (the molecule task's data-set molecules, featurised the
	// first time an encoding or a retraining mini-batch needs them); it
	// returns the others as they are. Optional.
	Materialise func(ex []E) ([]E, error)
	// MaterialiseEncoder, when set with Materialise, completes examples
	// for the encoder alone (Model.Encode), where that costs less: the
	// molecule task's encoder reads a molecule's tree and graph, not the
	// assembly candidates that take most of its featurisation. The
	// encodings are those of Materialise's examples. Optional.
	MaterialiseEncoder func(ex []E) ([]E, error)
	// Prefetch, when set with Materialise, is told the mini-batches of
	// examples that a retraining will hand Materialise, in order, so that
	// it can complete them in the background while the network trains on
	// the earlier ones; the stop it returns ends that work and returns once
	// it has ended. What Materialise returns does not depend on it, only
	// when. Optional.
	Prefetch func(batches [][]E) (stop func())
	// FeaturiseCPU, when set with Materialise, returns the CPU seconds
	// that Materialise, MaterialiseEncoder and Prefetch have spent so far
	// (the molecule task's featurisation on demand): work on threads of
	// their own, which the loop's journal reports apart from the
	// retraining and encoding that it runs beside (bo.FeaturiseCPU).
	// Optional.
	FeaturiseCPU func() float64
	// Flush, when set, writes what Materialise made and has not written
	// yet (the molecule task's featurisation cache), so that a resumed or
	// later run finds it. Optimize calls it when the run ends, a normal end,
	// a stop by a signal and an error alike. Optional.
	Flush func() error
	// Report prints the trained network's quality on validation examples
	// (optional).
	Report func(env *Env, net models.VAE[E], val []E, opts ReportOptions) error
	// ReadObjects reads a file of objects (encode); WriteObjects writes
	// decoded ones, invalid ones as the format's empty entry (decode).
	ReadObjects  func(path string) ([]O, error)
	WriteObjects func(path string, objs []O, valid []bool) error
	// Import converts an authors' checkpoint (optional).
	Import func(env *Env, req ImportRequest) error
	// Plots writes pictures of a run's best objects (optional).
	Plots func(env *Env, dir string, best []Scored[O]) error
	// Handout, when set, writes the objects an ask hands out (its CSV's
	// rows) in a file of the task's own beside the CSV, whose path without
	// its extension is base, and returns the file's path (the molecule
	// task's base.sdf). It writes nothing when it fails. Optional.
	Handout func(base string, handed []manual.Proposal) (string, error)
}

// Validate checks that the required parts are there.
func (s Spec[O, E]) Validate() error {
	switch {
	case s.Name == "":
		return fmt.Errorf("task spec: no name")
	case s.Objective == nil || s.Dataset == nil || s.Example == nil || s.NewNetwork == nil || s.Decode == nil:
		return fmt.Errorf("task %s: Objective, Dataset, Example, NewNetwork and Decode are required", s.Name)
	case len(s.Networks) == 0:
		return fmt.Errorf("task %s: no network kinds", s.Name)
	case s.Defaults.Epochs < 1 || s.Defaults.BatchSize < 1 || !(s.Defaults.LR > 0) || math.IsNaN(s.Defaults.K) ||
		!(s.Defaults.PlateauFactor > 0 && s.Defaults.PlateauFactor < 1) || !(s.Defaults.PlateauFloor > 0 && s.Defaults.PlateauFloor <= 1) ||
		!(s.Defaults.RetrainBeta >= 0) || math.IsInf(s.Defaults.RetrainBeta, 1):
		return fmt.Errorf("task %s: incomplete defaults %+v", s.Name, s.Defaults)
	}
	for _, o := range s.Options {
		if o.Name == "" || len(o.Verbs) == 0 {
			return fmt.Errorf("task %s: option %q without a name or verbs", s.Name, o.Name)
		}
		if err := o.Check(o.Zero()); err != nil {
			return fmt.Errorf("task %s: default of option %s: %w", s.Name, o.Name, err)
		}
	}
	return nil
}

// Plateau returns pretraining's plateau schedule for learning rate lr.
func (d Defaults) Plateau(lr float64) *models.Plateau {
	return models.TorchPlateau(d.PlateauFactor, d.PlateauPatience, d.PlateauFloor*lr)
}

// Decay returns pretraining's step decay, nil for none.
func (d Defaults) Decay() *models.StepDecay {
	if d.DecayEvery < 1 {
		return nil
	}
	return &models.StepDecay{Factor: d.DecayFactor, Every: d.DecayEvery}
}
