package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/manual"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// line is one journal line: exactly one of its records is set (bo's
// journal records, read with the types internal/bo exports).
type line struct {
	Query   *bo.Query   `json:"query,omitempty"`
	Version *bo.Version `json:"version,omitempty"`
	Stop    *bo.Stop    `json:"stop,omitempty"`
	Round   *bo.Round   `json:"round,omitempty"`
	Eval    *bo.Eval    `json:"eval,omitempty"`
	CPU     float64     `json:"cpu_s,omitempty"`
}

// journalState is what a run's journal says.
type journalState struct {
	// queries are the run's queries by index; done marks those with their
	// score (a round's pending queries wait for an eval record).
	queries []bo.Query
	done    []bool
	// versions are the model versions, tr the trust region of each round
	// (by the round's first query).
	versions []bo.Version
	tr       map[int]bo.TrustRegion
	// seconds is the journal's timed wall time: retrainings, prior
	// samples, queries' totals and round evaluations.
	seconds float64
	// torn says that a torn last line was skipped.
	torn string
}

// parseJournal reads the journal text b (of file name, for messages). A
// last line without its newline is being written (or was cut by a kill):
// it is skipped.
func parseJournal(name string, b []byte) (*journalState, error) {
	st := &journalState{tr: map[int]bo.TrustRegion{}}
	for n := 1; len(b) > 0; n++ {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			st.torn = fmt.Sprintf("%s: skipped a torn last line (line %d, %d bytes without a newline)", name, n, len(b))
			break
		}
		var l line
		if err := json.Unmarshal(b[:nl], &l); err != nil {
			return nil, fmt.Errorf("journal %s, line %d: %w", name, n, err)
		}
		b = b[nl+1:]
		if err := st.add(l); err != nil {
			return nil, fmt.Errorf("journal %s, line %d: %w", name, n, err)
		}
	}
	return st, nil
}

// maxQueries bounds a query index, so that a corrupt line cannot make the
// reader allocate without bound.
const maxQueries = 1 << 22

// add applies one record.
func (st *journalState) add(l line) error {
	switch {
	case l.Version != nil:
		st.versions = append(st.versions, *l.Version)
		st.seconds += l.Version.RetrainSeconds + l.Version.SampleSeconds
	case l.Query != nil:
		if err := st.set(*l.Query, true); err != nil {
			return err
		}
		st.seconds += l.Query.Timing.Total
	case l.Round != nil:
		pending := map[int]bool{}
		for _, i := range l.Round.Pending {
			pending[i] = true
		}
		for _, q := range l.Round.Queries {
			if err := st.set(q, !pending[q.Index]); err != nil {
				return err
			}
			st.seconds += q.Timing.Total
		}
		if l.Round.TR != nil {
			st.tr[l.Round.Start] = *l.Round.TR
		}
	case l.Eval != nil:
		e := l.Eval
		if e.Index < 0 || e.Index >= len(st.queries) {
			return fmt.Errorf("evaluation of query %d, which no round holds", e.Index)
		}
		st.queries[e.Index].Score, st.queries[e.Index].Failure = e.Score, e.Failure
		st.done[e.Index] = true
		st.seconds += e.Seconds
	}
	return nil
}

// set records query q, with its score when done.
func (st *journalState) set(q bo.Query, done bool) error {
	if q.Index < 0 || q.Index >= maxQueries {
		return fmt.Errorf("query index %d out of range", q.Index)
	}
	for len(st.queries) <= q.Index {
		st.queries = append(st.queries, bo.Query{Index: len(st.queries)})
		st.done = append(st.done, false)
	}
	st.queries[q.Index], st.done[q.Index] = q, done
	return nil
}

// complete returns the queries of the longest prefix with scores: the
// curve's order is the queries', so a query still being evaluated holds
// back those after it.
func (st *journalState) complete() []bo.Query {
	n := 0
	for n < len(st.done) && st.done[n] {
		n++
	}
	return st.queries[:n]
}

// pending counts the queries proposed and awaiting their evaluation.
func (st *journalState) pending() int {
	n := 0
	for _, d := range st.done {
		if !d {
			n++
		}
	}
	return n
}

// num is a float64 that encodes NaN and infinities as JSON's null.
type num float64

