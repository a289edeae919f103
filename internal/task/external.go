package task

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/external"
	"github.com/tlbo-native/tlbo-native/internal/manual"
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
	// FailureScore is the score of a failed evaluation, on the program's
	// scale (required: the task's own is on its built-in objective's scale,
	// which need not be the program's; FailureScoreRequired says why).
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
	// FailFast is the number of first evaluations whose failing all stops
	// the run (external.FailFast; 0: only a program that cannot be
	// started stops it).
	FailFast int
}

// The options of a program objective (ProgramOptions), all of the optimize
// verb.
const (
	// BuiltinObjective is the --objective of a task with one built-in
	// objective (expression, topology).
	BuiltinObjective = "builtin"
	// InitialOption draws the run's labelled start from the data set and
	// scores it with the objective (the PMO protocol's start).
	InitialOption = "initial"
	// DataScoresOption takes the data set's own scores (a library the user
	// scored) as the program's.
	DataScoresOption = "data-scores"
	optMaximize      = "maximize"
	optMinimize      = "minimize"
	optFailureScore  = "failure-score"
	optStochastic    = "stochastic"
	optExecutor      = "executor"
	optSlurmArgs     = "slurm-args"
	optEvalTimeout   = "eval-timeout"
	optEvalRetries   = "eval-retries"
	optFailFast      = "fail-fast"
)

// ProgramOptions returns the options of optimize --objective
// command:"CMD ARGS" for a task's Spec.Options: the direction, the failure
// score, the executor and its limits, and how the run's labelled start gets
// the program's scores (--initial N, --data-scores). own names the options
// among ObjectiveOption and InitialOption that the task defines itself
// (the molecule task's named objectives and its PMO --initial); the others
// are added: an --objective of BuiltinObjective or a program, and an
// --initial that only a program objective takes.
func ProgramOptions(own ...string) []Option {
	var opts []Option
	if !slices.Contains(own, ObjectiveOption) {
		opts = append(opts, StringOption(ObjectiveOption, BuiltinObjective, BuiltinObjective+
			" (the task's own), "+CommandPrefix+"\"CMD ARGS\": your program, one JSON line per object in, one score line out "+
			"(docs/objectives.md), or "+manual.Objective+": people measure the objects, handed out by ask and told back by tell (docs/ask-tell.md)", VerbOptimize))
	}
	if !slices.Contains(own, InitialOption) {
		opts = append(opts, IntOption(InitialOption, 0, 0, "start from N distinct objects drawn at random (--seed) from the data set and "+
			"scored by the objective (your program or the task's own), the run's first N oracle calls (RUN_DIR/"+bo.InitialFile+
			"); 0: the data set with its scores (a program objective needs --initial or --data-scores)", VerbOptimize))
	}
	return append(opts,
		BoolOption(DataScoresOption, "with a program objective: the data set's own scores are the program's (a library you scored, "+
			"imported with its score column by the data verb) instead of --initial", VerbOptimize),
		BoolOption(optMaximize, "the program's scores are maximised (without it or --minimize: the task's direction)", VerbOptimize),
		BoolOption(optMinimize, "the program's scores are minimised (without it or --maximize: the task's direction)", VerbOptimize),
		StringOption(optFailureScore, "", "the score of a failed evaluation of the program, on its scale: worse than any score it "+
			"gives (required with a program objective, e.g. 0 for QED, which is in [0, 1] and maximised)", VerbOptimize),
		BoolOption(optStochastic, "the program's scores are noisy: a repeated object is evaluated again instead of reusing its score", VerbOptimize),
		StringOption(optExecutor, ExecutorLocal, ExecutorLocal+" (--evaluators copies of the program on this machine) or "+ExecutorSlurm+
			" (each batch of evaluations a Slurm job array under RUN_DIR/slurm, on a filesystem the nodes share)", VerbOptimize),
		StringOption(optSlurmArgs, "", "arguments of sbatch (e.g. \"--partition=short --mem=2G\"), split as a shell would, without one", VerbOptimize),
		DurationOption(optEvalTimeout, 0, "time limit of one evaluation (e.g. 90s, 10m; 0: none); on Slurm the array's --time", VerbOptimize),
		IntOption(optEvalRetries, external.DefaultRetries, 0, "restarts of a program that exits while evaluating an object (local)", VerbOptimize),
		IntOption(optFailFast, external.DefaultFailFast, 0, "stop the run, with an error naming the program, its exit status "+
			"or signal and its last standard error, when the first N evaluations of the program all fail (error replies, crashes, "+
			"timeouts, non-numbers; counted afresh on --resume), and at once when it cannot be started; the failed ones are "+
			"journaled and count against the budget, and --resume continues once the program is fixed (0: stop only when it "+
			"cannot be started)", VerbOptimize),
	)
}

