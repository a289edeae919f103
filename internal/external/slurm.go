package external

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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

// flush submits the pending objects.
func (s *Slurm) flush() {
	s.mu.Lock()
	s.flushLocked()
	s.mu.Unlock()
}

func (s *Slurm) flushLocked() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	select {
	case <-s.closed:
		return // the waiting calls fail as closed
	default:
	}
	if len(s.pending) == 0 {
		return
	}
	batch := s.pending
	s.pending = nil
	go s.submitTasks(batch)
}

// submitTasks submits a batch of Score calls as one array, trying sbatch
// three times; when it keeps failing the calls fail.
func (s *Slurm) submitTasks(batch []*stask) {
	objs := make([]string, len(batch))
	for i, t := range batch {
		objs[i] = t.obj
	}
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			s.logf("objective: sbatch failed (%v); trying again in %v", err, s.opts.Poll)
			select {
			case <-time.After(s.opts.Poll):
			case <-s.closed:
				return
			}
		}
		if err = s.submit(objs, batch); err == nil {
			return
		}
	}
	f := fail(FailSlurm, "objective: %v", err)
	s.mu.Lock()
	for _, t := range batch {
		t.err = f
		close(t.done)
	}
	s.mu.Unlock()
}

// Submit submits objs as one job array and returns it; OnSubmit has been
// called when it returns. Score calls for these objects wait for its
// tasks.
func (s *Slurm) Submit(objs []string) (Job, error) {
	if len(objs) == 0 {
		return Job{}, errors.New("external: nothing to submit")
	}
	tasks := make([]*stask, len(objs))
	for i, o := range objs {
		tasks[i] = &stask{obj: o, done: make(chan struct{}), attached: true}
	}
	if err := s.submit(objs, tasks); err != nil {
		return Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return tasks[0].job.Job, nil
}

// submit writes an array's directory, reports the intent, runs sbatch and
// registers the tasks.
func (s *Slurm) submit(objs []string, tasks []*stask) error {
	dir, err := s.newBatchDir()
	if err != nil {
		return err
	}
	var manifest bytes.Buffer
	var tags bytes.Buffer
	for i, o := range objs {
		manifest.Write(encodeRequest(uint64(i), o))
		tags.WriteString(tasks[i].tag + "\n")
	}
	if err := writeFileSync(filepath.Join(dir, "manifest.jsonl"), manifest.Bytes(), 0o644); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(dir, tagsFile), tags.Bytes(), 0o644); err != nil {
		return err
	}
	script := s.jobScript(dir)
	if err := writeFileSync(filepath.Join(dir, "job.sh"), []byte(script), 0o755); err != nil {
		return err
	}
	token, err := newToken(dir)
	if err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(dir, tokenFile), []byte(token+"\n"), 0o644); err != nil {
		return err
	}
	job := &sjob{Job: Job{Token: token, Dir: dir, Objects: slices.Clone(objs)}, tasks: tasks}
	if s.opts.OnIntent != nil {
		if err := s.opts.OnIntent(job.Job); err != nil {
			abandon(dir, "its intent could not be recorded")
			return fmt.Errorf("external: record the intent of %s: %w", dir, err)
		}
	}
	args := []string{"--parsable", fmt.Sprintf("--array=0-%d", len(objs)-1), "--job-name=" + tokenJobName(token),
		"--chdir=" + s.opts.WorkDir, "--output=" + filepath.Join(dir, "logs", "%a.log")}
	if s.opts.Timeout > 0 && !hasTimeArg(s.opts.Args) {
		args = append(args, fmt.Sprintf("--time=%d", int((s.opts.Timeout+time.Minute-1)/time.Minute)))
	}
	args = append(append(args, s.opts.Args...), filepath.Join(dir, "job.sh"))
	out, err := runSlurm(s.opts.Sbatch, args...)
	var id string
	if err == nil {
		id, _, _ = strings.Cut(strings.TrimSpace(out), ";") // "123" or "123;cluster"
		if _, perr := strconv.ParseUint(id, 10, 64); perr != nil {
			err = fmt.Errorf("sbatch printed %q, not a job id", out)
		}
	}
	if err != nil {
		// sbatch can fail after Slurm took the array (a reply that timed
		// out): look for it by its name before anything is submitted again.
		found, ok, lerr := s.lookup(token)
		if lerr != nil || !ok {
			abandon(dir, "sbatch failed")
			return fmt.Errorf("sbatch: %v", err)
		}
		s.logf("objective: sbatch failed (%v), but Slurm has the array as job %s", err, found)
		id = found
	}
	if err := writeFileSync(filepath.Join(dir, "job_id"), []byte(id+"\n"), 0o644); err != nil {
		return err
	}
	job.ID = id
	s.logf("objective: submitted job array %s (%d tasks) in %s", id, len(objs), dir)
	// Before the tasks can finish: the caller journals the id before any
	// of the array's results.
	if s.opts.OnSubmit != nil {
		s.opts.OnSubmit(job.Job)
	}
	s.mu.Lock()
	for i, t := range tasks {
		t.job, t.index = job, i
		if old := s.byObj[t.obj]; t.attached && t.tag == "" && (old == nil || old.resolved()) {
			s.byObj[t.obj] = t // Submit's tasks: Score calls for their objects wait for them
		}
	}
	s.jobs[dir] = job
	s.known[dir] = true
	s.startPollerLocked()
	s.mu.Unlock()
	return nil
}

