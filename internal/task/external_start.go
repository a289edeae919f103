package task

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// StartFile journals the scores of a drawn labelled start (--initial N) as
// they arrive, one JSON line per object, so that a start killed part-way is
// resumed without evaluating an object twice; bo.InitialFile holds them
// once all are in.
const StartFile = "initial.jsonl"

// startStream is the PCG stream of the generic --initial draw.
const startStream = 0x7374617274 // "start"

// startRecord is a line of StartFile.
type startRecord struct {
	Key     string  `json:"object"`
	Score   float64 `json:"score"`
	Failure string  `json:"failure,omitempty"`
}

// ProgramValue is the key of Env.Opts under which the task's own functions
// find the program of a program objective (its CMD ARGS; absent otherwise):
// their --objective is then the task's default, and a task that draws its
// own start (Spec.InitialCalls) says that the program scores it.
const ProgramValue = "program objective"

// ownEnv is the environment the task's own functions see in a run: with a
// program objective, its --objective is the task's default (whose keys,
// parsing and data the program's objective keeps) and ProgramValue names
// the program.
func (d *Defined[O, E]) ownEnv(env *Env) *Env {
	cmd, ok := CommandOf(env.Opts.String(ObjectiveOption))
	if IsManual(env) {
		cmd, ok = "manual (people's measurements, ask and tell)", true
	}
	if !ok {
		return env
	}
	own := *env
	own.Opts = maps.Clone(env.Opts)
	for _, o := range d.s.Options {
		if o.Name == ObjectiveOption {
			own.Opts[ObjectiveOption] = o.Zero()
		}
	}
	own.Opts[ProgramValue] = cmd
	return &own
}

// drawsStart reports whether the run draws its labelled start here: a
// program objective's --initial N, or --initial N of a task that has no
// such draw of its own (Spec.InitialCalls).
func (d *Defined[O, E]) drawsStart(env *Env) bool {
	return env.Opts.Int(InitialOption) > 0 && (IsProgram(env) || IsManual(env) || d.s.InitialCalls == nil)
}

// drawStart is the run's labelled start under --initial N: N distinct
// objects (by the objective's keys) drawn from the data set in the order of
// a permutation seeded by env.Seed, skipping those the network cannot take
// as examples (a task with a draw of its own, Spec.InitialCalls, has drawn
// them: ds holds them), and scored by obj on workers goroutines, each score
// appended to dir/StartFile as it arrives. A run whose dir/bo.InitialFile
// exists reads its scores back (the same draw is required); one whose
// StartFile holds some evaluates only the others. The returned evaluations
// are the run's first N oracle calls.
func (d *Defined[O, E]) drawStart(env *Env, dir string, obj Objective[O], ds Dataset[O], workers int) (Dataset[O], []bo.Evaluation, error) {
	n := env.Opts.Int(InitialOption)
	objs, keys, err := d.startObjects(env, obj, ds, n)
	if err != nil {
		return ds, nil, err
	}
	if m, ok := obj.(interface{ recordStart([]string) error }); ok {
		if err := m.recordStart(keys); err != nil {
			return ds, nil, err
		}
	}
	scores, failures, err := d.startScores(env, dir, obj, objs, keys, workers)
	if err != nil {
		return ds, nil, err
	}
	calls := make([]bo.Evaluation, n)
	failed := make([]bool, n)
	for i := range objs {
		calls[i] = bo.Evaluation{Object: keys[i], Score: scores[i]}
		failed[i] = failures[i] != ""
	}
	if env.Stderr != nil {
		fmt.Fprintf(env.Stderr, "labelled start: %d objects drawn with seed %d and scored by the objective: the run's first %d oracle calls%s\n",
			n, env.Seed, n, failureNote(keys, failures, obj.FailureScore()))
	}
	source := ds.Source // the task's draw says so
	if d.s.InitialCalls == nil {
		source = fmt.Sprintf("%s; %d drawn at random with the seed, scored by the objective (oracle calls)", ds.Source, n)
	}
	return Dataset[O]{Data: bo.Data[O]{Objects: objs, Scores: scores, Failed: failed}, Source: source}, calls, nil
}

// startObjects returns the n objects of the start and their keys: those
// the task drew (ds, when it has a draw of its own), else drawObjects'.
func (d *Defined[O, E]) startObjects(env *Env, obj Objective[O], ds Dataset[O], n int) ([]O, []string, error) {
	if d.s.InitialCalls == nil {
		return d.drawObjects(env, obj, ds, n)
	}
	if len(ds.Objects) != n {
		return nil, nil, fmt.Errorf("--%s %d: the task drew %d objects", InitialOption, n, len(ds.Objects))
	}
	keys := make([]string, n)
	for i, o := range ds.Objects {
		keys[i] = obj.Key(o)
	}
	return ds.Objects, keys, nil
}

// failureNote says how many of the start's evaluations failed, and the
// first one's reason ("" when none did).
func failureNote(keys, failures []string, score float64) string {
	failed, first := 0, ""
	for i, f := range failures {
		if f != "" {
			if failed++; first == "" {
				first = keys[i] + ": " + f
			}
		}
	}
	if failed == 0 {
		return ""
	}
	return fmt.Sprintf("; %d failed and have the failure score %g (the first: %s)", failed, score, first)
}

