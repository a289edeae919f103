package bo

import (
	"fmt"
	"time"
)

// authorsLoop is the authors' loop (RepeatsAuthors): one query at a time,
// proposed, decoded through the novelty check (query.go), evaluated and
// journaled, a new model version every RetrainEvery queries.
type authorsLoop[O any] struct{ r *runner[O] }

// loop runs versions and queries until the budget is spent.
func (p *authorsLoop[O]) loop() error {
	r := p.r
	for r.evaluated < r.cfg.Budget {
		if err := r.stopping(); err != nil {
			return err
		}
		if r.version.current < 0 || r.version.spent >= r.cfg.RetrainEvery || r.version.stopped {
			if err := r.newVersion(); err != nil {
				return err
			}
		}
		if err := r.readyVersion(); err != nil {
			return err
		}
		q, stop, err := p.query()
		if err != nil {
			return fmt.Errorf("bo: query %d: %w", len(r.journal.queries), err)
		}
		if stop != nil {
			if err := r.stopVersion(stop); err != nil {
				return err
			}
			continue
		}
		if err := p.commit(q); err != nil {
			return err
		}
	}
	return nil
}

// replay applies a journaled query; the authors' loop journals no rounds.
func (p *authorsLoop[O]) replay(rec record) error {
	r := p.r
	switch {
	case rec.Round != nil:
		return fmt.Errorf("journal has round %d, a run with --repeats %s has none", rec.Round.Start, r.cfg.Repeats)
	case rec.Eval != nil:
		return fmt.Errorf("evaluation of query %d, which is not pending", rec.Eval.Index)
	case rec.Query == nil:
		return nil
	}
	q := *rec.Query
	if q.Index != len(r.journal.queries) || q.Version != r.version.current || r.version.stopped {
		return fmt.Errorf("journal has query %d of version %d after %d queries in version %d",
			q.Index, q.Version, len(r.journal.queries), r.version.current)
	}
	if len(q.Z) != r.vae.LatentDim() {
		return fmt.Errorf("query %d has a %d-dimensional latent point, the model has %d", q.Index, len(q.Z), r.vae.LatentDim())
	}
	return p.addQuery(q)
}

// counts reports that q spent budget: every query of the authors' loop
// does, a duplicate's evaluation included.
func (p *authorsLoop[O]) counts(Query) bool { return true }

// lastFit returns the index of the current version's last query that fitted
// the GP; queries that kept the GP of an earlier fit (GPKept) made none.
func (p *authorsLoop[O]) lastFit() (int, bool) {
	r := p.r
	for i := len(r.journal.queries) - 1; i >= r.version.first; i-- {
		if !r.journal.queries[i].GPKept {
			return r.journal.queries[i].Index, true
		}
	}
	return 0, false
}

// replayFits repeats (refit) or marks the GP fits of the version's
// journaled queries, each query's point joining after its fit.
func (p *authorsLoop[O]) replayFits(refit bool) {
	r := p.r
	for _, q := range r.journal.queries[r.version.first:] {
		r.replayFit(q.Index, q.GPKept, refit)
		r.addPoint(q)
	}
}

// addQuery appends an evaluated query to the state (not the journal).
func (p *authorsLoop[O]) addQuery(q Query) error {
	r := p.r
	r.journal.queries = append(r.journal.queries, q)
	r.version.spent++
	r.evaluated++
	if q.Valid {
		obj, err := r.task.Parse(q.Object)
		if err != nil {
			return fmt.Errorf("query %d: object %q: %w", q.Index, q.Object, err)
		}
		r.appendData(obj, q.Score, q.Failure != "")
	}
	return nil
}

// commit journals an evaluated query, then adds it to the state and
// rewrites results.npz.
func (p *authorsLoop[O]) commit(q Query) error {
	r := p.r
	if err := r.journal.file.append(record{Query: &q}); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	if !q.GPKept {
		r.saveWarm(q.Index)
	}
	if err := p.addQuery(q); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.addPoint(q)
	if err := r.writeResults(); err != nil {
		return err
	}
	r.progress(StageQuery, &r.journal.queries[len(r.journal.queries)-1])
	return nil
}

// query proposes, decodes and evaluates the next query. It returns a Stop
// instead when the maximal EI is below tau (never on a version's first
// query, so that every version makes progress).
func (p *authorsLoop[O]) query() (Query, *Stop, error) {
	r := p.r
	start := time.Now()
	q := Query{Index: len(r.journal.queries), Version: r.version.current}
	r.version.chargeEncoding(&q.Timing)
	var obj O
	var valid bool
	var err error
	if r.cfg.Strategy == StrategyRandom {
		obj, valid, err = p.drawRandom(&q)
	} else {
		var stop *Stop
		obj, valid, stop, err = p.searchNovel(&q)
		if stop != nil {
			return q, stop, nil
		}
	}
	if err != nil {
		return q, nil, err
	}
	t := time.Now()
	var h *Halt
	q.Score, q.Failure, h = r.evaluate(QueryTag(q.Index), obj, valid)
	if h != nil {
		r.halt = h.Err
		if h.Failure == "" {
			return q, nil, h.Err // not evaluated: nothing to journal
		}
	}
	q.Timing.Eval = time.Since(t).Seconds()
	q.Incumbent = r.best().score
	if q.Valid && r.sign*q.Score > r.sign*q.Incumbent {
		q.Incumbent = q.Score
	}
	q.Timing.Total = time.Since(start).Seconds()
	return q, nil, nil
}