func hasTimeArg(args []string) bool {
	for _, a := range args {
		if a == "-t" || a == "--time" || strings.HasPrefix(a, "--time=") || (strings.HasPrefix(a, "-t") && len(a) > 2) {
			return true
		}
	}
	return false
}

// newBatchDir creates the next array directory, Dir/array-NNNN, with its
// results/ and logs/.
func (s *Slurm) newBatchDir() (string, error) {
	entries, err := os.ReadDir(s.opts.Dir)
	if err != nil {
		return "", fmt.Errorf("external: %w", err)
	}
	n := 0
	for _, e := range entries {
		var k int
		if _, err := fmt.Sscanf(e.Name(), "array-%d", &k); err == nil && k >= n {
			n = k + 1
		}
	}
	for ; ; n++ {
		dir := filepath.Join(s.opts.Dir, fmt.Sprintf("array-%04d", n))
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("external: %w", err)
		}
		for _, sub := range []string{"results", "logs"} {
			if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
				return "", fmt.Errorf("external: %w", err)
			}
		}
		return dir, nil
	}
}

// tokenFile, in an array's directory, holds its token (Job.Token),
// written before sbatch runs.
const tokenFile = "token"

// tagsFile, in an array's directory, holds the tag of each task's
// evaluation (ScoreTagged), one line per task ("" for none), written
// before sbatch runs.
const tagsFile = "tags"

// abandonedFile, in an array's directory, marks an array given up as never
// submitted, its objects submitted anew elsewhere: its job script evaluates
// nothing, should Slurm start it after all (an sbatch orphaned by a kill).
const abandonedFile = "abandoned"

// newToken returns a token for the array directory dir: its name and 16
// random hex digits, so that no other array, of this run or of a run
// directory removed and made again, has its job name.
func newToken(dir string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("external: token: %w", err)
	}
	return filepath.Base(dir) + "-" + hex.EncodeToString(b[:]), nil
}

// tokenJobName is the Slurm job name of the array with token.
func tokenJobName(token string) string { return "tlbo-" + token }

// abandon marks dir as never submitted (abandonedFile), saying why.
func abandon(dir, why string) error {
	return writeFileSync(filepath.Join(dir, abandonedFile), []byte(why+"\n"), 0o644)
}

// lookup asks Slurm for the array submitted with token: its id and
// whether Slurm lists it (any state; Slurm forgets an ended job MinJobAge
// after it ended, 300 s by default).
func (s *Slurm) lookup(token string) (string, bool, error) { return s.lookupName(tokenJobName(token)) }

// lookupName asks Slurm for the job named name (see lookup).
func (s *Slurm) lookupName(name string) (string, bool, error) {
	out, err := runSlurm(s.opts.Squeue, "-h", "-t", "all", "--name="+name, "-o", "%F")
	if err != nil {
		return "", false, fmt.Errorf("external: look up job %s: %w", name, err)
	}
	id := strings.TrimSpace(firstLine(out))
	return id, id != "", nil
}

// readToken returns the token of the array in dir (tokenFile); an array
// written before tokens has none (an error wrapping fs.ErrNotExist).
func readToken(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, tokenFile))
	return strings.TrimSpace(string(b)), err
}

// jobName is the Slurm job name of an array directory written before
// tokens (no token file): unique to the directory's path.
func jobName(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return "tlbo-" + filepath.Base(dir) + "-" + hex.EncodeToString(sum[:4])
}

