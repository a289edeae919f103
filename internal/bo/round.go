package bo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// Fallbacks of Query.Fallback.
const (
	// FallbackBall is a batch of points drawn uniformly in a ball around
	// the last proposal (inside the trust region, when there is one),
	// widened until a point decodes to a novel object; among the novel
	// decodes of a batch the one with the best acquisition value is kept.
	FallbackBall = "ball"
	// FallbackBallOutsideTR is the ball fallback continued over the whole
	// latent box after the trust region held no novel object.
	FallbackBallOutsideTR = "ball-outside-tr"
)

// fallbackBatch is how many points the ball fallback decodes per radius.
const fallbackBatch = 20

// novelDrawFactor multiplies RandomDraws for the draws of random search and
// prior sampling under RepeatsSkip, which never settle for a known object.
const novelDrawFactor = 10

// openRound is a journaled round whose evaluations are not all in.
type openRound struct {
	start, end int // its queries' indices: [start, end)
	pending    map[int]bool
	objs       map[int]any // the pending queries' objects, when at hand (else parsed from their keys)
}

// evalResult is a finished evaluation, or the panic of the objective;
// halt is set when the task's Score returned a Halt.
type evalResult struct {
	e     Eval
	crash any
	halt  *Halt
}

// surEvent is a GP fit of a round (fit; kept when the round kept the GP
// of an earlier fit, Round.GPKept) or the addition of a completed round's
// points (add), in the order the journal implies them.
type surEvent struct {
	fit, kept bool
	start     int
}

// workers is how many evaluations run at once: Evaluators, else Q.
func (r *runner[O]) workers() int {
	if r.cfg.Evaluators > 0 {
		return r.cfg.Evaluators
	}
	return r.cfg.Q
}

// roundRoom is how many proposals a round may make now: q, fewer near the
// end of a version or of the budget, and under the asynchronous policy no
// more than the free workers.
func (r *runner[O]) roundRoom() int {
	n := min(r.cfg.Q, r.cfg.RetrainEvery-r.inVer-r.pending, r.cfg.Budget-r.evaluated-r.pending)
	if r.cfg.Async {
		n = min(n, r.workers()-r.running)
	}
	return n
}