// IsProgram reports whether env's --objective is a program.
func IsProgram(env *Env) bool {
	_, ok := CommandOf(env.Opts.String(ObjectiveOption))
	return ok
}

// externalRequest reads the program objective's options of env; the
// program runs on evaluators copies at once (local).
func externalRequest(env *Env, evaluators int) (ExternalRequest, error) {
	cmd, _ := CommandOf(env.Opts.String(ObjectiveOption))
	req := ExternalRequest{Command: cmd, Stochastic: env.Opts.Bool(optStochastic), Executor: env.Opts.String(optExecutor),
		SlurmArgs: env.Opts.String(optSlurmArgs), Evaluators: evaluators, Retries: env.Opts.Int(optEvalRetries),
		FailFast: env.Opts.Int(optFailFast)}
	if req.Retries == 0 {
		req.Retries = -1 // external: none
	}
	switch max, min := env.Opts.Bool(optMaximize), env.Opts.Bool(optMinimize); {
	case max && min:
		return req, fmt.Errorf("--%s and --%s: give one", optMaximize, optMinimize)
	case max:
		req.Direction = "maximize"
	case min:
		req.Direction = "minimize"
	}
	if s := strings.TrimSpace(env.Opts.String(optFailureScore)); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return req, fmt.Errorf("--%s %q: want a finite number", optFailureScore, s)
		}
		req.FailureScore = &f
	} else {
		return req, FailureScoreRequired()
	}
	req.Timeout = env.Opts.Duration(optEvalTimeout) // its range: the command line's
	return req, nil
}

// FailureScoreRequired is the error of a program objective without
// --failure-score: the task's failure score is its built-in objective's
// (penalised logP's -4), whose scale the program need not share, so
// that a default could rank a failure above real scores (any QED is in
// [0, 1]: -4 is below them all when maximised, but better than all of them
// when minimised) or let it swamp the surrogate's scale.
func FailureScoreRequired() error {
	return fmt.Errorf("--%s %s...: give --%s S, the score a failed evaluation (an error reply, a crash, a timeout, a "+
		"non-number) gets on your program's scale, worse than any score it gives: the task's own failure score is its "+
		"built-in objective's (penalised logP's -4), which need not suit your program's scale (QED is in [0, 1]); "+
		"e.g. --%s 0 for a QED program, maximised", ObjectiveOption, CommandPrefix, optFailureScore, optFailureScore)
}

// checkProgramOptions refuses the program objective's options without a
// program (they would be ignored), and an --objective other than
// BuiltinObjective for a task whose one objective is built in.
func checkProgramOptions(env *Env, opts []Option) error {
	v := env.Opts.String(ObjectiveOption)
	if _, ok := CommandOf(v); ok || IsManual(env) {
		return checkProgramStart(env)
	}
	for _, o := range opts {
		if o.Name == ObjectiveOption && o.Default == BuiltinObjective && v != BuiltinObjective {
			return fmt.Errorf("--%s %q: want %s (the task's own), %s\"CMD ARGS\" (your program) or %s (people, ask and tell)",
				ObjectiveOption, v, BuiltinObjective, CommandPrefix, manual.Objective)
		}
	}
	for _, name := range []string{DataScoresOption, optMaximize, optMinimize, optStochastic} {
		if env.Opts.Bool(name) {
			return fmt.Errorf("--%s is for a program objective (--%s %s\"CMD ARGS\")", name, ObjectiveOption, CommandPrefix)
		}
	}
	if env.Opts.String(optFailureScore) != "" || env.Opts.String(optSlurmArgs) != "" ||
		(env.Opts.String(optExecutor) != "" && env.Opts.String(optExecutor) != ExecutorLocal) {
		return fmt.Errorf("--%s, --%s and --%s are for a program objective (--%s %s\"CMD ARGS\")", optFailureScore, optExecutor,
			optSlurmArgs, ObjectiveOption, CommandPrefix)
	}
	return nil
}

// checkProgramStart checks a program objective's options, and that the
// run says how its labelled start gets the program's scores: the data set's
// built-in scores are not the program's.
func checkProgramStart(env *Env) error {
	if _, err := externalRequest(env, 1); err != nil {
		return err
	}
	n, own := env.Opts.Int(InitialOption), env.Opts.Bool(DataScoresOption)
	switch {
	case n > 0 && own:
		return fmt.Errorf("--%s %d and --%s: give one (the start drawn and scored by the program, or the data set's own scores)",
			InitialOption, n, DataScoresOption)
	case n == 0 && !own:
		return fmt.Errorf("--%s %s...: the data set's scores are not the program's; give --%s N (N objects of the data set "+
			"scored by the program, the run's first oracle calls) or --%s (the data set's own scores are the program's: "+
			"a library imported with its score column, e.g. data molecule --smiles FILE)", ObjectiveOption, CommandPrefix,
			InitialOption, DataScoresOption)
	}
	return nil
}

