package task

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/external"
)

// ObjectiveOption is the name of the option that picks a task's objective:
// one of the task's built-in names, or CommandPrefix and a program.
const ObjectiveOption = "objective"

// CommandPrefix starts an --objective that is the user's program:
// command:"CMD ARGS".
const CommandPrefix = "command:"

// Executors of an external objective.
const (
	ExecutorLocal = "local"
	ExecutorSlurm = "slurm"
)

// ExternalRequest makes a user's program a run's objective (optimize
// --objective command:"CMD ARGS"), evaluated by Evaluators copies of it on
// this machine or as Slurm job arrays.
type ExternalRequest struct {
	// Command is CMD ARGS, split into words as a shell would, without a
	// shell (external.SplitCommand).
	Command string
	// Direction is "maximize", "minimize" or "" for the task's own.
	Direction string
	// FailureScore is the score of a failed evaluation; nil takes the
	// task's when the direction is the task's (required otherwise).
	FailureScore *float64
	// Stochastic makes the loop evaluate a repeated object again (as a
	// replicate) instead of reusing its score.
	Stochastic bool
	// Executor is ExecutorLocal or ExecutorSlurm; SlurmArgs are passed to
	// sbatch.
	Executor, SlurmArgs string
	// Evaluators is the number of programs run at once (local).
	Evaluators int
	// Timeout bounds an evaluation (0: none), Retries the restarts of a
	// crashed program.
	Timeout time.Duration
	Retries int
}

// CommandOf returns the program of an --objective value and whether it
// names one.
func CommandOf(value string) (string, bool) {
	cmd, ok := strings.CutPrefix(value, CommandPrefix)
	return strings.TrimSpace(cmd), ok
}

// scorer is an executor of the user's program.
type scorer interface {
	Score(obj string) (float64, error)
	Close() error
}

// externalObjective is the user's program as a task's objective: objects
// reach it in the task's text form (Spec.Text), keys and parsing stay the
// task's.
type externalObjective[O any] struct {
	base     Objective[O]
	text     func(O) (string, error)
	run      scorer
	slurm    *external.Slurm
	maximize bool
	failure  float64
	desc     map[string]string
	stoch    bool

	mu       sync.Mutex
	onSubmit func(job string)
}

// newExternalObjective starts the executor of req over the task's objective
// base (its keys, parsing and default direction); files go below dir.
func (d *Defined[O, E]) newExternalObjective(env *Env, dir string, base Objective[O], req ExternalRequest) (*externalObjective[O], error) {
	if req.Command == "" {
		return nil, errors.New("--objective command: names no program")
	}
	e := &externalObjective[O]{base: base, maximize: base.Maximize(), failure: base.FailureScore(), stoch: req.Stochastic}
	switch req.Direction {
	case "":
	case "maximize", "minimize":
		e.maximize = req.Direction == "maximize"
	default:
		return nil, fmt.Errorf("objective direction %q, want maximize or minimize", req.Direction)
	}
	switch {
	case req.FailureScore != nil:
		e.failure = *req.FailureScore
	case e.maximize != base.Maximize():
		return nil, fmt.Errorf("--%s turns the task's direction: give the score of a failed evaluation with --failure-score",
			req.Direction)
	}
	e.text = func(o O) (string, error) { return d.objectText(env, dir, base, o) }
	objects := dir + "/objects"
	if err := os.MkdirAll(objects, 0o755); err != nil {
		return nil, fmt.Errorf("--objective: %w", err)
	}
	var err error
	switch req.Executor {
	case "", ExecutorLocal:
		// The program runs where the user started the run, so that its
		// relative paths mean what they typed.
		e.run, err = external.NewCommand(req.Command, external.CommandOptions{Workers: max(1, req.Evaluators),
			Timeout: req.Timeout, Retries: req.Retries, Stderr: env.Stderr})
	case ExecutorSlurm:
		args, aerr := external.SplitCommand(req.SlurmArgs)
		if aerr != nil {
			return nil, fmt.Errorf("--slurm-args: %w", aerr)
		}
		wd, werr := os.Getwd()
		if werr != nil {
			return nil, fmt.Errorf("--objective: %w", werr)
		}
		e.slurm, err = external.NewSlurm(req.Command, external.SlurmOptions{Dir: dir + "/slurm", Args: args, WorkDir: wd,
			Timeout: req.Timeout, OnSubmit: e.submitted})
		e.run = e.slurm
	default:
		return nil, fmt.Errorf("--executor %q, want %s or %s", req.Executor, ExecutorLocal, ExecutorSlurm)
	}
	if err != nil {
		return nil, fmt.Errorf("--objective: %w", err)
	}
	e.desc = maps.Clone(base.Describe())
	e.desc["objective"] = CommandPrefix + req.Command
	e.desc["objective-maximize"] = fmt.Sprint(e.maximize)
	e.desc["objective-stochastic"] = fmt.Sprint(req.Stochastic)
	return e, nil
}

// objectText is an object's text form for a program: a string object as
// it is (a SMILES, an expression), any other through the task's Text (a
// design as the path of its .npy file below dir).
func (d *Defined[O, E]) objectText(env *Env, dir string, base Objective[O], o O) (string, error) {
	if d.s.Text != nil {
		return d.s.Text(env, dir+"/objects", base.Key(o), o)
	}
	if s, ok := any(o).(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("task %s has no text form of its objects for a program", d.s.Name)
}

// Score runs the program on obj.
func (e *externalObjective[O]) Score(obj O) (float64, error) {
	t, err := e.text(obj)
	if err != nil {
		return e.failure, err
	}
	return e.run.Score(t)
}

// FailureScore, Deterministic, Maximize, Key, Parse and Describe implement
// Objective.
func (e *externalObjective[O]) FailureScore() float64       { return e.failure }
func (e *externalObjective[O]) Deterministic() bool         { return !e.stoch }
func (e *externalObjective[O]) Maximize() bool              { return e.maximize }
func (e *externalObjective[O]) Key(obj O) string            { return e.base.Key(obj) }
func (e *externalObjective[O]) Parse(key string) (O, error) { return e.base.Parse(key) }
func (e *externalObjective[O]) Describe() map[string]string { return e.desc }
func (e *externalObjective[O]) Close() error                { return e.run.Close() }

// OnSubmit and Attach implement bo.Submitter on Slurm: the loop journals
// each job array and re-attaches to them on resume.
func (e *externalObjective[O]) OnSubmit(f func(job string)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onSubmit = f
}

// submitted passes a submitted array's id to the loop's callback.
func (e *externalObjective[O]) submitted(j external.Job) {
	e.mu.Lock()
	f := e.onSubmit
	e.mu.Unlock()
	if f != nil {
		f(j.ID)
	}
}

// Attach re-attaches to a journaled job array (Slurm only).
func (e *externalObjective[O]) Attach(job string) error {
	if e.slurm == nil {
		return nil
	}
	_, err := e.slurm.Attach(job)
	return err
}

var _ bo.Submitter = (*externalObjective[string])(nil)
