package external

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// SlurmOptions configures a Slurm executor.
type SlurmOptions struct {
	// Dir holds one directory per job array (required). It must be on a
	// filesystem that the compute nodes share, and belong to one run: a
	// resumed run re-attaches to the arrays found there.
	Dir string
	// Args are passed to sbatch before the job script (--partition=...,
	// --time=..., --mem=...): SplitCommand splits a --slurm-args string.
	Args []string
	// WorkDir is the program's working directory on the nodes (sbatch
	// --chdir; default: the caller's).
	WorkDir string
	// Env is exported to the program by the job script, on top of the
	// environment sbatch propagates.
	Env []string
	// Timeout, when set and Args have no --time, becomes sbatch's
	// --time, rounded up to whole minutes (Slurm's unit): an array task
	// that runs longer ends TIMEOUT and fails.
	Timeout time.Duration
	// Poll is the interval between looks at the result files and squeue
	// (default 5 s).
	Poll time.Duration
	// BatchWindow is how long Score waits after the first object of a
	// batch for further concurrent calls before submitting them as one
	// array (default 1 s).
	BatchWindow time.Duration
	// MaxBatch bounds the tasks of one array (default 1000, under Slurm's
	// default MaxArraySize of 1001).
	MaxBatch int
	// ResultGrace is how long a task that Slurm reports finished, or no
	// longer reports, may take to show its result file before it fails
	// (default 30 s: a shared filesystem may show a file late).
	ResultGrace time.Duration
	// OnIntent is called with each array before sbatch runs (Job.ID
	// empty; its directory, manifest and token on disk): the caller
	// journals the token there, so that a kill between sbatch and OnSubmit
	// leaves something to look the array up by (AttachToken). An error
	// cancels the submission: the batch's Score calls fail with it.
	OnIntent func(Job) error
	// OnSubmit is called with each array as soon as sbatch accepted it,
	// before any of its Score calls returns: the caller journals the job id
	// (and the objects) there, to Attach after a restart.
	OnSubmit func(Job)
	// Negate makes Score return the negated score.
	Negate bool
	// Logf, when set, reports submissions, re-attachments and squeue
	// errors.
	Logf func(format string, args ...any)
	// Sbatch, Squeue and Scancel name the Slurm commands (default: found
	// on PATH).
	Sbatch, Squeue, Scancel string
}

// Job is one submitted job array.
type Job struct {
	// ID is Slurm's job id of the array (the %A of its tasks); "" in
	// OnIntent, and for an array Slurm ran but no longer lists and whose
	// id was never written (AttachToken).
	ID string
	// Token is unique to the array (its directory's name and random
	// digits): the array is submitted with job name "tlbo-" + Token, by
	// which AttachToken finds it when no id was recorded.
	Token string
	// Dir is the array's directory: manifest.jsonl, job.sh, results/.
	Dir string
	// Objects are the objects of the array's tasks: task i evaluates
	// Objects[i].
	Objects []string
}

// Slurm is an objective computed by a user's program run as Slurm array
// tasks, one object per task: see the package documentation. It is safe
// for concurrent use.
type Slurm struct {
	argv []string
	opts SlurmOptions

	mu      sync.Mutex
	byObj   map[string]*stask // the latest untagged task of each object not yet consumed
	byTag   map[string]*stask // the tasks of tagged evaluations not yet consumed, by tagKey (ScoreTagged)
	pending []*stask          // objects waiting for the batch window
	timer   *time.Timer
	jobs    map[string]*sjob // arrays with unresolved tasks, by directory
	known   map[string]bool  // directories of the arrays attached or submitted
	wake    chan struct{}
	closed  chan struct{}
	once    sync.Once
	poller  bool
}

type sjob struct {
	Job
	tasks []*stask
	// legacy is set for an array attached without a tags file (written
	// before evaluations were tagged): its tasks are matched by object.
	legacy bool
}

// stask is one object's evaluation: pending, or array task index of job.
type stask struct {
	obj      string
	tag      string // the evaluation's tag (ScoreTagged), "" for none
	job      *sjob
	index    int
	attached bool // of an attached array: kept until a Score call takes it
	done     chan struct{}
	score    float64
	err      error

	since     time.Time // when Slurm first reported it finished, or stopped reporting it, without a result
	lastState string
}

func (t *stask) resolved() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// NewSlurm returns the executor of the program that cmdline names (split
// by SplitCommand).
func NewSlurm(cmdline string, opts SlurmOptions) (*Slurm, error) {
	argv, err := SplitCommand(cmdline)
	if err != nil {
		return nil, err
	}
	return NewSlurmArgv(argv, opts)
}