// MarshalJSON writes null for a non-finite value.
func (x num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func nums(v []float64) []num {
	out := make([]num, len(v))
	for i, x := range v {
		out[i] = num(x)
	}
	return out
}

// Run is a run as the dashboard shows it.
type Run struct {
	// ID is the run's path under the root, with slashes.
	ID string `json:"id"`
	// Task, Strategy, ELBO and Seed are configuration fields ("" when
	// absent); Budget is the number of queries the run makes.
	Task     string `json:"task"`
	Strategy string `json:"strategy"`
	ELBO     string `json:"elbo"`
	Seed     string `json:"seed"`
	Budget   int    `json:"budget"`
	Maximize bool   `json:"maximize"`
	// Queries counts the evaluated queries (a round's pending ones left
	// out), Done those that spent budget (as the loop counts them: every
	// query under --repeats authors, else the valid ones whose score was
	// not known), Pending those proposed and awaiting their evaluation,
	// Distinct the distinct evaluations, Versions the model versions.
	Queries  int `json:"queries"`
	Done     int `json:"done"`
	Pending  int `json:"pending"`
	Distinct int `json:"distinct"`
	Versions int `json:"versions"`
	// Best is the best score so far (labelled start included; null while
	// none succeeded), InitialBest the labelled start's.
	Best        num `json:"best"`
	InitialBest num `json:"initial_best"`
	// Seconds is the journal's timed wall time; Left an estimate of the
	// time left, at the mean time per query so far (null without one).
	Seconds num `json:"seconds"`
	Left    num `json:"left"`
	// Updated is when the journal last changed (RFC 3339).
	Updated string `json:"updated"`
	// Torn, when set, says a torn last line was skipped.
	Torn string `json:"torn,omitempty"`

	repeats string
	// manual is where a manual run stands (nil for another run), or
	// manualErr why it could not be read.
	manual    *manual.Report
	manualErr error
	fields    []bo.Field
	curve     []float64
	state     *journalState
	dir       string
	readTime  time.Time
}

// readRun reads the run in dir (checked to lie inside the root) as id.
// A manual run whose start is being measured has no configuration and no
// journal yet: it is read as a run with no evaluation.
func readRun(id, dir string) (*Run, error) {
	setUp := isManualSetUp(dir)
	fields, err := bo.ReadConfigFields(dir)
	if err != nil && !(setUp && errors.Is(err, fs.ErrNotExist)) {
		return nil, err
	}
	r := &Run{ID: id, dir: dir, fields: fields}
	r.manual, r.manualErr = readManual(dir)
	get := func(name string) string {
		for _, f := range fields {
			if f.Name == name {
				return f.Value
			}
		}
		return ""
	}
	r.Task, r.Strategy, r.ELBO, r.Seed, r.repeats = get("task"), get("strategy"), get("elbo"), get("seed"), get("repeats")
	if v := get("budget"); v != "" {
		if r.Budget, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("%s: field budget %q: %w", filepath.Join(dir, bo.ConfigFile), v, err)
		}
	}
	if v := get("maximize"); v != "" {
		if r.Maximize, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("%s: field maximize %q: %w", filepath.Join(dir, bo.ConfigFile), v, err)
		}
	}
	if m := r.manual; m != nil && fields == nil { // the start is measured: what its set-up kept
		r.Task, r.Strategy, r.ELBO, r.Seed, r.Budget, r.Maximize = m.Task, m.Strategy, m.ELBO, m.Seed, m.Budget, m.Maximize
	}
	name, b, mod, err := readJournalFile(dir)
	switch {
	case setUp && errors.Is(err, fs.ErrNotExist):
		info, err := os.Stat(filepath.Join(dir, manual.StateFile))
		if err != nil {
			return nil, err
		}
		mod = info.ModTime()
	case err != nil:
		return nil, err
	}
	r.Updated = mod.UTC().Format(time.RFC3339)
	if r.state, err = parseJournal(name, b); err != nil {
		return nil, err
	}
	initial, err := readInitialBest(dir)
	if err != nil {
		return nil, err
	}
	r.summarise(initial)
	return r, nil
}

