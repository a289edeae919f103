package bo

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/acq"
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
	last         acq.Result // the round's last maximisation (Config.WarmStarts)
}

// round makes one round: it chooses up to n novel objects (see the package
// doc), journals them and launches their evaluations, which awaitOne
// applies. It returns a Stop instead when the maximal EI is below tau; when
// no novel object can be found it sets r.exhausted (after launching the
// proposals it did find).
func (p *roundsLoop[O]) round(n int) (*Stop, error) {
	r := p.r
	if err := r.readyVersion(); err != nil {
		return nil, err
	}
	b := &roundBuilder[O]{r: r, start: len(r.journal.queries), n: n, objs: map[int]any{}, picked: map[string]bool{}}
	// Objects still being evaluated are neither proposed again nor
	// forgotten: the GP sees them as fantasies (proposeBO).
	for _, o := range r.round.open {
		for i := range o.pending {
			b.picked[r.journal.queries[i].Object] = true
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
	rec := Round{Start: b.start, Version: r.version.current, Queries: b.queries, Pending: b.pending, TR: b.tr, GPKept: b.gpKept}
	if b.bel != nil {
		rec.GPUpdate = b.bel.spent.Seconds()
	}
	if err := r.journal.file.append(record{Round: &rec}); err != nil {
		return nil, fmt.Errorf("bo: %w", err)
	}
	if !rec.GPKept {
		r.saveWarm(rec.Start)
	}
	if err := p.applyRound(rec, b.objs); err != nil {
		return nil, fmt.Errorf("bo: %w", err)
	}
	r.round.proposed += len(rec.Pending)
	p.launch(r.round.open[rec.Start])
	return nil, nil
}

// newQuery returns the next query of the round, before its proposal.
func (b *roundBuilder[O]) newQuery(tries int) Query {
	return Query{Index: b.start + len(b.queries), Version: b.r.version.current, Round: b.start, Tries: tries}
}

// proposeBO chooses the round's proposals by maximising the acquisition of
// the GP conditioned on the round's points so far.
func (b *roundBuilder[O]) proposeBO() (*Stop, error) {
	r := b.r
	f, fitted := r.nextGP(deriveSeed(r.cfg.Seed, streamGPFit, uint64(b.start)))
	if errors.Is(f.err, gp.ErrStopped) {
		return nil, nil // no proposal: the loop sees the stop, awaits what runs and ends
	}
	if f.model == nil && f.nz.Lower == nil {
		return nil, fmt.Errorf("bo: query %d: GP data: %w", b.start+1, f.err)
	}
	b.fit, b.gpKept = f, !fitted
	if fitted {
		b.gpRec = gpFitRecord(f)
		r.noteClamped(b.start, f)
	}
	d := r.vae.LatentDim()
	b.lower, b.upper = unitBox(d)
	if f.model == nil {
		r.logf("warning: query %d: GP fit failed (%v); proposing random points of the latent box for this round, "+
			"not the acquisition's maximisers", b.start+1, f.err)
	} else {
		b.bel = newBeliever(f, r.cfg.GPRefit == GPRefitEvery, r.cfg.GPInducing)
		if err := b.conditionOnRunning(); err != nil {
			return nil, err
		}
		if r.cfg.TrustRegion {
			centre := make([]float64, d)
			f.nz.TransformVec(centre, r.surrogate.x[argmax(r.surrogate.u)])
			b.lower, b.upper = r.round.trustRegion.box(centre, f.model.Hyper().Lengthscales)
			tr := r.round.trustRegion
			b.tr = &tr
		}
	}
	return b.fill()
}

// conditionOnRunning conditions the round's GP on the objects of other
// rounds still being evaluated, with fantasies (asynchronous policy).
func (b *roundBuilder[O]) conditionOnRunning() error {
	r := b.r
	d := r.vae.LatentDim()
	for _, start := range r.round.starts() {
		for i := start; i < r.round.open[start].end; i++ {
			if !r.round.open[start].pending[i] {
				continue
			}
			u := make([]float64, d)
			b.fit.nz.TransformVec(u, r.journal.queries[i].Z)
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
	d := r.vae.LatentDim()
	seed := attemptSeed(r.cfg.Seed, streamAcq, uint64(b.start), a)
	if b.bel != nil {
		bestF := b.bel.bestF(r.cfg.BestQuantile)
		fn := r.surrogate.acquisition(b.bel.model, bestF)
		restarts, warm := r.cfg.Restarts, [][]float64(nil)
		if r.cfg.WarmStarts > 0 && len(b.last.Ends) > 0 { // not at the round's first step
			restarts -= r.cfg.WarmStarts
			warm = b.last.BestEnds(r.cfg.WarmStarts, acq.DistinctTol)
		}
		p, err := r.surrogate.maximize(b.bel.model, fn, fn, bestF, b.lower, b.upper, seed, restarts, warm)
		if err == nil {
			b.last = p.search
			if r.cfg.Tau > 0 && r.version.spent > 0 && a == 0 && p.ei < r.cfg.Tau {
				return nil, nil, &Stop{Version: r.version.current, After: b.start, EI: finite(p.ei)}, nil
			}
			q.Acq, q.EI = finite(p.acqValue), finite(p.ei)
			q.Mean, q.SD = b.posterior(p.u)
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

// posterior returns the GP's predicted mean and standard deviation of the
// score at u (unit box), in the task's scale and direction.
func (b *roundBuilder[O]) posterior(u []float64) (mean, sd *float64) {
	m, v := b.bel.model.Predict(u)
	m, v = b.fit.st.Inverse(m, v)
	m, s := b.r.sign*m, math.Sqrt(math.Max(v, 0))
	if math.IsNaN(m) || math.IsInf(m, 0) || math.IsNaN(s) || math.IsInf(s, 0) {
		return nil, nil
	}
	return &m, &s
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
		acqFn := r.surrogate.acquisition(b.bel.model, b.bel.bestF(r.cfg.BestQuantile))
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