// NewSlurmArgv is NewSlurm with the program and its arguments given.
func NewSlurmArgv(argv []string, opts SlurmOptions) (*Slurm, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("external: no program given")
	}
	if opts.Dir == "" {
		return nil, errors.New("external: Slurm needs a directory on the shared filesystem")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if opts.WorkDir == "" {
		if opts.WorkDir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if opts.Poll <= 0 {
		opts.Poll = 5 * time.Second
	}
	if opts.BatchWindow <= 0 {
		opts.BatchWindow = time.Second
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 1000
	}
	if opts.ResultGrace <= 0 {
		opts.ResultGrace = 30 * time.Second
	}
	for _, c := range []*string{&opts.Sbatch, &opts.Squeue, &opts.Scancel} {
		if *c == "" {
			switch c {
			case &opts.Sbatch:
				*c = "sbatch"
			case &opts.Squeue:
				*c = "squeue"
			default:
				*c = "scancel"
			}
		}
	}
	for _, e := range opts.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || !validEnvName(k) {
			return nil, fmt.Errorf("external: environment entry %q is not NAME=VALUE", e)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("external: %w", err)
	}
	return &Slurm{argv: slices.Clone(argv), opts: opts, byObj: map[string]*stask{}, byTag: map[string]*stask{}, jobs: map[string]*sjob{},
		known: map[string]bool{}, wake: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

func validEnvName(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for _, c := range k {
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

func (s *Slurm) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// Score evaluates obj as a task of a job array: concurrent calls within the
// batch window share one array, and a call for an object of an attached
// array (or of one in flight) waits for that task instead of submitting it
// again.
func (s *Slurm) Score(obj string) (float64, error) { return s.ScoreContext(context.Background(), obj) }

// ScoreContext is Score, given up when ctx is done (the array task is left
// to run).
func (s *Slurm) ScoreContext(ctx context.Context, obj string) (float64, error) {
	return s.ScoreTagged(ctx, "", obj)
}

// ScoreTagged is ScoreContext for the evaluation that tag names, unique to
// it among the evaluations of Dir's arrays (the BO loop's query or prior
// sample): the evaluation gets the result of the array task submitted for
// tag and obj, attached after a restart or in flight, and never another
// evaluation's, so that an object evaluated again on purpose (a stochastic
// objective) is evaluated again. The tag is kept in the array's directory
// (tags) before sbatch runs. A task is matched by its tag and object: a
// tag attached with another object is not taken (obj is evaluated anew).
// Tag "" is ScoreContext: untagged calls share the task of an object in
// flight, or an attached array's untagged task. An array written before
// tags (no tags file) is matched by object for tagged calls too.
func (s *Slurm) ScoreTagged(ctx context.Context, tag, obj string) (float64, error) {
	if strings.ContainsAny(tag, "\n\r") {
		return 0, fmt.Errorf("external: tag %q has a line break", tag)
	}
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return 0, fail(FailClosed, "objective: closed")
	default:
	}
	var t *stask
	if tag == "" {
		t = s.byObj[obj]
	} else if t = s.byTag[tagKey(tag, obj)]; t == nil {
		if old := s.byObj[obj]; old != nil && old.job != nil && old.job.legacy {
			t = old // an array from before tags
		}
	}
	if t == nil {
		t = &stask{obj: obj, tag: tag, done: make(chan struct{})}
		if tag == "" {
			s.byObj[obj] = t
		} else {
			s.byTag[tagKey(tag, obj)] = t
		}
		s.pending = append(s.pending, t)
		switch {
		case len(s.pending) >= s.opts.MaxBatch:
			s.flushLocked()
		case len(s.pending) == 1:
			s.timer = time.AfterFunc(s.opts.BatchWindow, s.flush)
		}
	}
	s.mu.Unlock()
	select {
	case <-t.done:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-s.closed:
		return 0, fail(FailClosed, "objective: closed while waiting for Slurm")
	}
	s.mu.Lock()
	// Taken: a later call evaluates obj again.
	if s.byObj[obj] == t {
		delete(s.byObj, obj)
	}
	if k := tagKey(tag, obj); tag != "" && s.byTag[k] == t {
		delete(s.byTag, k)
	}
	s.mu.Unlock()
	if t.err != nil {
		return 0, t.err
	}
	if s.opts.Negate {
		return -t.score, nil
	}
	return t.score, nil
}

// tagKey is the key of byTag: a tagged evaluation's tag and object.
func tagKey(tag, obj string) string { return tag + "\x00" + obj }

// Jobs returns the arrays with tasks still running (or not yet read).
func (s *Slurm) Jobs() []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	var jobs []Job
	for _, j := range s.jobs {
		jobs = append(jobs, j.Job)
	}
	slices.SortFunc(jobs, func(a, b Job) int { return strings.Compare(a.Dir, b.Dir) })
	return jobs
}

// Cancel cancels a job array (scancel); its unfinished tasks then fail as
// CANCELLED.
func (s *Slurm) Cancel(jobID string) error {
	_, err := runSlurm(s.opts.Scancel, jobID)
	return err
}

// Close stops waiting: pending Score calls fail with FailClosed. Arrays
// already submitted keep running, so that a later run can Attach to them.
func (s *Slurm) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		if s.timer != nil {
			s.timer.Stop()
		}
		close(s.closed)
		s.mu.Unlock()
	})
	return nil
}

// runSlurm runs a Slurm command and returns its standard output; an error
// carries its standard error.
func runSlurm(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), fmt.Errorf("%s: %s", filepath.Base(name), msg)
	}
	return stdout.String(), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