// summarise fills the run's counts, curve and estimates from its journal.
func (r *Run) summarise(initial float64) {
	st := r.state
	done := st.complete()
	q := bo.Queries{Points: make([]string, len(done)), Scores: make([]float64, len(done)),
		Known: make([]bool, len(done)), Failed: make([]bool, len(done))}
	for i, x := range done {
		q.Points[i], q.Scores[i], q.Known[i], q.Failed[i] = x.Object, x.Score, x.Known, x.Failure != ""
		if r.repeats == "authors" || (x.Valid && !x.Known) {
			r.Done++
		}
	}
	r.curve = bo.BestCurve(initial, q, r.Maximize)
	r.Queries, r.Pending, r.Distinct, r.Versions = len(done), st.pending(), len(r.curve)-1, len(st.versions)
	r.InitialBest, r.Best = num(initial), num(r.curve[len(r.curve)-1])
	r.Seconds, r.Left = num(st.seconds), num(math.NaN())
	if r.Done > 0 && r.Budget > 0 {
		r.Left = num(st.seconds / float64(r.Done) * float64(max(r.Budget-r.Done, 0)))
	}
	r.Torn = st.torn
}

// readJournalFile returns a run's journal text, its file name and when it
// last changed: journal.jsonl, else the gzipped copy of a committed run.
func readJournalFile(dir string) (string, []byte, time.Time, error) {
	path, b, err := bo.ReadJournalFile(dir)
	if err != nil {
		return "", nil, time.Time{}, fmt.Errorf("read journal %s: %w", path, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", nil, time.Time{}, fmt.Errorf("read journal: %w", err)
	}
	return filepath.Base(path), b, info.ModTime(), nil
}

// readInitialBest returns the labelled start's best from results.npz
// (NaN when the run has not written it yet or the whole start failed).
func readInitialBest(dir string) (float64, error) {
	path := filepath.Join(dir, bo.ResultsFile)
	arrays, err := numpy.ReadNPZ(path)
	if errors.Is(err, fs.ErrNotExist) {
		return math.NaN(), nil
	}
	if err != nil {
		return 0, err
	}
	for _, a := range arrays {
		if a.Name == "initial_best" {
			v, err := a.Float64s()
			if err != nil || len(v) != 1 {
				return 0, fmt.Errorf("%s: initial_best: %d values (%v), want 1", path, len(v), err)
			}
			return v[0], nil
		}
	}
	return math.NaN(), nil
}

// Best is one of a run's best evaluations.
type Best struct {
	// Query is the query's index, Object its key and Score its score;
	// Picture says whether /picture draws it.
	Query   int    `json:"query"`
	Object  string `json:"object"`
	Score   num    `json:"score"`
	Picture bool   `json:"picture"`
}

// best returns the run's n best distinct successful evaluations, best first.
func (r *Run) best(n int) []Best {
	seen := map[string]bool{}
	out := []Best{} // [], not null, before the first evaluation: the page iterates it
	for _, q := range r.state.complete() {
		if !q.Valid || q.Known || q.Failure != "" || seen[q.Object] {
			continue
		}
		seen[q.Object] = true
		out = append(out, Best{Query: q.Index, Object: q.Object, Score: num(q.Score), Picture: canDraw(r.Task)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if r.Maximize {
			return out[i].Score > out[j].Score
		}
		return out[i].Score < out[j].Score
	})
	return out[:min(n, len(out))]
}

// GPPoint is the GP fit of one query (on a round's first query).
type GPPoint struct {
	Query  int `json:"query"`
	LogLik num `json:"loglik"`
	LSMin  num `json:"ls_min"`
	LSMax  num `json:"ls_max"`
	Noise  num `json:"noise"`
	Points int `json:"points"`
}

// gpFits returns the journal's GP fits in query order.
func (r *Run) gpFits() []GPPoint {
	out := []GPPoint{}
	for i, q := range r.state.queries {
		if q.GP == nil {
			continue
		}
		g := q.GP
		out = append(out, GPPoint{Query: i, LogLik: num(g.LogLik), LSMin: num(g.LengthscaleMin), LSMax: num(g.LengthscaleMax),
			Noise: num(g.Noise), Points: g.Points})
	}
	return out
}

// TRPoint is the trust region's length at a round's start.
type TRPoint struct {
	Query  int `json:"query"`
	Length num `json:"length"`
}

// trustRegion returns the trust region's lengths in round order.
func (r *Run) trustRegion() []TRPoint {
	out := make([]TRPoint, 0, len(r.state.tr))
	for start, tr := range r.state.tr {
		out = append(out, TRPoint{Query: start, Length: num(tr.Length)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Query < out[j].Query })
	return out
}
