package external

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

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
