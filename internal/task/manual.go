package task

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/manual"
)

// ManualRequest is what a call on a run whose evaluations people make does
// (--objective manual): set the run up (Ask 0: optimize), or hand out
// objects to measure (ask).
type ManualRequest struct {
	// Ask is how many objects to hand out: those of the run proposed and
	// never handed out first (an ask killed before it wrote them), then new
	// proposals (at most the version's and the budget's room).
	Ask int
	// Out is the CSV file to write ("": W); for a task that draws its
	// objects (molecules) the pictures go beside it (Out without its
	// extension, .sdf and .png).
	Out string
	W   io.Writer
	// Result is set by the call: what it handed out.
	Result *ManualResult
}

// ManualResult is what a call on a manual run handed out.
type ManualResult struct {
	// Handed are the objects handed out, in id order.
	Handed []manual.Proposal
	// Files are the files written: the CSV, then the task's own (the
	// molecule task's SDF) and any pictures.
	Files []string
	// Waiting counts the pending objects handed out before, whose results
	// the run waits for.
	Waiting int
	// Done says the run has spent its budget and nothing is pending.
	Done bool
	// Start says the labelled start is being measured: the run proposes
	// once its results are all told.
	Start bool
	// Result is the loop's summary (nil while the start is measured).
	Result *bo.Result
}

// errSetUp stops the loop of optimize --objective manual once the run is
// set up: the first ask proposes.
var errSetUp = errors.New("the manual run is set up")

// IsManual reports whether env's --objective is manual (people make the
// evaluations: ask and tell).
func IsManual(env *Env) bool { return env.Opts.String(ObjectiveOption) == manual.Objective }

// manualObjective is a run's objective whose evaluations people make: a
// result told (manual.Store) is the evaluation's, any other evaluation is
// deferred (bo.ErrDeferred) and stays pending.
type manualObjective[O any] struct {
	base     Objective[O]
	text     func(O) (string, error)
	store    *manual.Store
	maximize bool
	failure  float64
	stoch    bool
	desc     map[string]string
}

// newManualObjective returns the manual objective over the task's objective
// base (its keys and parsing), with the run's store in dir.
func (d *Defined[O, E]) newManualObjective(env *Env, dir string, base Objective[O]) (*manualObjective[O], error) {
	req, err := externalRequest(env, 1)
	if err != nil {
		return nil, err
	}
	st, err := manual.Open(dir)
	if err != nil {
		return nil, err
	}
	m := &manualObjective[O]{base: base, store: st, maximize: base.Maximize(), failure: *req.FailureScore, stoch: req.Stochastic}
	if req.Direction != "" {
		m.maximize = req.Direction == "maximize"
	}
	m.text = func(o O) (string, error) { return d.objectText(env, dir, base, o) }
	m.desc = maps.Clone(base.Describe())
	m.desc["objective"] = manual.Objective
	m.desc["objective-maximize"] = fmt.Sprint(m.maximize)
	m.desc["objective-stochastic"] = fmt.Sprint(req.Stochastic)
	m.desc["objective-failure-score"] = strconv.FormatFloat(m.failure, 'g', -1, 64)
	return m, nil
}

// Score returns the result told for a start object (the draw's, by key).
func (m *manualObjective[O]) Score(obj O) (float64, error) {
	id, ok := m.store.StartID(m.base.Key(obj))
	if !ok {
		return m.failure, fmt.Errorf("%s is not an object of the run's start", m.base.Key(obj))
	}
	return m.result(id)
}

// ScoreTagged implements bo.TaggedScorer: the result told for the
// evaluation's id.
func (m *manualObjective[O]) ScoreTagged(tag string, obj O) (float64, error) {
	id, ok := m.store.IDOf(tag)
	if !ok {
		// A query proposed in this call: handed out at its end.
		return m.failure, fmt.Errorf("evaluation %s awaits its result: %w", tag, bo.ErrDeferred)
	}
	return m.result(id)
}

// result returns id's told result, or bo.ErrDeferred while none is told.
func (m *manualObjective[O]) result(id int) (float64, error) {
	s, failure, ok := m.store.Result(id)
	switch {
	case !ok:
		return m.failure, fmt.Errorf("id %d awaits its result: %w", id, bo.ErrDeferred)
	case failure != nil:
		return m.failure, failure
	}
	return s, nil
}

// recordStart keeps the keys of the drawn start (ids 1..N) in the store;
// a run that has them must draw the same.
func (m *manualObjective[O]) recordStart(keys []string) error {
	have := m.store.State.Start
	switch {
	case len(have) == 0:
		m.store.State.Start = slices.Clone(keys)
		return m.store.SaveState()
	case !slices.Equal(have, keys):
		return fmt.Errorf("--%s: the run's %s holds another start than this draw (another seed or data set?)", InitialOption, manual.StateFile)
	}
	return nil
}

