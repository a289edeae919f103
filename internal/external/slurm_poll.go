package external

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

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
