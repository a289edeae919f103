// Package task is the registry of optimisation tasks (docs/design.md).
//
// A task package (internal/task/expression, ...) describes its objects, data
// set, objective, network, defaults and options in a Spec and registers it
// with Register(Define(spec)) in an init function, with its own commands
// (RegisterCommand); importing the package is then the one registration
// line. The command line looks tasks up by name (Lookup) or by a
// checkpoint's network (ForCheckpoint) and never switches on them.
//
// The generic flows every task shares (pretraining with progress and resume,
// the BO run, encoding and decoding files, checkpoint import) live here,
// written once over Spec's type parameters: O for the task's objects and E
// for its network's examples. They hand the BO loop (internal/bo) the task's
// objective and model as bo.Task[O] and bo.Model[O] directly: Defined's
// Objective and OpenModel return them, typed.
package task

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// Task is a registered optimisation task, as the command line sees it: its
// verbs, whatever the type of its objects.
type Task interface {
	// Name is the task's name on the command line, e.g. "expression".
	Name() string
	// Usage is a one-line description.
	Usage() string
	// Defaults are the task's hyperparameters.
	Defaults() Defaults
	// Options are the task's own settings, each with the verbs that take it.
	Options() []Option
	// Networks lists the network kinds the task can use.
	Networks() []string
	// BuildData writes the task's data set files into dir.
	BuildData(env *Env, dir string) error
	// Score scores the objects named by args (the score verb).
	Score(env *Env, args []string) error
	// Train pretrains (or resumes) the task's VAE.
	Train(env *Env, req TrainRequest) error
	// Optimize runs the BO loop (Algorithm 1) from a pretrained checkpoint
	// and draws the task's pictures of the best objects.
	Optimize(env *Env, req OptimizeRequest) (*bo.Result, error)
	// Encode writes the encoder means of the objects of a file.
	Encode(env *Env, req EncodeRequest) error
	// Decode writes the objects decoded from latent points.
	Decode(env *Env, req DecodeRequest) error
	// EncodeDataset returns the encoder means of the task's labelled data
	// under a checkpoint, with their scores and the data's source (the
	// paper's analyses). rows, given the number n of labelled points,
	// returns the indices of those to encode, in the order wanted, or nil
	// for all n in their order (as a nil rows does). Only the picked points
	// are featurised and encoded.
	EncodeDataset(env *Env, vae string, rows func(n int) []int) (Encoded, error)
	// Import converts a checkpoint of the authors' code into ours.
	Import(env *Env, req ImportRequest) error
}

// Encoded is what EncodeDataset returns.
type Encoded struct {
	// Z holds the encoder means, len(Scores) x latent, row-major.
	Z []float64
	// Scores are the encoded points' scores, in Z's order.
	Scores []float64
	// Total is the number of labelled points the rows were picked from.
	Total int
	// Source describes the data.
	Source string
}

// Env is what a verb hands a task: the values of the task's options and the
// shared settings.
type Env struct {
	// Opts holds the value of every option of the verb by name.
	Opts Values
	// DataDir is the data directory ("" searches the default places, see
	// DataDirs).
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

// ForNetwork returns the task whose networks include kind.
func ForNetwork(kind string) (Task, error) {
	mu.RLock()
	defer mu.RUnlock()
	var found []Task
	for _, n := range namesLocked() {
		t := tasks[n]
		for _, k := range t.Networks() {
			if k == kind {
				found = append(found, t)
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no task uses networks of kind %q (known tasks: %v)", kind, namesLocked())
	case 1:
		return found[0], nil
	}
	names := make([]string, len(found))
	for i, t := range found {
		names[i] = t.Name()
	}
	return nil, fmt.Errorf("networks of kind %q serve several tasks (%s): give --task", kind, strings.Join(names, ", "))
}

// ForCheckpoint returns the task of a checkpoint, found by the network kind
// its header (FILE.json beside FILE.pt) names.
func ForCheckpoint(path string) (Task, error) {
	h, err := models.ReadHeader(path, "")
	if err != nil {
		return nil, err
	}
	t, err := ForNetwork(h.Network)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// CheckCheckpoint returns an error when the checkpoint at path is not a
// network of task t (its header names another task's network).
func CheckCheckpoint(t Task, path string) error {
	h, err := models.ReadHeader(path, "")
	if err != nil {
		return err
	}
	for _, k := range t.Networks() {
		if k == h.Network {
			return nil
		}
	}
	owner := "no task"
	if o, err := ForNetwork(h.Network); err == nil {
		owner = "task " + o.Name()
	}
	return fmt.Errorf("--task %s: %s is a %s network (%s), not one of task %s (%s)", t.Name(), path, h.Network, owner, t.Name(),
		strings.Join(t.Networks(), ", "))
}