// jobScript is the array's job script: task i feeds line i+1 of the
// manifest to the program, keeps its output and standard error, and writes
// its exit status last (the result is complete when that file exists);
// a task Slurm signals (cancelled, out of time) writes no status.
func (s *Slurm) jobScript(dir string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString("# Written by tlbo-native (internal/external): array task i evaluates line i+1 of manifest.jsonl\n")
	b.WriteString("# with the objective's command, one JSON request on its standard input.\n")
	fmt.Fprintf(&b, "d=%s\n", shellQuote(dir))
	b.WriteString("i=${SLURM_ARRAY_TASK_ID:?not run as a job array task}\n")
	// An array given up as never submitted (abandonedFile) whose sbatch
	// reached Slurm after all: its objects were submitted anew, so
	// evaluating them here would pay for them twice.
	fmt.Fprintf(&b, "if [ -e \"$d/%s\" ]; then echo \"tlbo-native: $d was given up as never submitted; not evaluating\" >&2; exit 0; fi\n",
		abandonedFile)
	for _, e := range s.opts.Env {
		k, v, _ := strings.Cut(e, "=")
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(v))
	}
	quoted := make([]string, len(s.argv))
	for i, a := range s.argv {
		quoted[i] = shellQuote(a)
	}
	b.WriteString("rm -f \"$d/results/$i.status\"\n")
	// Slurm signals a cancelled or timed-out task with SIGTERM, the program
	// and this script alike: leave without a status file, so that the task's
	// Slurm state (CANCELLED, TIMEOUT), not the program's exit status, is the
	// reason of the failure.
	b.WriteString("trap 'exit 143' TERM INT\n")
	fmt.Fprintf(&b, "sed -n \"$((i + 1))p\" \"$d/manifest.jsonl\" | %s >\"$d/results/$i.out\" 2>\"$d/results/$i.err\"\n",
		strings.Join(quoted, " "))
	b.WriteString("status=$?\n")
	b.WriteString("echo \"$status\" >\"$d/results/$i.status.tmp\" && mv -f \"$d/results/$i.status.tmp\" \"$d/results/$i.status\"\n")
	b.WriteString("exit \"$status\"\n")
	return b.String()
}

// ErrNotSubmitted is wrapped by AttachToken's error for an array that
// never reached Slurm: no job has its token's name, and it has no result
// and no log. Its directory is then marked abandoned (its job script
// evaluates nothing, should an sbatch orphaned by the kill deliver it
// late), and its objects are for the caller to submit anew.
var ErrNotSubmitted = errors.New("external: the job array never reached Slurm")

// Attach re-attaches to the job array jobID, submitted earlier into Dir
// (by this run before a restart): its results already written are read
// back, its running tasks awaited, and Score calls for its objects wait for
// them instead of submitting them again. It returns the array.
func (s *Slurm) Attach(jobID string) (Job, error) {
	dirs, err := s.batchDirs()
	if err != nil {
		return Job{}, err
	}
	for _, dir := range dirs {
		if id, _ := readJobID(dir); id == jobID {
			return s.attachDir(dir, id)
		}
	}
	return Job{}, fmt.Errorf("external: no job array %s in %s", jobID, s.opts.Dir)
}

// AttachToken re-attaches (as Attach) to the array whose intent OnIntent
// reported with token, and jobID its id when the caller has it (""
// otherwise). Without an id it finds the array's: its job_id file, else
// Slurm's job of the token's name (an array submitted just before a kill);
// an array that Slurm ran but no longer lists, with results or logs, is
// attached without one (its tasks without a result then fail as unknown to
// Slurm). An array with no trace in Slurm or its directory never reached
// Slurm: the error wraps ErrNotSubmitted. Any other error (squeue not
// answering, the directory gone) means that this cannot be told.
func (s *Slurm) AttachToken(token, jobID string) (Job, error) {
	name, _, ok := cutLast(token, "-")
	dir := filepath.Join(s.opts.Dir, name)
	if got, err := readToken(dir); !ok || err != nil || got != token {
		return Job{}, fmt.Errorf("external: no job array with token %s in %s (%v)", token, s.opts.Dir, err)
	}
	if jobID == "" {
		var err error
		if jobID, err = s.findJob(dir, token); err != nil {
			return Job{}, err
		}
	}
	return s.attachDir(dir, jobID)
}

