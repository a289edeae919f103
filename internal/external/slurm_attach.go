package external

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

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