// drawObjects draws n distinct objects of ds that the network can take.
func (d *Defined[O, E]) drawObjects(env *Env, obj Objective[O], ds Dataset[O], n int) ([]O, []string, error) {
	if n > len(ds.Objects) {
		return nil, nil, fmt.Errorf("--%s %d: the data set (%s) has %d objects", InitialOption, n, ds.Source, len(ds.Objects))
	}
	perm := rand.New(rand.NewPCG(env.Seed, startStream)).Perm(len(ds.Objects))
	seen := map[string]bool{}
	var objs []O
	var keys []string
	skipped := 0
	for _, i := range perm {
		if len(objs) == n {
			break
		}
		o := ds.Objects[i]
		k := obj.Key(o)
		if seen[k] {
			continue
		}
		if _, err := d.s.Example(o); err != nil {
			skipped++
			continue
		}
		seen[k] = true
		objs, keys = append(objs, o), append(keys, k)
	}
	if len(objs) < n {
		return nil, nil, fmt.Errorf("--%s %d: only %d distinct objects of the data set (%s) can be taken by the network (%d cannot)",
			InitialOption, n, len(objs), ds.Source, skipped)
	}
	return objs, keys, nil
}

// startScores returns the scores of the drawn start and the failure
// reasons of those that failed: read back from dir/bo.InitialFile (the
// reasons from dir/StartFile), else from dir/StartFile and by evaluating
// the rest.
func (d *Defined[O, E]) startScores(env *Env, dir string, obj Objective[O], objs []O, keys []string, workers int) ([]float64, []string, error) {
	n := len(objs)
	scores, failures := make([]float64, n), make([]string, n)
	done, err := readStart(filepath.Join(dir, StartFile))
	if err != nil {
		return nil, nil, err
	}
	calls, err := bo.ReadInitial(dir)
	switch {
	case err == nil:
		if len(calls) != n {
			return nil, nil, fmt.Errorf("--%s %d: the run's %s holds %d initial calls", InitialOption, n, bo.InitialFile, len(calls))
		}
		for i, c := range calls {
			if c.Object != keys[i] {
				return nil, nil, fmt.Errorf("--%s: the run's %s holds %s as initial call %d, this draw %s (another seed or data set?)",
					InitialOption, bo.InitialFile, c.Object, i+1, keys[i])
			}
			scores[i] = c.Score
			if r, ok := done[c.Object]; ok && r.Score == c.Score {
				failures[i] = r.Failure
			}
		}
		return scores, failures, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, nil, err
	}
	var todo []int
	for i, k := range keys {
		if r, ok := done[k]; ok {
			scores[i], failures[i] = r.Score, r.Failure
		} else {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return scores, failures, nil
	}
	if a, ok := obj.(interface{ attachAll() error }); ok && len(done) < n {
		if err := a.attachAll(); err != nil && env.Stderr != nil {
			fmt.Fprintf(env.Stderr, "note: re-attaching the start's job arrays: %v\n", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("run directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, StartFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	halt, deferred, err := evaluateAll(obj, objs, keys, todo, workers, f, scores, failures)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, StartFile), err)
	}
	if halt != nil {
		return nil, nil, fmt.Errorf("labelled start (--%s %d): %w", InitialOption, n, halt)
	}
	if deferred > 0 {
		return nil, nil, fmt.Errorf("labelled start (--%s %d): %d of its objects await their results: %w", InitialOption, n,
			deferred, bo.ErrDeferred)
	}
	return scores, failures, nil
}

// evaluateAll scores objs[todo] on workers goroutines, each result written
// to w as a startRecord line as soon as it is in. A bo.Halt of the
// objective stops it: its failure, if it has one, is written as any, an
// evaluation without one is not (a resume makes it), and the first Halt's
// error is returned once the evaluations running are in. An evaluation the
// objective defers (bo.ErrDeferred: people make it) is not written either;
// deferred counts them.
func evaluateAll[O any](obj Objective[O], objs []O, keys []string, todo []int, workers int, w *os.File, scores []float64,
	failures []string) (halt error, deferred int, werr error) {
	jobs := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range max(1, min(workers, len(todo))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s, err := obj.Score(objs[i])
				if errors.Is(err, bo.ErrDeferred) {
					mu.Lock()
					deferred++
					mu.Unlock()
					continue
				}
				r := startRecord{Key: keys[i], Score: s}
				if err != nil {
					r.Score, r.Failure = obj.FailureScore(), err.Error()
				}
				var h *bo.Halt
				if errors.As(err, &h) {
					mu.Lock()
					if halt == nil {
						halt = h.Err
					}
					mu.Unlock()
					if r.Failure = h.Failure; h.Failure == "" {
						continue
					}
				}
				line, _ := json.Marshal(r)
				mu.Lock()
				scores[i], failures[i] = r.Score, r.Failure
				if _, err := w.Write(append(line, '\n')); err != nil && werr == nil {
					werr = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range todo {
		mu.Lock()
		stop := halt != nil
		mu.Unlock()
		if stop {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return halt, deferred, werr
}

// readStart reads the records of a StartFile (none when it is missing); a
// torn last line (a kill while writing) is ignored.
func readStart(path string) (map[string]startRecord, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]startRecord{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]startRecord{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		var r startRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Key != "" {
			out[r.Key] = r
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