// FailureScore, Deterministic, Maximize, Key, Parse and Describe implement
// Objective.
func (m *manualObjective[O]) FailureScore() float64       { return m.failure }
func (m *manualObjective[O]) Deterministic() bool         { return !m.stoch }
func (m *manualObjective[O]) Maximize() bool              { return m.maximize }
func (m *manualObjective[O]) Key(obj O) string            { return m.base.Key(obj) }
func (m *manualObjective[O]) Parse(key string) (O, error) { return m.base.Parse(key) }
func (m *manualObjective[O]) Describe() map[string]string { return m.desc }

var _ bo.TaggedScorer[string] = (*manualObjective[string])(nil)

// checkManual refuses the settings a manual run cannot have: the authors'
// loop (which evaluates at once) and prior samples (people measure the
// proposals only).
func checkManual(cfg bo.Config) error {
	switch {
	case cfg.Repeats != bo.RepeatsSkip:
		return fmt.Errorf("--%s %s: a manual run proposes with --repeats %s (its queries wait for their results)",
			ObjectiveOption, manual.Objective, bo.RepeatsSkip)
	case cfg.SamplesPerModel > 0:
		return fmt.Errorf("--%s %s: --samples-per-model must be 0 (people measure the proposals only)", ObjectiveOption, manual.Objective)
	}
	return nil
}

// manualOptions sets a manual call's loop options: set-up only (the loop
// stops before its first version), or at most the proposals ask still
// needs after handing out those never handed out.
func manualOptions(opts bo.Options, req *ManualRequest, unhanded int) bo.Options {
	if req.Ask == 0 {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errSetUp)
		opts.Context = ctx
		return opts
	}
	opts.Proposals = req.Ask - unhanded
	return opts
}

// handOut hands out the proposals never handed out, at most req.Ask, in id
// order: written as CSV (and the task's pictures), then recorded as
// handed out. pending are the ids waiting for results with their keys.
func (d *Defined[O, E]) handOut(env *Env, m *manualObjective[O], req *ManualRequest, pending []manual.Proposal) (*ManualResult, error) {
	res := &ManualResult{}
	var ids []int
	for _, p := range pending {
		if _, ok := m.store.State.Handed[p.ID]; ok {
			res.Waiting++
			continue
		}
		if len(res.Handed) == req.Ask {
			continue
		}
		o, err := m.Parse(p.Key)
		if err != nil {
			return nil, fmt.Errorf("id %d: %w", p.ID, err)
		}
		if p.Object, err = m.text(o); err != nil {
			return nil, fmt.Errorf("id %d: %w", p.ID, err)
		}
		res.Handed = append(res.Handed, p)
		ids = append(ids, p.ID)
	}
	if len(res.Handed) == 0 {
		return res, nil
	}
	if req.Out == "" {
		if err := manual.WriteAsk(req.W, res.Handed); err != nil {
			return nil, err
		}
	} else {
		// The task's file first: an object it cannot write (RDKit cannot lay
		// a molecule out) fails the ask before the CSV is there.
		var own []string
		if d.s.Handout != nil {
			path, err := d.s.Handout(trimExt(req.Out), res.Handed)
			if err != nil {
				return nil, err
			}
			own = append(own, path)
		}
		if err := manual.WriteAtomic(req.Out, func(w io.Writer) error { return manual.WriteAsk(w, res.Handed) }); err != nil {
			return nil, err
		}
		res.Files = append(append(res.Files, req.Out), own...)
		if d.s.Plots != nil {
			path, err := d.handoutPicture(env, m, trimExt(req.Out)+".png", res.Handed)
			if err != nil {
				return nil, err
			}
			res.Files = append(res.Files, path)
		}
	}
	if err := m.store.Hand(ids, float64(time.Now().UnixNano())/1e9); err != nil {
		return nil, err
	}
	return res, nil
}

// handoutPicture draws the handed-out objects as the task draws a run's
// best (Spec.Plots: a grid of molecules or designs), each titled with its
// predicted score and its id (Scored.Title), into path.
func (d *Defined[O, E]) handoutPicture(env *Env, m *manualObjective[O], path string, handed []manual.Proposal) (string, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".handout-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	scored := make([]Scored[O], len(handed))
	for i, p := range handed {
		o, err := m.Parse(p.Key)
		if err != nil {
			return "", fmt.Errorf("id %d: %w", p.ID, err)
		}
		scored[i] = Scored[O]{Object: o, Score: math.NaN(), ID: p.ID}
		if p.Mean != nil {
			scored[i].Score = *p.Mean
		}
	}
	quiet := *env
	quiet.Stdout = io.Discard
	if err := d.s.Plots(&quiet, tmp, scored); err != nil {
		return "", err
	}
	pngs, err := filepath.Glob(filepath.Join(tmp, "*.png"))
	if err != nil || len(pngs) != 1 {
		return "", fmt.Errorf("the task's picture of the objects handed out: %d files (%v), want one", len(pngs), err)
	}
	return path, os.Rename(pngs[0], path)
}