// programObjective starts the program of env's --objective over the
// task's objective base (its keys and parsing), below the run directory.
func (d *Defined[O, E]) programObjective(env *Env, dir string, base Objective[O], evaluators int) (*externalObjective[O], error) {
	req, err := externalRequest(env, evaluators)
	if err != nil {
		return nil, err
	}
	return d.newExternalObjective(env, dir, base, req)
}

// CommandOf returns the program of an --objective value and whether it
// names one.
func CommandOf(value string) (string, bool) {
	cmd, ok := strings.CutPrefix(value, CommandPrefix)
	return strings.TrimSpace(cmd), ok
}

// scorer is an executor of the user's program.
type scorer interface {
	ScoreContext(ctx context.Context, obj string) (float64, error)
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
	// ctx is the run's (Env.Ctx): once done, evaluations in progress are
	// given up (their programs killed) and no new one starts.
	ctx context.Context
	// ff stops the run when the program is broken.
	ff *external.FailFast

	mu       sync.Mutex
	onSubmit func(bo.Job) error
}

// newExternalObjective starts the executor of req over the task's objective
// base (its keys, parsing and default direction); files go below dir.
func (d *Defined[O, E]) newExternalObjective(env *Env, dir string, base Objective[O], req ExternalRequest) (*externalObjective[O], error) {
	if req.Command == "" {
		return nil, errors.New("--objective command: names no program")
	}
	e := &externalObjective[O]{base: base, maximize: base.Maximize(), failure: base.FailureScore(), stoch: req.Stochastic,
		ctx: env.Context(), ff: external.NewFailFast(req.Command, req.FailFast)}
	switch req.Direction {
	case "":
	case "maximize", "minimize":
		e.maximize = req.Direction == "maximize"
	default:
		return nil, fmt.Errorf("objective direction %q, want maximize or minimize", req.Direction)
	}
	if req.FailureScore == nil {
		return nil, FailureScoreRequired()
	}
	e.failure = *req.FailureScore
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
			Timeout: req.Timeout, Retries: req.Retries, Stderr: env.Stderr, Logf: executorLog(env, "program")})
	case ExecutorSlurm:
		var args []string
		if strings.TrimSpace(req.SlurmArgs) != "" {
			var aerr error
			if args, aerr = external.SplitCommand(req.SlurmArgs); aerr != nil {
				return nil, fmt.Errorf("--slurm-args: %w", aerr)
			}
		}
		wd, werr := os.Getwd()
		if werr != nil {
			return nil, fmt.Errorf("--objective: %w", werr)
		}
		e.slurm, err = external.NewSlurm(req.Command, external.SlurmOptions{Dir: dir + "/slurm", Args: args, WorkDir: wd,
			Timeout: req.Timeout, OnIntent: e.intent, OnSubmit: e.submitted, Logf: executorLog(env, "slurm")})
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
	e.desc["objective-failure-score"] = strconv.FormatFloat(e.failure, 'g', -1, 64)
	return e, nil
}

// executorLog returns the executor's log of restarts, submissions and
// re-attachments: lines on env.Stderr prefixed with what.
func executorLog(env *Env, what string) func(format string, args ...any) {
	if env.Stderr == nil {
		return nil
	}
	var mu sync.Mutex
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(env.Stderr, what+": "+format+"\n", args...)
	}
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
	return e.score(obj, e.run.ScoreContext)
}

// score evaluates obj through eval, the executor's, and stops the run
// (bo.Halt) when the program is broken (external.FailFast) or the run's
// context is done: a start failure, an evaluation given up for the stop,
// and any evaluation asked for after either, are not evaluations (nothing
// is journaled, a resume makes them); the failure that shows the program
// broken is journaled before the run stops.
func (e *externalObjective[O]) score(obj O, eval func(context.Context, string) (float64, error)) (float64, error) {
	if err := e.halted(); err != nil {
		return e.failure, &bo.Halt{Err: err}
	}
	t, err := e.text(obj)
	if err != nil {
		return e.failure, err
	}
	s, err := eval(e.ctx, t)
	switch {
	case err == nil:
		e.ff.Record(nil)
		return s, nil
	case e.ctx.Err() != nil || external.FailureKind(err) == external.FailClosed:
		if herr := e.halted(); herr != nil {
			return e.failure, &bo.Halt{Err: herr}
		}
		return e.failure, &bo.Halt{Err: err}
	}
	if b := e.ff.Record(err); b != nil {
		h := &bo.Halt{Err: brokenError(b)}
		if external.FailureKind(err) != external.FailStart {
			h.Failure = err.Error()
		}
		return e.failure, h
	}
	return e.failure, err
}