// cutLast slices s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// findJob finds the job id of the array in dir, submitted with token,
// that has no job_id file: see AttachToken. It writes the id it finds to
// job_id, and marks an array that never reached Slurm abandoned.
func (s *Slurm) findJob(dir, token string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, abandonedFile)); err == nil {
		return "", fmt.Errorf("%s was given up earlier: %w", dir, ErrNotSubmitted)
	}
	if id, err := readJobID(dir); err == nil {
		return id, nil
	}
	record := func(id string) (string, error) {
		if err := writeFileSync(filepath.Join(dir, "job_id"), []byte(id+"\n"), 0o644); err != nil {
			return "", err
		}
		s.logf("objective: found the job array of %s, submitted just before the run stopped: job %s", dir, id)
		return id, nil
	}
	id, ok, err := s.lookup(token)
	switch {
	case err != nil:
		return "", fmt.Errorf("whether Slurm has the array of %s cannot be told: %w", dir, err)
	case ok:
		return record(id)
	case hasEntries(filepath.Join(dir, "results")) || hasEntries(filepath.Join(dir, "logs")):
		s.logf("objective: Slurm ran the array of %s but lists it no more; its results are read back", dir)
		return "", nil
	}
	// No trace: mark it given up, then look once more, for an sbatch that
	// reached Slurm between the first look and the mark.
	if err := abandon(dir, "no job "+tokenJobName(token)+" in Slurm and no result when the run resumed"); err != nil {
		return "", err
	}
	if id, ok, err := s.lookup(token); err != nil || ok {
		os.Remove(filepath.Join(dir, abandonedFile))
		if err != nil {
			return "", fmt.Errorf("whether Slurm has the array of %s cannot be told: %w", dir, err)
		}
		return record(id)
	}
	return "", fmt.Errorf("%s (job name %s): %w", dir, tokenJobName(token), ErrNotSubmitted)
}

// hasEntries reports whether dir holds any file.
func hasEntries(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

// AttachAll re-attaches to every array in Dir (see Attach), including one
// submitted just before a crash whose id was not yet recorded (found by
// its token, as AttachToken does); arrays that never reached Slurm are
// left, marked abandoned. It suits a caller that evaluates each object at
// most once; one that evaluates an object again on purpose attaches, by
// the ids and tokens its journal has, with AttachToken.
func (s *Slurm) AttachAll() ([]Job, error) {
	dirs, err := s.batchDirs()
	if err != nil {
		return nil, err
	}
	var jobs []Job
	for _, dir := range dirs {
		var id string
		if token, terr := readToken(dir); terr == nil {
			id, err = s.findJob(dir, token)
			if errors.Is(err, ErrNotSubmitted) {
				s.logf("objective: %v: left alone", err)
				continue
			}
			if err != nil {
				return jobs, err
			}
		} else if id, err = readJobID(dir); err != nil {
			// Written before tokens: sbatch may have accepted it before
			// the id was written.
			var found bool
			var qerr error
			if id, found, qerr = s.lookupName(jobName(dir)); qerr != nil || !found {
				s.logf("objective: %s has no job id and Slurm knows no job %s: never submitted, left alone", dir, jobName(dir))
				continue
			}
			if err := writeFileSync(filepath.Join(dir, "job_id"), []byte(id+"\n"), 0o644); err != nil {
				return jobs, err
			}
		}
		j, err := s.attachDir(dir, id)
		if err != nil {
			return jobs, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// attachDir attaches to the array in dir with id ("" when Slurm no longer
// lists it and its id was never recorded).
func (s *Slurm) attachDir(dir, id string) (Job, error) {
	objs, err := readManifest(filepath.Join(dir, "manifest.jsonl"))
	if err != nil {
		return Job{}, err
	}
	token, _ := readToken(dir) // "" for an array written before tokens
	tags, legacy, err := readTags(dir, len(objs))
	if err != nil {
		return Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known[dir] {
		if j := s.jobs[dir]; j != nil {
			return j.Job, nil
		}
		return Job{ID: id, Token: token, Dir: dir, Objects: objs}, nil
	}
	job := &sjob{Job: Job{ID: id, Token: token, Dir: dir, Objects: objs}, legacy: legacy}
	for i, o := range objs {
		t := &stask{obj: o, tag: tags[i], job: job, index: i, attached: true, done: make(chan struct{})}
		job.tasks = append(job.tasks, t)
		if t.tag != "" {
			// Only the evaluation it was submitted for takes it.
			if k := tagKey(t.tag, o); s.byTag[k] == nil || s.byTag[k].resolved() {
				s.byTag[k] = t
			}
		} else if old := s.byObj[o]; old == nil || old.resolved() {
			s.byObj[o] = t
		}
	}
	s.jobs[dir] = job
	s.known[dir] = true
	s.startPollerLocked()
	select {
	case s.wake <- struct{}{}: // results already written are read at once
	default:
	}
	s.logf("objective: re-attached to job array %s (%d tasks) in %s", id, len(objs), dir)
	return job.Job, nil
}

// batchDirs returns Dir's array directories in order.
func (s *Slurm) batchDirs() ([]string, error) {
	entries, err := os.ReadDir(s.opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("external: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "array-") {
			if _, err := os.Stat(filepath.Join(s.opts.Dir, e.Name(), "manifest.jsonl")); err == nil {
				dirs = append(dirs, filepath.Join(s.opts.Dir, e.Name()))
			}
		}
	}
	return dirs, nil
}

func readJobID(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "job_id"))
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", fmt.Errorf("%s: empty job_id", dir)
	}
	return id, nil
}

// tagKey is the key of byTag: a tagged evaluation's tag and object.
func tagKey(tag, obj string) string { return tag + "\x00" + obj }

// readTags returns the tags of the n tasks of the array in dir, and
// whether it has none (written before tags: legacy).
func readTags(dir string, n int) ([]string, bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, tagsFile))
	if errors.Is(err, os.ErrNotExist) {
		return make([]string, n), true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("external: %w", err)
	}
	tags := strings.Split(string(b), "\n")
	if len(tags) != n+1 || tags[n] != "" {
		return nil, false, fmt.Errorf("external: %s has %d lines, want one per task (%d)", filepath.Join(dir, tagsFile), len(tags)-1, n)
	}
	return tags[:n], false, nil
}