// trimExt returns path without its extension.
func trimExt(path string) string {
	for i := len(path) - 1; i >= 0 && path[i] != '/'; i-- {
		if path[i] == '.' {
			return path[:i]
		}
	}
	return path
}

// startPending returns the start's objects without a told result.
func startPending[O any](m *manualObjective[O]) []manual.Proposal {
	var ps []manual.Proposal
	for i, k := range m.store.State.Start {
		if _, _, ok := m.store.Result(i + 1); !ok {
			ps = append(ps, manual.Proposal{ID: i + 1, Key: k})
		}
	}
	return ps
}

// queryPending returns the run's journaled queries without their
// evaluation, with the GP's prediction at each.
func queryPending[O any](m *manualObjective[O], qs []bo.Query) []manual.Proposal {
	var ps []manual.Proposal
	for _, q := range qs {
		id, _ := m.store.QueryID(q.Index) // pending: bound
		p := manual.Proposal{ID: id, Key: q.Object, Mean: q.Mean, SD: q.SD}
		if q.Mean != nil {
			acq := q.Acq
			p.Acq = &acq
		}
		ps = append(ps, p)
	}
	return ps
}

// bindJournal numbers the run's journaled queries (manual.Store.Bind) and
// counts its pending queries never handed out.
func bindJournal[O any](m *manualObjective[O], dir string) (unhanded int, err error) {
	v, err := bo.ReadJournalView(dir)
	if err != nil {
		return 0, err
	}
	m.store.Bind(v)
	for i := range v.Pending {
		id, _ := m.store.QueryID(i)
		if _, ok := m.store.State.Handed[id]; !ok {
			unhanded++
		}
	}
	return unhanded, nil
}

// writeSetUpFlags keeps the flags of optimize --objective manual before
// anything else, so that ask finds the run's settings even while its start
// is measured (bo.Run keeps them again once it runs).
func writeSetUpFlags(opts bo.Options) error {
	if opts.Resume || opts.Flags == nil {
		return nil
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return err
	}
	return bo.WriteFlags(opts.Dir, opts.Flags)
}

// keepSetUpDirection adds the run's direction to the flags a manual set-up
// keeps when neither --maximize nor --minimize was given: the task's own
// direction is its objective's, known only once the objective is made, and
// status and the dashboard read it there until the first ask writes
// config.json.
func keepSetUpDirection(opts bo.Options, maximize bool) error {
	if opts.Resume || opts.Flags == nil {
		return nil
	}
	for _, name := range []string{"maximize", "minimize"} {
		if _, given := opts.Flags[name]; given {
			return nil
		}
	}
	opts.Flags["maximize"] = strconv.FormatBool(maximize)
	return bo.WriteFlags(opts.Dir, opts.Flags)
}

// manualRun is the loop's part of a call on a manual run: the set-up
// (the loop stops before its first version), or an ask: the results told
// since the last call are journaled (retraining when a version's r are
// in), new queries proposed until req.Manual.Ask objects are handed out
// with those never handed out, and the proposals handed out.
func (d *Defined[O, E]) manualRun(env *Env, mo *manualObjective[O], req OptimizeRequest, cfg bo.Config, m *Model[O, E],
	data bo.Data[O]) (*bo.Result, error) {
	mr := req.Manual
	unhanded, err := bindJournal(mo, req.Options.Dir)
	if err != nil {
		return nil, err
	}
	var res *bo.Result
	if mr.Ask == 0 || unhanded < mr.Ask {
		res, err = bo.Run[O](cfg, mo, m, data, manualOptions(req.Options, mr, unhanded))
		if mr.Ask == 0 && errors.Is(err, errSetUp) {
			mr.Result = &ManualResult{Result: res}
			return res, nil
		}
		if err != nil {
			return res, err
		}
	}
	v, err := bo.ReadJournalView(req.Options.Dir)
	if err != nil {
		return res, err
	}
	mo.store.Bind(v)
	var pending []bo.Query
	for i, q := range v.Queries {
		if v.Pending[i] {
			pending = append(pending, q)
		}
	}
	if mr.Result, err = d.handOut(env, mo, mr, queryPending(mo, pending)); err != nil {
		return res, err
	}
	mr.Result.Result = res
	mr.Result.Done = len(pending) == 0 && res != nil && res.Evaluated >= cfg.Budget
	return res, nil
}
