package bo

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// openRound is a journaled round whose evaluations are not all in.
type openRound struct {
	start, end int // its queries' indices: [start, end)
	pending    map[int]bool
	objs       map[int]any // the pending queries' objects, when at hand (else parsed from their keys)
}

// evalResult is a finished evaluation, or the panic of the objective;
// halt is set when the task's Score returned a Halt.
type evalResult struct {
	e        Eval
	crash    any
	halt     *Halt
	deferred bool // the task deferred it (ErrDeferred): it stays pending
}

// surEvent is a GP fit of a round (fit; kept when the round kept the GP
// of an earlier fit, Round.GPKept) or the addition of a completed round's
// points (add), in the order the journal implies them.
type surEvent struct {
	fit, kept bool
	start     int
}

// roundsLoop is the loop of RepeatsSkip: rounds of up to q novel proposals
// (round.go), journaled before their evaluations, which run concurrently,
// and after each of them; synchronous or asynchronous (Config.Async).
type roundsLoop[O any] struct{ r *runner[O] }

// roundState is what the rounds in flight hold (RepeatsSkip).
type roundState struct {
	// open are the journaled rounds whose evaluations are not all in, by
	// the index of their first query; pending counts those evaluations.
	open    map[int]*openRound
	pending int
	// running counts the evaluations started and not yet applied; results
	// receives them, and slots bounds how many run at once.
	running int
	results chan evalResult
	slots   chan struct{}
	// trustRegion is the trust region (Config.TrustRegion).
	trustRegion TrustRegion
	// deferred counts the pending evaluations the task deferred in this
	// process (ErrDeferred); proposed the queries proposed in it
	// (Options.Proposals).
	deferred, proposed int
}

// starts returns the starts of the open rounds in order.
func (s *roundState) starts() []int {
	starts := make([]int, 0, len(s.open))
	for i := range s.open {
		starts = append(starts, i)
	}
	slices.Sort(starts)
	return starts
}

// workers is how many evaluations run at once (Config.Workers).
func (p *roundsLoop[O]) workers() int { return p.r.cfg.Workers() }

// room is how many proposals a round may make now: q, fewer near the
// end of a version or of the budget, and under the asynchronous policy no
// more than the free workers.
func (p *roundsLoop[O]) room() int {
	r := p.r
	n := min(r.cfg.Q, r.cfg.RetrainEvery-r.version.spent-r.round.pending, r.cfg.Budget-r.evaluated-r.round.pending)
	if r.cfg.Async {
		n = min(n, p.workers()-r.round.running)
	}
	if r.opts.Proposals > 0 {
		n = min(n, r.opts.Proposals-r.round.proposed)
	}
	return n
}