// readManifest returns the objects of a manifest, in task order.
func readManifest(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("external: %w", err)
	}
	defer f.Close()
	var objs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		var r request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.ID != uint64(len(objs)) {
			return nil, fmt.Errorf("external: %s line %d is not request %d (%v)", path, len(objs)+1, len(objs), err)
		}
		objs = append(objs, r.Object)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("external: %s: %w", path, err)
	}
	return objs, nil
}

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

func (s *Slurm) startPollerLocked() {
	if !s.poller {
		s.poller = true
		go s.poll()
	}
}

// poll looks at the unresolved tasks every Poll until Close.
func (s *Slurm) poll() {
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-t.C:
		case <-s.wake:
		}
		s.pollOnce()
	}
}

// pollOnce resolves the tasks whose result files are complete, then asks
// squeue for the states of the others and fails those that ended without a
// result.
func (s *Slurm) pollOnce() {
	s.mu.Lock()
	var open []*stask
	jobs := map[string]*sjob{}
	for key, j := range s.jobs {
		for _, t := range j.tasks {
			if !t.resolved() {
				open = append(open, t)
			}
		}
		jobs[key] = j
	}
	s.mu.Unlock()
	var waiting []*stask
	for _, t := range open {
		if score, err, ok := readResult(t.job.Dir, t.index); ok {
			s.resolve(t, score, err)
		} else {
			waiting = append(waiting, t)
		}
	}
	if len(waiting) > 0 {
		ids := map[string]bool{}
		for _, t := range waiting {
			if t.job.ID != "" { // "": Slurm lists it no more (AttachToken)
				ids[t.job.ID] = true
			}
		}
		view, err := queueView{}, error(nil)
		if len(ids) > 0 {
			view, err = s.squeue(slices.Sorted(mapKeys(ids)))
		}
		if err != nil {
			s.logf("objective: %v (trying again in %v)", err, s.opts.Poll)
		} else {
			now := time.Now()
			for _, t := range waiting {
				s.judge(t, view, now)
			}
		}
	}
	s.mu.Lock()
	for key, j := range jobs {
		if !slices.ContainsFunc(j.tasks, func(t *stask) bool { return !t.resolved() }) {
			delete(s.jobs, key)
		}
	}
	s.mu.Unlock()
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// taskState is squeue's view of an array task.
type taskState struct{ state, reason string }

// queueView is what squeue says of some arrays.
type queueView struct {
	tasks map[string]taskState // by "jobid_index"
	// whole holds the state of a record without a task index: the last
	// pending task of an array, which Slurm shows as the array itself
	// for a moment (and keeps so when it is cancelled before starting).
	whole map[string]taskState
	jobs  map[string]bool // arrays with any record
}

// squeue returns the states of the array tasks of jobs. Jobs that Slurm no
// longer knows are absent.
func (s *Slurm) squeue(jobs []string) (queueView, error) {
	v := queueView{tasks: map[string]taskState{}, whole: map[string]taskState{}, jobs: map[string]bool{}}
	out, err := runSlurm(s.opts.Squeue, "-h", "-r", "-t", "all", "-j", strings.Join(jobs, ","), "-o", "%F|%K|%T|%r")
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return v, nil // none of them is known any more
		}
		return v, fmt.Errorf("squeue: %v", err)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 4 {
			continue
		}
		st := taskState{state: f[2], reason: f[3]}
		v.jobs[f[0]] = true
		if _, err := strconv.Atoi(f[1]); err == nil {
			v.tasks[f[0]+"_"+f[1]] = st
		} else {
			v.whole[f[0]] = st
		}
	}
	return v, nil
}