// halted returns why no evaluation may start: the run's context is done
// (its cause), or the program was found broken; nil otherwise.
func (e *externalObjective[O]) halted() error {
	if e.ctx.Err() != nil {
		return context.Cause(e.ctx)
	}
	if b := e.ff.Broken(); b != nil {
		return brokenError(b)
	}
	return nil
}

// brokenError is the error that stops a run whose program is broken: what
// external.Broken says, and what the user can do.
func brokenError(b *external.Broken) error {
	if len(b.Failures) == 1 && b.Failures[0].Kind == external.FailStart {
		return fmt.Errorf("%w; the run stopped without evaluating anything with it: make the program runnable (the same "+
			"--%s), then continue with --resume", b, ObjectiveOption)
	}
	return fmt.Errorf("%w; the run stopped: the evaluations that failed are journaled with the failure score and count as "+
		"made (the program ran for each: a query's against --budget, a start object's as one of the --%s calls). Fix the "+
		"program, then continue with --resume (the same --%s); if failures like these are expected, give --%s a larger "+
		"number (0: never stop on failures)", b, InitialOption, ObjectiveOption, optFailFast)
}

// ScoreTagged implements bo.TaggedScorer: on Slurm the evaluation carries
// the loop's tag (its query, or a version's prior sample), so that after a
// resume it gets the result of the array task submitted for it and no
// other (a stochastic objective evaluates a repeated object again: an
// earlier evaluation's result of it is not this one's).
func (e *externalObjective[O]) ScoreTagged(tag string, obj O) (float64, error) {
	if e.slurm == nil {
		return e.Score(obj)
	}
	return e.score(obj, func(ctx context.Context, t string) (float64, error) { return e.slurm.ScoreTagged(ctx, tag, t) })
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
// each job array's intent (its token) before sbatch and its id after, and
// re-attaches to them on resume.
func (e *externalObjective[O]) OnSubmit(f func(bo.Job) error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onSubmit = f
}

// report passes a job to the loop's callback (none before the loop: the
// labelled start's arrays are found by drawStart's attachAll).
func (e *externalObjective[O]) report(j bo.Job) error {
	e.mu.Lock()
	f := e.onSubmit
	e.mu.Unlock()
	if f == nil {
		return nil
	}
	return f(j)
}

// intent journals an array about to be submitted: its token; an error
// cancels the submission.
func (e *externalObjective[O]) intent(j external.Job) error {
	return e.report(bo.Job{Token: j.Token})
}

// submitted journals a submitted array's id (the loop logs a failure).
func (e *externalObjective[O]) submitted(j external.Job) {
	e.report(bo.Job{ID: j.ID, Token: j.Token})
}

// attachAll re-attaches to every job array of the run's Slurm directory
// (the labelled start's, before the loop journals any: drawStart).
func (e *externalObjective[O]) attachAll() error {
	if e.slurm == nil {
		return nil
	}
	_, err := e.slurm.AttachAll()
	return err
}

// Attach re-attaches to a journaled job array (Slurm only): by its token
// (and id, when journaled), or by its id alone (journaled before tokens).
// An array that never reached Slurm is reported as bo.ErrNotSubmitted.
func (e *externalObjective[O]) Attach(job bo.Job) error {
	if e.slurm == nil {
		return nil
	}
	var err error
	if job.Token == "" {
		_, err = e.slurm.Attach(job.ID)
	} else {
		_, err = e.slurm.AttachToken(job.Token, job.ID)
	}
	if errors.Is(err, external.ErrNotSubmitted) {
		return notSubmitted{err}
	}
	return err
}

// notSubmitted is external.ErrNotSubmitted's error as the loop knows it,
// bo.ErrNotSubmitted.
type notSubmitted struct{ err error }

func (e notSubmitted) Error() string        { return e.err.Error() }
func (e notSubmitted) Unwrap() error        { return e.err }
func (e notSubmitted) Is(target error) bool { return target == bo.ErrNotSubmitted }

var (
	_ bo.Submitter            = (*externalObjective[string])(nil)
	_ bo.TaggedScorer[string] = (*externalObjective[string])(nil)
)
