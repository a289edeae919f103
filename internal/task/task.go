// Package task is the registry of optimisation tasks (DESIGN.md section 1).
//
// A task package (internal/task/expression, ...) describes its objects, data
// set, objective, network and defaults in a Spec and registers it with
// Register(Define(spec)) in an init function; importing the package is then
// the one registration line. The command line looks tasks up by name
// (Lookup) and never switches on them; the BO loop sees a task's objective
// and model through the Objective and Model interfaces, in which objects are
// values of the task's own type behind `any`.
//
// The generic flows every task shares (pretraining with progress and resume,
// the retrainable model of the BO loop, encoding and decoding files,
// checkpoint import) live here, written once over Spec's type parameters: O
// for the task's objects and E for its network's examples.
package task

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// Task is a registered optimisation task.
type Task interface {
	// Name is the task's name on the command line, e.g. "expression".
	Name() string
	// Usage is a one-line description.
	Usage() string
	// Defaults are the task's hyperparameters (DESIGN.md section 9).
	Defaults() Defaults
	// Options are the task's own settings (flags of every verb).
	Options() []Option
	// Networks lists the network kinds the task can use.
	Networks() []string
	// Objective returns the black box of the task under env's options.
	Objective(env *Env) (Objective, error)
	// Dataset returns the task's training objects with their scores.
	Dataset(env *Env) (*Dataset, error)
	// BuildData writes the task's data set files into dir.
	BuildData(env *Env, dir string) error
	// Score scores the objects named by args (the score verb).
	Score(env *Env, args []string) error
	// Train pretrains (or resumes) the task's VAE.
	Train(env *Env, req TrainRequest) error
	// OpenModel loads a checkpoint as the retrainable model of the BO loop.
	OpenModel(env *Env, req ModelRequest) (Model, error)
	// Encode writes the encoder means of the objects of a file.
	Encode(env *Env, req EncodeRequest) error
	// Decode writes the objects decoded from latent points.
	Decode(env *Env, req DecodeRequest) error
	// Import converts a checkpoint of the authors' code into ours.
	Import(env *Env, req ImportRequest) error
	// Plots writes the task's pictures of a run's best objects (may do
	// nothing).
	Plots(env *Env, dir string, best []Scored) error
}

// Option is a task-specific setting, offered as a flag by every verb.
type Option struct {
	Name, Usage, Default string
}

// Scored is an object found by a run, with its score and query number.
type Scored struct {
	Object any
	Score  float64
	Query  int
}

// Env is what a verb hands a task: the values of the task's options and the
// shared settings.
type Env struct {
	// Params holds the value of every Option by name.
	Params map[string]string
	// DataDir is the data directory ("" searches the default places).
	DataDir string
	// Synthetic allows a task to make up data when its data set is missing.
	Synthetic bool
	// Device is where networks run; Seed seeds libtorch and every draw.
	Device torch.Device
	Seed   uint64
	// Stdout receives results, Stderr notes and progress.
	Stdout, Stderr io.Writer
	// Progress, when set, is told about long work.
	Progress Progress
	// Ctx, when set, cancels long work (e.g. on SIGINT); work done so far is
	// kept where the verb can resume.
	Ctx context.Context
}

// Param returns the value of a task option.
func (e *Env) Param(name string) string { return e.Params[name] }

// Context returns Ctx, or context.Background when it is not set.
func (e *Env) Context() context.Context {
	if e.Ctx == nil {
		return context.Background()
	}
	return e.Ctx
}

// Progress receives progress reports of long work; cmd/ draws them.
type Progress interface {
	// Step reports step i of n of epoch (from 1) of epochs.
	Step(epoch, epochs, i, n int, l models.Losses)
	// Epoch reports a finished epoch.
	Epoch(r models.EpochReport, epochs int)
	// Count reports i of n items done (data-set building).
	Count(what string, i, n int)
}

// Objective is a task's black box seen from the BO loop. Objects are values
// of the task's own type.
type Objective interface {
	// Score returns the objective of obj in the task's direction; an error
	// or a NaN counts as a failure.
	Score(obj any) (float64, error)
	// FailureScore is the score of an invalid decode or a failed evaluation.
	FailureScore() float64
	// Deterministic reports whether Score always gives an object the same
	// score (the loop then never evaluates an object twice).
	Deterministic() bool
	// Maximize reports whether higher scores are better.
	Maximize() bool
	// Key is the identity of obj (the novelty check and the journal);
	// Parse(Key(o)) gives o back.
	Key(obj any) string
	// Parse returns the object whose key is key.
	Parse(key string) (any, error)
	// Describe returns the settings that change scores (e.g. the target),
	// recorded in a run's configuration.
	Describe() map[string]string
}

// Dataset is a task's training objects with their scores and where they came
// from.
type Dataset struct {
	Objects []any
	Scores  []float64
	// Source says where the data came from (a file, or "synthetic ...").
	Source string
}

// Model is a task's VAE seen from the BO loop: objects in, latent points out,
// and back; retrained in place between queries.
type Model interface {
	LatentDim() int
	// Accept returns nil when obj can be a training example of the network
	// (and encoded), and otherwise why not.
	Accept(obj any) error
	// Encode returns the encoder means of objs (len(objs) x LatentDim, row-major).
	Encode(objs []any) ([]float64, error)
	// Decode decodes n latent points (row-major); valid[i] is false when
	// point i decodes to no object. Stochastic decoding depends only on seed.
	Decode(z []float64, seed uint64) (objs []any, valid []bool, err error)
	// Retrain trains the model further with its ELBO.
	Retrain(req RetrainRequest) (models.Losses, error)
	// Save writes the model's weights (VAE and target predictor); Load reads
	// them back.
	Save(path string) error
	Load(path string) error
	Close()
}

// RetrainRequest is the data and schedule of one retraining.
type RetrainRequest struct {
	Objects []any
	Scores  []float64
	Weights []float64
	// Epochs is the number of passes over the objects (fractions allowed,
	// at least one step).
	Epochs float64
	Seed   uint64
}

var (
	mu    sync.RWMutex
	tasks = map[string]Task{}
)

// Register adds a task to the registry; it panics when the name is taken
// (a programming error).
func Register(t Task) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := tasks[t.Name()]; dup {
		panic("task: " + t.Name() + " registered twice")
	}
	tasks[t.Name()] = t
}

// Lookup returns the task of a name, or an error listing the known ones.
func Lookup(name string) (Task, error) {
	mu.RLock()
	defer mu.RUnlock()
	if t, ok := tasks[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown task %q (known: %v)", name, namesLocked())
}

// Names lists the registered tasks, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	names := make([]string, 0, len(tasks))
	for n := range tasks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