// terminal reports whether a Slurm job state is final.
func terminal(state string) bool {
	switch strings.TrimRight(state, "+") {
	case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD",
		"RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD":
		return false
	}
	return true
}

// judge fails a task without a result that Slurm reports finished, or no
// longer lists, for longer than ResultGrace. (Slurm 22.05 drops a task
// cancelled while pending from the queue without a CANCELLED record, and
// every record MinJobAge after it ended.)
func (s *Slurm) judge(t *stask, view queueView, now time.Time) {
	name := t.job.ID + "_" + strconv.Itoa(t.index)
	if t.job.ID == "" {
		name = filepath.Base(t.job.Dir) + " task " + strconv.Itoa(t.index)
	}
	st, ok := view.tasks[name]
	if !ok {
		st, ok = view.whole[t.job.ID]
	}
	if ok && !terminal(st.state) {
		t.since, t.lastState = time.Time{}, st.state
		return
	}
	if t.since.IsZero() {
		t.since = now
	}
	if ok {
		t.lastState = st.state
	}
	if now.Sub(t.since) < s.opts.ResultGrace {
		return
	}
	// A last look: the result may have arrived meanwhile.
	if score, err, ok := readResult(t.job.Dir, t.index); ok {
		s.resolve(t, score, err)
		return
	}
	logs := filepath.Join(t.job.Dir, "logs", strconv.Itoa(t.index)+".log")
	last := t.lastState
	if last == "" {
		last = "never seen"
	}
	var f *Failure
	switch {
	case ok && st.reason != "" && st.reason != "None":
		f = fail(FailSlurm, "slurm: array task %s %s (%s) without a result; see %s", name, st.state, st.reason, logs)
	case ok:
		f = fail(FailSlurm, "slurm: array task %s %s without a result; see %s", name, st.state, logs)
	case view.jobs[t.job.ID] && (last == "PENDING" || last == "never seen"):
		f = fail(FailSlurm, "slurm: array task %s left the queue without running (CANCELLED while pending, or held and removed)", name)
	default:
		f = fail(FailSlurm, "slurm: array task %s is no longer known to Slurm (last state: %s) and wrote no result", name, last)
	}
	s.resolve(t, 0, f)
}

// readResult reads task i's result when its status file exists: the
// score or failure of its reply, or a failure naming its exit status.
func readResult(dir string, i int) (float64, error, bool) {
	base := filepath.Join(dir, "results", strconv.Itoa(i))
	status, err := os.ReadFile(base + ".status")
	if err != nil {
		return 0, nil, false
	}
	out, _ := os.ReadFile(base + ".out")
	want := strconv.Itoa(i)
	for _, line := range bytes.Split(out, []byte("\n")) {
		if r, ok := parseReply(line); ok && r.id == want {
			if r.failed != nil {
				return 0, r.failed, true
			}
			return r.score, nil, true
		}
	}
	tail := &tailBuffer{max: 2048}
	if b, err := os.ReadFile(base + ".err"); err == nil {
		tail.Write(b)
	}
	reason := fmt.Sprintf("objective: the program exited (status %s) without a reply", strings.TrimSpace(string(status)))
	if t := tail.String(); t != "" {
		reason += "; its last standard error: " + t
	}
	return 0, fail(FailCrash, "%s", reason), true
}

func (s *Slurm) resolve(t *stask, score float64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.resolved() {
		return
	}
	t.score, t.err = score, err
	close(t.done)
	if !t.attached && s.byObj[t.obj] == t {
		// Its Score callers hold it; a later call evaluates again.
		delete(s.byObj, t.obj)
	}
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

// writeFileSync writes a file and syncs it, so that the nodes see it whole.
func writeFileSync(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("external: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("external: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("external: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("external: %w", err)
	}
	return nil
}