// loopRounds runs the rounds of RepeatsSkip until the budget is spent or no
// novel object is within reach. Round-synchronous (the default): a round is
// proposed when the previous one's evaluations are all in. Asynchronous
// (Async): a round of as many proposals as there are free workers (at most
// q) is made as soon as a worker is free, the GP conditioned on the
// evaluations still running as fantasies. A new model version waits until
// no evaluation is running.
func (r *runner[O]) loopRounds() error {
	r.results = make(chan evalResult, r.cfg.Budget+r.workers())
	r.slots = make(chan struct{}, r.workers())
	for _, start := range r.openStarts() { // resumed inside rounds
		r.launch(r.openRounds[start])
	}
	for {
		if err := r.stopping(); err != nil {
			if r.running == 0 {
				return err
			}
			if err := r.awaitOne(); err != nil {
				return err
			}
			if err := r.roundDone(); err != nil {
				return err
			}
			continue
		}
		versionOpen := r.version >= 0 && !r.stopped
		canPropose := r.exhausted == "" && versionOpen && r.roundRoom() > 0 && (r.cfg.Async || r.running == 0)
		switch {
		case canPropose:
			stop, err := r.round(r.roundRoom())
			if err != nil {
				return err
			}
			if stop != nil {
				if err := r.stopVersion(stop); err != nil {
					return err
				}
			}
		case r.running > 0:
			if err := r.awaitOne(); err != nil {
				return err
			}
			if err := r.roundDone(); err != nil {
				return err
			}
		case r.exhausted == "" && r.evaluated < r.cfg.Budget:
			if err := r.newVersion(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// openStarts returns the starts of the open rounds in order.
func (r *runner[O]) openStarts() []int {
	starts := make([]int, 0, len(r.openRounds))
	for s := range r.openRounds {
		starts = append(starts, s)
	}
	slices.Sort(starts)
	return starts
}

// readyVersion loads the current version's weights and prepares its
// surrogate when they are not in place (after a resume or a retraining).
func (r *runner[O]) readyVersion() error {
	if !r.loaded {
		if err := r.loadVersion(r.version); err != nil {
			return err
		}
	}
	if r.cfg.Strategy != StrategyPrior && !r.surReady {
		return r.prepareSurrogate()
	}
	return nil
}

// replayEvents rebuilds the surrogate of the current version from its
// journaled rounds: each round's GP fit on the points of the rounds
// completed before it, so that the warm-start chain is as it was (without
// refit, only where the fits were: the warm start of the last is restored).
func (r *runner[O]) replayEvents(refit bool) {
	for _, ev := range r.events {
		if ev.fit {
			switch {
			case ev.kept: // its points join the kept GP at the next step
			case refit:
				r.sur.refit(deriveSeed(r.cfg.Seed, streamGPFit, uint64(ev.start)))
				r.replayedFits++
			default:
				r.sur.markFit()
			}
			continue
		}
		for i := ev.start; i < len(r.queries) && r.queries[i].Round == ev.start; i++ {
			r.addPoint(r.queries[i])
		}
	}
	if !refit {
		r.sur.restoreKept()
	}
}

// counts reports whether q spent budget: every query of the authors' loop;
// under RepeatsSkip an evaluated object (not a known one, not an invalid
// decode, which the objective never sees).
func (r *runner[O]) counts(q Query) bool {
	return r.cfg.Repeats == RepeatsAuthors || (q.Valid && !q.Known)
}

// isKnown reports whether the objective's score of key is known, so that it
// must not be evaluated again: the objective is deterministic and the object
// is in the data or was evaluated in the run.
func (r *runner[O]) isKnown(key string) bool {
	return r.task.Deterministic() && r.seenKey(key)
}

// roundBuilder chooses the proposals of one round.
type roundBuilder[O any] struct {
	r       *runner[O]
	start   int // index of the round's first query
	n       int // proposals wanted
	attempt int // acquisition steps (and fallbacks) so far: seeds each

	queries []Query
	pending []int
	objs    map[int]any
	picked  map[string]bool

	fit          fitResult
	gpRec        *GPFit
	gpKept       bool      // the round kept the GP of an earlier fit (Round.GPKept)
	bel          *believer // nil when the GP fit failed
	lower, upper []float64 // the search box, in the unit box
	tr           *TrustRegion
	exhausted    string
}

// round makes one round under RepeatsSkip: it chooses up to q novel
// objects (see the package doc), journals them, evaluates them
// concurrently and applies the results. It returns a Stop instead when the
// maximal EI is below tau; when no novel object can be found it sets
// r.exhausted (after evaluating the proposals it did find).
func (r *runner[O]) round(n int) (*Stop, error) {
	if err := r.readyVersion(); err != nil {
		return nil, err
	}
	b := &roundBuilder[O]{r: r, start: len(r.queries), n: n, objs: map[int]any{}, picked: map[string]bool{}}
	// Objects still being evaluated are neither proposed again nor
	// forgotten: the GP sees them as fantasies (proposeBO).
	for _, o := range r.openRounds {
		for i := range o.pending {
			b.picked[r.queries[i].Object] = true
		}
	}
	var err error
	if r.cfg.Strategy == StrategyBO {
		var stop *Stop
		if stop, err = b.proposeBO(); stop != nil {
			return stop, nil
		}
	} else {
		err = b.draw()
	}
	if err != nil {
		return nil, err
	}
	if b.exhausted != "" {
		r.exhausted = b.exhausted
		r.logf("query %d: %s", b.start+len(b.queries)+1, b.exhausted)
	}
	if len(b.pending) == 0 {
		return nil, nil
	}
	rec := Round{Start: b.start, Version: r.version, Queries: b.queries, Pending: b.pending, TR: b.tr, GPKept: b.gpKept}
	if err := r.journal.append(record{Round: &rec}); err != nil {
		return nil, fmt.Errorf("bo: %w", err)
	}
	if !rec.GPKept {
		r.saveWarm(rec.Start)
	}
	if err := r.applyRound(rec, b.objs); err != nil {
		return nil, fmt.Errorf("bo: %w", err)
	}
	r.launch(r.openRounds[rec.Start])
	return nil, nil
}

// newQuery returns the next query of the round, before its proposal.
func (b *roundBuilder[O]) newQuery(tries int) Query {
	return Query{Index: b.start + len(b.queries), Version: b.r.version, Round: b.start, Tries: tries}
}

// proposeBO chooses the round's proposals by maximising the acquisition of
// the GP conditioned on the round's points so far.
func (b *roundBuilder[O]) proposeBO() (*Stop, error) {
	r := b.r
	f, fitted := r.sur.next(deriveSeed(r.cfg.Seed, streamGPFit, uint64(b.start)))
	if f.model == nil && f.nz.Lower == nil {
		return nil, fmt.Errorf("bo: query %d: GP data: %w", b.start+1, f.err)
	}
	b.fit, b.gpKept = f, !fitted
	if fitted {
		b.gpRec = gpFitRecord(f)
		r.noteClamped(b.start, f)
	}
	d := r.model.LatentDim()
	b.lower, b.upper = unitBox(d)
	if f.model == nil {
		r.logf("warning: query %d: GP fit failed (%v); proposing random points of the latent box for this round, "+
			"not the acquisition's maximisers", b.start+1, f.err)
	} else {
		b.bel = newBeliever(f, r.cfg.GPRefit == GPRefitEvery)
		if err := b.conditionOnRunning(); err != nil {
			return nil, err
		}
		if r.cfg.TrustRegion {
			centre := make([]float64, d)
			f.nz.TransformVec(centre, r.sur.x[argmax(r.sur.u)])
			b.lower, b.upper = r.tr.box(centre, f.model.Hyper().Lengthscales)
			tr := r.tr
			b.tr = &tr
		}
	}
	return b.fill()
}

// conditionOnRunning conditions the round's GP on the objects of other
// rounds still being evaluated, with fantasies (asynchronous policy).
func (b *roundBuilder[O]) conditionOnRunning() error {
	r := b.r
	d := r.model.LatentDim()
	for _, start := range r.openStarts() {
		for i := start; i < r.openRounds[start].end; i++ {
			if !r.openRounds[start].pending[i] {
				continue
			}
			u := make([]float64, d)
			b.fit.nz.TransformVec(u, r.queries[i].Z)
			if err := b.condition(u, 0, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// acquire proposes the latent point of attempt a: the maximiser of the
// conditioned GP's acquisition in the search box, or a uniform point of the
// box when the GP or its maximisation failed. It returns a Stop on the
// round's first attempt when the maximal EI is below tau.
func (b *roundBuilder[O]) acquire(q *Query, a int) (z, u []float64, stop *Stop, err error) {
	r := b.r
	t := time.Now()
	defer func() { q.Timing.Acq += time.Since(t).Seconds() }()
	d := r.model.LatentDim()
	seed := attemptSeed(r.cfg.Seed, streamAcq, uint64(b.start), a)
	if b.bel != nil {
		bestF := b.bel.bestF(r.cfg.BestQuantile)
		fn := r.sur.acquisition(b.bel.model, bestF)
		p, err := r.sur.maximize(b.bel.model, fn, fn, bestF, b.lower, b.upper, seed)
		if err == nil {
			if r.cfg.Tau > 0 && r.inVer > 0 && a == 0 && p.ei < r.cfg.Tau {
				return nil, nil, &Stop{Version: r.version, After: b.start, EI: finite(p.ei)}, nil
			}
			q.Acq, q.EI = finite(p.acqValue), finite(p.ei)
			z = make([]float64, d)
			b.fit.nz.InverseVec(z, p.u)
			return z, p.u, nil, nil
		}
		r.randomFallback(q, "acquisition failed", err, "a random point of the search box")
	} else {
		q.Random, q.RandomReason = true, fmt.Sprintf("GP fit failed: %v", b.fit.err)
	}
	rng := fallbackRand(r.cfg.Seed, uint64(b.start), a)
	u = make([]float64, d)
	for k := range u {
		u[k] = b.lower[k] + rng.Float64()*(b.upper[k]-b.lower[k])
	}
	z = make([]float64, d)
	b.fit.nz.InverseVec(z, u)
	return z, u, nil, nil
}

// condition conditions the round's GP on a real utility at u, or (real
// false) on the fantasy of the kriging believer there.
func (b *roundBuilder[O]) condition(u []float64, util float64, real bool) error {
	if b.bel == nil {
		return nil
	}
	y := b.bel.mean(u)
	if real {
		y = b.bel.standardize(util)
	}
	return b.bel.add(u, y, real)
}

// pick adds a novel object to the round's proposals.
func (b *roundBuilder[O]) pick(q Query, key string, obj O, u []float64) {
	q.Valid, q.Object = true, key
	b.pending = append(b.pending, q.Index)
	b.objs[q.Index] = obj
	b.picked[key] = true
	b.queries = append(b.queries, q)
	if u != nil {
		// A failed conditioning leaves the GP as it was: the next
		// proposal may then decode to this object again and is skipped.
		if err := b.condition(u, 0, false); err != nil {
			b.r.logf("query %d: %v", q.Index+1, err)
		}
	}
}

// ballFallback searches around u (the last proposal, in the unit box) for a
// novel object: fallbackBatch points drawn uniformly in a ball of radius ρ
// (clipped to the search box), decoded as a batch, ρ doubled from
// 0.02 √d · side up to the box's diagonal; with a trust region the search
// goes on over the whole box. Among a batch's novel decodes the one with
// the best acquisition value is kept.
func (b *roundBuilder[O]) ballFallback(u []float64) (bool, *Stop, error) {
	r := b.r
	d := len(u)
	a := b.attempt
	b.attempt++
	type phase struct {
		lower, upper []float64
		kind         string
	}
	phases := []phase{{b.lower, b.upper, FallbackBall}}
	if b.tr != nil {
		lo, hi := unitBox(d)
		phases = append(phases, phase{lo, hi, FallbackBallOutsideTR})
	}
	rng := randFrom(attemptSeed(r.cfg.Seed, streamBall, uint64(b.start), a))
	q := b.newQuery(r.cfg.RepeatTries)
	t := time.Now()
	defer func() { q.Timing.Decode += time.Since(t).Seconds() }()
	batch := 0
	for _, ph := range phases {
		side := 0.0
		for k := range ph.lower {
			side = math.Max(side, ph.upper[k]-ph.lower[k])
		}
		diag := side * math.Sqrt(float64(d))
		for rho := 0.02 * diag; rho < 2*diag; rho *= 2 {
			us, zs := b.ballPoints(rng, u, rho, ph.lower, ph.upper)
			objs, ok, err := r.decode(zs, deriveSeed(attemptSeed(r.cfg.Seed, streamBall, uint64(b.start), a), 1, uint64(batch)))
			batch++
			if err != nil {
				return false, nil, err
			}
			best := b.bestNovel(us, objs, ok)
			if best < 0 {
				continue
			}
			q.Z, q.Fallback, q.FallbackRadius = zs[best], ph.kind, rho
			b.pick(q, r.task.Key(objs[best]), objs[best], us[best])
			return true, nil, nil
		}
	}
	b.exhausted = fmt.Sprintf("no novel object within reach: %d acquisition steps decoded to known objects or nothing, "+
		"and %d points in balls up to the latent box's diagonal around the last proposal decoded to no new object; the run ends here",
		r.cfg.RepeatTries, batch*fallbackBatch)
	return false, nil, nil
}

// ballPoints draws fallbackBatch points uniformly in the intersection of
// the ball of radius rho around u with [lower, upper] (rejection sampling:
// clipping would pile points onto the box's faces, where a proposal near a
// corner finds only more of what it already found), in the unit box (us)
// and the latent space (zs).
func (b *roundBuilder[O]) ballPoints(rng *rand.Rand, u []float64, rho float64, lower, upper []float64) (us, zs [][]float64) {
	d := len(u)
	for range fallbackBatch {
		p := make([]float64, d)
		for try := 0; ; try++ {
			if try == ballTries { // the ball barely meets the box: a uniform point of the box
				for k := range p {
					p[k] = lower[k] + rng.Float64()*(upper[k]-lower[k])
				}
				break
			}
			dir := make([]float64, d)
			norm := 0.0
			for k := range dir {
				dir[k] = rng.NormFloat64()
				norm += dir[k] * dir[k]
			}
			radius := rho * math.Pow(rng.Float64(), 1/float64(d)) / math.Sqrt(norm)
			inside := true
			for k := range p {
				p[k] = u[k] + radius*dir[k]
				inside = inside && p[k] >= lower[k] && p[k] <= upper[k]
			}
			if inside {
				break
			}
		}
		z := make([]float64, d)
		b.fit.nz.InverseVec(z, p)
		us, zs = append(us, p), append(zs, z)
	}
	return us, zs
}

// ballTries bounds the draws of one fallback point from the ball before a
// uniform point of the box is taken instead.
const ballTries = 100

// bestNovel returns the index of the novel valid decode with the best
// acquisition value (the first novel one without a GP), or -1.
func (b *roundBuilder[O]) bestNovel(us [][]float64, objs []O, ok []bool) int {
	r := b.r
	best, bestV := -1, math.Inf(-1)
	var fn func(u []float64) float64
	if b.bel != nil {
		acqFn := r.sur.acquisition(b.bel.model, b.bel.bestF(r.cfg.BestQuantile))
		fn = func(u []float64) float64 { return acqFn.Eval(u, nil) }
	}
	for i := range objs {
		if !ok[i] {
			continue
		}
		key := r.task.Key(objs[i])
		if r.isKnown(key) || b.picked[key] {
			continue
		}
		if fn == nil {
			return i
		}
		if v := fn(us[i]); best < 0 || v > bestV {
			best, bestV = i, v
		}
	}
	return best
}

// draw chooses the round's objects for random search and prior sampling:
// draws until one decodes to a novel object, at most novelDrawFactor ·
// RandomDraws per object.
func (b *roundBuilder[O]) draw() error {
	r := b.r
	point, err := r.drawPoint()
	if err != nil {
		return err
	}
	isNew := func(key string) bool { return !r.isKnown(key) && !b.picked[key] }
	for len(b.pending) < b.n {
		q := b.newQuery(0)
		obj, found, err := r.drawNovel(&q, point, novelDrawFactor*RandomDraws, isNew, false)
		if err != nil {
			return err
		}
		if !found {
			b.exhausted = fmt.Sprintf("no novel object within reach: %d draws decoded to known objects or nothing; the run ends here",
				novelDrawFactor*RandomDraws)
			return nil
		}
		b.pick(q, q.Object, obj, nil)
	}
	return nil
}

// drawPoint returns the sampler of random search (uniform in the box of
// the version's latent points) or of prior sampling (N(0, I)).
func (r *runner[O]) drawPoint() (func(*rand.Rand) []float64, error) {
	d := r.model.LatentDim()
	if r.cfg.Strategy == StrategyPrior {
		return func(rng *rand.Rand) []float64 {
			z := make([]float64, d)
			for k := range z {
				z[k] = rng.NormFloat64()
			}
			return z
		}, nil
	}
	nz, err := r.latentBox()
	if err != nil {
		return nil, err
	}
	return func(rng *rand.Rand) []float64 { return randomInBox(nz, rng) }, nil
}

// applyRound adds a journaled round's queries to the state; it stays open
// until every pending query has its evaluation.
func (r *runner[O]) applyRound(rec Round, objs map[int]any) error {
	switch {
	case rec.Start != len(r.queries) || rec.Version != r.version || r.stopped:
		return fmt.Errorf("round %d of version %d after %d queries in version %d", rec.Start, rec.Version, len(r.queries), r.version)
	}
	for _, q := range rec.Queries {
		if len(q.Z) != r.model.LatentDim() {
			return fmt.Errorf("query %d has a %d-dimensional latent point, the model has %d", q.Index, len(q.Z), r.model.LatentDim())
		}
	}
	r.queries = append(r.queries, rec.Queries...)
	o := &openRound{start: rec.Start, end: len(r.queries), pending: map[int]bool{}, objs: objs}
	for _, i := range rec.Pending {
		o.pending[i] = true
	}
	r.openRounds[rec.Start] = o
	r.pending += len(o.pending)
	r.events = append(r.events, surEvent{fit: true, kept: rec.GPKept, start: rec.Start})
	if rec.TR != nil {
		r.tr = *rec.TR
	}
	return nil
}

// applyEval records a pending query's evaluation; the last one completes
// the round.
func (r *runner[O]) applyEval(e Eval) error {
	var o *openRound
	for _, c := range r.openRounds {
		if c.pending[e.Index] {
			o = c
		}
	}
	if o == nil {
		return fmt.Errorf("evaluation of query %d, which is not pending", e.Index)
	}
	q := &r.queries[e.Index]
	q.Score, q.Failure = e.Score, e.Failure
	q.Timing.Eval = e.Seconds
	q.Timing.Total += e.Seconds
	delete(o.pending, e.Index)
	r.pending--
	if len(o.pending) == 0 {
		return r.completeRound(o)
	}
	return nil
}

// completeRound applies a round whose evaluations are all in, in index
// order (so that the data's order does not depend on which evaluation
// finished first): the evaluated objects join the data, every query's
// incumbent is set, the surrogate gets the round's points (when it holds
// the version's) and the trust region is updated.
func (r *runner[O]) completeRound(o *openRound) error {
	delete(r.openRounds, o.start)
	r.events = append(r.events, surEvent{start: o.start})
	before := r.util[argmax(r.util)]
	gained := math.Inf(-1)
	for i := o.start; i < o.end; i++ {
		q := &r.queries[i]
		if r.counts(*q) {
			obj, err := r.roundObject(o, *q)
			if err != nil {
				return err
			}
			r.appendData(obj, q.Score, q.Failure != "")
			r.evaluated++
			r.inVer++
			gained = math.Max(gained, r.sign*q.Score)
		}
		q.Incumbent = r.best().score
		if r.surReady {
			r.addPoint(*q)
		}
	}
	if r.cfg.TrustRegion {
		r.tr = r.tr.update(r.cfg.TR, improves(gained, before), r.model.LatentDim(), r.cfg.Q)
	}
	return nil
}

// roundObject returns the object of an evaluated query of round o.
func (r *runner[O]) roundObject(o *openRound, q Query) (O, error) {
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
func (r *runner[O]) launch(o *openRound) {
	idx := make([]int, 0, len(o.pending))
	for i := range o.pending {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		r.running++
		obj, err := r.roundObject(o, r.queries[i])
		if err != nil {
			r.results <- evalResult{e: Eval{Index: i, Score: r.task.FailureScore(), Failure: err.Error(), At: unixNow()}}
			continue
		}
		go func() {
			r.slots <- struct{}{}
			defer func() { <-r.slots }()
			defer func() {
				if p := recover(); p != nil {
					r.results <- evalResult{e: Eval{Index: i}, crash: p}
				}
			}()
			t := time.Now()
			s, failure, h := r.evaluate(QueryTag(i), obj, true)
			r.results <- evalResult{e: Eval{Index: i, Score: s, Failure: failure, Seconds: time.Since(t).Seconds(), At: unixNow()}, halt: h}
		}()
	}
}

// awaitOne waits for a running evaluation, journals it and applies it.
// A Halt stops the run (r.halt); an evaluation that was not made (a Halt
// without a failure) is not journaled and stays pending for a resume.
func (r *runner[O]) awaitOne() error {
	res := <-r.results
	r.running--
	if res.crash != nil {
		// As a sequential loop would: the run stops where it is, the
		// evaluations journaled so far are kept.
		panic(res.crash)
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
	if err := r.journal.append(record{Eval: &e}); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	if err := r.applyEval(e); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	return nil
}

// unixNow is the time in seconds since 1970, for the journal.
func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// latentBox is the box random search draws from: that of the version's
// latent points (quantile bounds widened to include the best point, as the
// GP's inputs).
func (r *runner[O]) latentBox() (gp.Normalizer, error) {
	x := denseRows(r.sur.x)
	nz, err := gp.NewNormalizer(x, r.sur.x[argmax(r.sur.u)])
	if err != nil {
		return nz, fmt.Errorf("random search box: %w", err)
	}
	return nz, nil
}