// loop runs the rounds of RepeatsSkip until the budget is spent or no
// novel object is within reach. Round-synchronous (the default): a round is
// proposed when the previous one's evaluations are all in. Asynchronous
// (Async): a round of as many proposals as there are free workers (at most
// q) is made as soon as a worker is free, the GP conditioned on the
// evaluations still running as fantasies. A new model version waits until
// no evaluation is running.
func (p *roundsLoop[O]) loop() error {
	r := p.r
	r.round.results = make(chan evalResult, r.cfg.Budget+p.workers())
	r.round.slots = make(chan struct{}, p.workers())
	for _, start := range r.round.starts() { // resumed inside rounds
		p.launch(r.round.open[start])
	}
	for {
		if err := r.stopping(); err != nil {
			if r.round.running == 0 {
				return err
			}
			if err := p.awaitOne(); err != nil {
				return err
			}
			if err := p.roundDone(); err != nil {
				return err
			}
			continue
		}
		versionOpen := r.version.current >= 0 && !r.version.stopped
		canPropose := r.exhausted == "" && versionOpen && p.room() > 0 && (r.cfg.Async || r.round.running == 0)
		switch {
		case canPropose:
			stop, err := p.round(p.room())
			if err != nil {
				return err
			}
			if stop != nil {
				if err := r.stopVersion(stop); err != nil {
					return err
				}
			}
		case r.round.running > 0:
			if err := p.awaitOne(); err != nil {
				return err
			}
			if err := p.roundDone(); err != nil {
				return err
			}
		case r.round.deferred > 0 || (r.opts.Proposals > 0 && r.round.proposed >= r.opts.Proposals):
			// Nothing more without the deferred results, or this call's
			// proposals are made: they stay pending.
			return nil
		case r.exhausted == "" && r.evaluated < r.cfg.Budget:
			if err := r.newVersion(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// replayFits rebuilds the surrogate of the current version from its
// journaled rounds: each round's GP fit on the points of the rounds
// completed before it, so that the warm-start chain is as it was.
func (p *roundsLoop[O]) replayFits(refit bool) {
	r := p.r
	for _, ev := range r.version.events {
		if ev.fit {
			r.replayFit(ev.start, ev.kept, refit)
			continue
		}
		for i := ev.start; i < len(r.journal.queries) && r.journal.queries[i].Round == ev.start; i++ {
			r.addPoint(r.journal.queries[i])
		}
	}
}

// counts reports whether q spent budget: an evaluated object (not a known
// one, not an invalid decode, which the objective never sees).
func (p *roundsLoop[O]) counts(q Query) bool { return q.Valid && !q.Known }

// lastFit returns the first query of the current version's last round that
// fitted the GP; rounds that kept the GP of an earlier fit (GPKept) made
// none.
func (p *roundsLoop[O]) lastFit() (int, bool) {
	ev := p.r.version.events
	for i := len(ev) - 1; i >= 0; i-- {
		if ev[i].fit && !ev[i].kept {
			return ev[i].start, true
		}
	}
	return 0, false
}

// replay applies a journaled round or evaluation; every query of this
// policy belongs to a round.
func (p *roundsLoop[O]) replay(rec record) error {
	switch {
	case rec.Round != nil:
		return p.applyRound(*rec.Round, map[int]any{})
	case rec.Eval != nil:
		return p.applyEval(*rec.Eval)
	case rec.Query != nil:
		return fmt.Errorf("journal has query %d outside a round, a run with --repeats skip has rounds", rec.Query.Index)
	}
	return nil
}

// applyRound adds a journaled round's queries to the state; it stays open
// until every pending query has its evaluation.
func (p *roundsLoop[O]) applyRound(rec Round, objs map[int]any) error {
	r := p.r
	switch {
	case rec.Start != len(r.journal.queries) || rec.Version != r.version.current || r.version.stopped:
		return fmt.Errorf("round %d of version %d after %d queries in version %d",
			rec.Start, rec.Version, len(r.journal.queries), r.version.current)
	}
	for _, q := range rec.Queries {
		if len(q.Z) != r.vae.LatentDim() {
			return fmt.Errorf("query %d has a %d-dimensional latent point, the model has %d", q.Index, len(q.Z), r.vae.LatentDim())
		}
	}
	r.journal.queries = append(r.journal.queries, rec.Queries...)
	o := &openRound{start: rec.Start, end: len(r.journal.queries), pending: map[int]bool{}, objs: objs}
	for _, i := range rec.Pending {
		o.pending[i] = true
	}
	r.round.open[rec.Start] = o
	r.round.pending += len(o.pending)
	r.version.events = append(r.version.events, surEvent{fit: true, kept: rec.GPKept, start: rec.Start})
	if rec.TR != nil {
		r.round.trustRegion = *rec.TR
	}
	return nil
}

// applyEval records a pending query's evaluation; the last one completes
// the round.
func (p *roundsLoop[O]) applyEval(e Eval) error {
	r := p.r
	var o *openRound
	for _, c := range r.round.open {
		if c.pending[e.Index] {
			o = c
		}
	}
	if o == nil {
		return fmt.Errorf("evaluation of query %d, which is not pending", e.Index)
	}
	q := &r.journal.queries[e.Index]
	q.Score, q.Failure = e.Score, e.Failure
	q.Timing.Eval = e.Seconds
	q.Timing.Total += e.Seconds
	delete(o.pending, e.Index)
	r.round.pending--
	if len(o.pending) == 0 {
		return p.completeRound(o)
	}
	return nil
}

// completeRound applies a round whose evaluations are all in, in index
// order (so that the data's order does not depend on which evaluation
// finished first): the evaluated objects join the data, every query's
// incumbent is set, the surrogate gets the round's points (when it holds
// the version's) and the trust region is updated.
func (p *roundsLoop[O]) completeRound(o *openRound) error {
	r := p.r
	delete(r.round.open, o.start)
	r.version.events = append(r.version.events, surEvent{start: o.start})
	before := r.data.util[argmax(r.data.util)]
	gained := math.Inf(-1)
	for i := o.start; i < o.end; i++ {
		q := &r.journal.queries[i]
		if p.counts(*q) {
			obj, err := p.roundObject(o, *q)
			if err != nil {
				return err
			}
			r.appendData(obj, q.Score, q.Failure != "")
			r.evaluated++
			r.version.spent++
			gained = math.Max(gained, r.sign*q.Score)
		}
		q.Incumbent = r.best().score
		if r.version.surrogateReady {
			r.addPoint(*q)
		}
	}
	if r.cfg.TrustRegion {
		r.round.trustRegion = r.round.trustRegion.update(r.cfg.TR, improves(gained, before), r.vae.LatentDim(), r.cfg.Q)
	}
	return nil
}

// roundObject returns the object of an evaluated query of round o.
func (p *roundsLoop[O]) roundObject(o *openRound, q Query) (O, error) {
	r := p.r
	if v, ok := o.objs[q.Index]; ok {
		return v.(O), nil
	}
	obj, err := r.task.Parse(q.Object)
	if err != nil {
		return obj, fmt.Errorf("query %d: object %q: %w", q.Index, q.Object, err)
	}
	return obj, nil
}

// launch starts the evaluations of round o's pending queries, one
// goroutine each, at most workers() at a time (Task.Score is safe for
// concurrent use); awaitOne receives them.
func (p *roundsLoop[O]) launch(o *openRound) {
	r := p.r
	idx := make([]int, 0, len(o.pending))
	for i := range o.pending {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		r.round.running++
		obj, err := p.roundObject(o, r.journal.queries[i])
		if err != nil {
			r.round.results <- evalResult{e: Eval{Index: i, Score: r.task.FailureScore(), Failure: err.Error(), At: unixNow()}}
			continue
		}
		go func() {
			r.round.slots <- struct{}{}
			defer func() { <-r.round.slots }()
			defer func() {
				if p := recover(); p != nil {
					r.round.results <- evalResult{e: Eval{Index: i}, crash: p}
				}
			}()
			t := time.Now()
			s, err := r.score(QueryTag(i), obj)
			var h *Halt
			if errors.Is(err, ErrDeferred) && !errors.As(err, &h) {
				r.round.results <- evalResult{e: Eval{Index: i}, deferred: true}
				return
			}
			s, failure, h := r.outcome(s, err)
			r.round.results <- evalResult{e: Eval{Index: i, Score: s, Failure: failure, Seconds: time.Since(t).Seconds(), At: unixNow()}, halt: h}
		}()
	}
}

// awaitOne waits for a running evaluation, journals it and applies it.
// A Halt stops the run (r.halt); an evaluation that was not made (a Halt
// without a failure) is not journaled and stays pending for a resume.
func (p *roundsLoop[O]) awaitOne() error {
	r := p.r
	res := <-r.round.results
	r.round.running--
	if res.crash != nil {
		// As a sequential loop would: the run stops where it is, the
		// evaluations journaled so far are kept.
		panic(res.crash)
	}
	if res.deferred {
		r.round.deferred++
		return nil
	}
	if h := res.halt; h != nil {
		if r.halt == nil {
			r.halt = h.Err
		}
		if h.Failure == "" {
			return nil
		}
	}
	e := res.e
	if err := r.journal.file.append(record{Eval: &e}); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	if err := p.applyEval(e); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	return nil
}

// roundDone rewrites results.npz after a round and reports its queries.
func (p *roundsLoop[O]) roundDone() error {
	r := p.r
	if err := r.writeResults(); err != nil {
		return err
	}
	done := len(r.complete())
	for i := r.journal.reported; i < done; i++ {
		r.progress(StageQuery, &r.journal.queries[i])
	}
	r.journal.reported = done
	return nil
}
