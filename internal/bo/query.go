package bo

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// perturbBatch is how many perturbed points (or random draws) are decoded at
// once: decoding a batch costs about as much as decoding one point, unless
// the model says otherwise (decodeBatch).
const perturbBatch = 10

// decodeBatch is how many perturbed points or random draws a decode call
// takes: perturbBatch, or fewer for a PointwiseDecoder.
func (r *runner[O]) decodeBatch() int {
	if p, ok := r.model.(PointwiseDecoder); ok {
		if w := p.DecodeWidth(); w > 0 {
			return min(w, perturbBatch)
		}
	}
	return perturbBatch
}

// query proposes, decodes and evaluates the next query. It returns a Stop
// instead when the maximal EI is below tau (never on a version's first
// query, so that every version makes progress).
func (r *runner[O]) query() (Query, *Stop, error) {
	start := time.Now()
	q := Query{Index: len(r.queries), Version: r.version}
	q.Timing.Encode, r.encodeS = r.encodeS, 0
	var obj O
	var valid bool
	var err error
	if r.cfg.Strategy == StrategyRandom {
		obj, valid, err = r.drawRandom(&q)
	} else {
		var stop *Stop
		obj, valid, stop, err = r.searchNovel(&q)
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

// searchNovel runs the acquisition step (a GP proposal, or a prior draw)
// and the novelty check; when the check finds no new object it redoes the
// step away from every point tried, at most NoveltyRedo times, and then
// accepts the duplicate. The GP is fitted once per query: a redo changes
// the acquisition, not the GP, so the warm-start chain that a resume
// replays does not depend on redos.
func (r *runner[O]) searchNovel(q *Query) (obj O, valid bool, stop *Stop, err error) {
	var fit *fitResult
	var tried []triedPoint
	for a := 0; ; a++ {
		var z []float64
		if r.cfg.Strategy == StrategyPrior {
			t := time.Now()
			z = priorPoint(r.model.LatentDim(), attemptSeed(r.cfg.Seed, streamAcq, uint64(q.Index), a))
			q.Timing.Acq += time.Since(t).Seconds()
		} else {
			if fit == nil {
				f, fitted := r.sur.next(deriveSeed(r.cfg.Seed, streamGPFit, uint64(q.Index)))
				fit = &f
				q.Timing.GPFit, q.GPKept = f.dur.Seconds(), !fitted
				if fitted {
					q.GP = gpFitRecord(f)
					r.noteClamped(q.Index, f)
				}
			}
			z, stop, err = r.propose(q, *fit, a, tried)
			if err != nil || stop != nil {
				return obj, false, stop, err
			}
		}
		t := time.Now()
		var dup bool
		var trials [][]float64
		obj, valid, dup, trials, err = r.decodeNovel(q, z, a)
		q.Timing.Decode += time.Since(t).Seconds()
		if err != nil || !dup || a == r.cfg.NoveltyRedo {
			q.Redos = a
			return obj, valid, nil, err
		}
		for _, z := range trials {
			tried = append(tried, triedPoint{z: z, radius: r.exclusionRadius(a)})
		}
	}
}

// priorPoint draws a point of the prior N(0, I).
func priorPoint(d int, seed uint64) []float64 {
	rng := randFrom(seed)
	z := make([]float64, d)
	for k := range z {
		z[k] = rng.NormFloat64()
	}
	return z
}

// gpFitRecord summarises a GP fit for the journal (nil for a failed one).
func gpFitRecord(f fitResult) *GPFit {
	m := f.model
	if m == nil {
		return nil
	}
	h := m.Hyper()
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range h.Lengthscales {
		lo, hi = math.Min(lo, l), math.Max(hi, l)
	}
	info := m.Info()
	rec := &GPFit{LogLik: finite(m.LogLik()), Noise: h.Noise, Outputscale: h.Outputscale, LengthscaleMin: finite(lo),
		LengthscaleMax: finite(hi), Points: m.Points(), Iterations: info.Iterations, Warm: info.Warm, Clamped: f.st.Clamped}
	if h.Warped() {
		rec.WarpMin = finite(min(slices.Min(h.WarpA), slices.Min(h.WarpB)))
		rec.WarpMax = finite(max(slices.Max(h.WarpA), slices.Max(h.WarpB)))
	}
	return rec
}

// propose maximises the acquisition of the fitted GP (attempt a, away from
// the points tried by earlier attempts); a failed fit or maximisation falls
// back to a uniform point of the latent box.
func (r *runner[O]) propose(q *Query, f fitResult, a int, tried []triedPoint) ([]float64, *Stop, error) {
	i := uint64(q.Index)
	q.Random, q.RandomReason = false, ""
	if f.model == nil {
		if f.nz.Lower == nil {
			return nil, nil, fmt.Errorf("GP data: %w", f.err)
		}
		r.randomFallback(q, "GP fit failed", f.err, "a random point of the latent box")
		return randomInBox(f.nz, fallbackRand(r.cfg.Seed, i, a)), nil, nil
	}
	t := time.Now()
	p, err := r.sur.propose(f, attemptSeed(r.cfg.Seed, streamAcq, i, a), tried)
	q.Timing.Acq += time.Since(t).Seconds()
	if err != nil {
		r.randomFallback(q, "acquisition failed", err, "a random point of the latent box")
		return randomInBox(f.nz, fallbackRand(r.cfg.Seed, i, a)), nil, nil
	}
	if r.cfg.Tau > 0 && r.inVer > 0 && a == 0 && p.ei < r.cfg.Tau {
		return nil, &Stop{Version: r.version, After: q.Index, EI: finite(p.ei)}, nil
	}
	q.Acq, q.EI = finite(p.acqValue), finite(p.ei)
	return p.z, nil, nil
}

// randomFallback marks q as a random point because of what failed (err)
// and warns: a run whose proposals are random is not doing BO, and the
// warning, the journal's reason and the summary's count say so.
func (r *runner[O]) randomFallback(q *Query, what string, err error, instead string) {
	q.Random, q.RandomReason = true, fmt.Sprintf("%s: %v", what, err)
	r.logf("warning: query %d: %s; proposing %s instead of the acquisition's maximiser", q.Index+1, q.RandomReason, instead)
}

// noteClamped notes a fit whose standardiser clamped targets, the first of
// each model version (query i is 0-based); the journal counts every fit's.
func (r *runner[O]) noteClamped(i int, f fitResult) {
	if f.st.Clamped > 0 && r.clampNoted != r.version+1 {
		r.clampNoted = r.version + 1
		lo, hi := r.sign*f.st.Lower, r.sign*f.st.Upper // utilities to scores
		r.logf("note: query %d: %d of the GP's %d scores lie more than %d robust standard deviations from their median: "+
			"the GP takes them as the nearest of %.6g and %.6g (the journal's gp.clamped counts them)", i+1, f.st.Clamped,
			len(f.yStd), gp.FenceSDs, min(lo, hi), max(lo, hi))
	}
}

// fallbackRand is the generator of query i's random fallback point.
func fallbackRand(seed, i uint64, a int) *rand.Rand {
	return randFrom(deriveSeed(attemptSeed(seed, streamFallback, i, a), 0, 0))
}

// exclusionRadius is the latent radius around the points that attempt a
// tried, inside which the next attempt's acquisition is penalised: the
// typical length of the largest perturbation the novelty check made
// (σ_max √d), since points that close decoded to objects already seen,
// doubled at each redo so that three redos reach 4σ_max √d in case the
// object's region is wider.
func (r *runner[O]) exclusionRadius(a int) float64 {
	sigma := r.cfg.PerturbSigma * math.Pow(r.cfg.PerturbGrowth, float64(max(r.cfg.PerturbTries, 1)-1))
	return sigma * math.Sqrt(float64(r.model.LatentDim())) * math.Ldexp(1, a)
}

// randomInBox draws a uniform point of the normaliser's box.
func randomInBox(nz gp.Normalizer, rng interface{ Float64() float64 }) []float64 {
	z := make([]float64, len(nz.Lower))
	for k := range z {
		z[k] = nz.Lower[k] + rng.Float64()*(nz.Upper[k]-nz.Lower[k])
	}
	return z
}

// decodeNovel decodes z (attempt a of the query) and, when the object was
// seen before, decodes perturbations z + N(0, σ_t²) (σ_t = PerturbSigma ·
// PerturbGrowth^t) until one is valid and new, at most PerturbTries times.
// It records the decoded z, the proposal it was perturbed from, the object's
// key and the novelty outcome in q. An invalid first decode is returned as
// is: the query then scores FailureScore. When no new object was found,
// dup is set and tried holds z and its perturbations.
func (r *runner[O]) decodeNovel(q *Query, z []float64, a int) (obj O, valid, dup bool, tried [][]float64, err error) {
	i := uint64(q.Index)
	decodeSeed := attemptSeed(r.cfg.Seed, streamDecode, i, a)
	objs, ok, err := r.decode([][]float64{z}, deriveSeed(decodeSeed, 0, 0))
	if err != nil {
		return obj, false, false, nil, err
	}
	obj, valid = objs[0], ok[0]
	q.Z, q.Valid, q.Object, q.Proposed, q.Duplicate = z, valid, "", nil, false
	if valid {
		q.Object = r.task.Key(obj)
	}
	if !valid || !r.seenKey(q.Object) {
		return obj, valid, false, nil, nil
	}
	tried = [][]float64{z}
	rng := randFrom(attemptSeed(r.cfg.Seed, streamPerturb, i, a))
	sigma := r.cfg.PerturbSigma
	batch := r.decodeBatch()
	for t := 0; t < r.cfg.PerturbTries; t += batch {
		n := min(batch, r.cfg.PerturbTries-t)
		zs := make([][]float64, n)
		for b := range zs {
			zs[b] = make([]float64, len(z))
			for k := range z {
				zs[b][k] = z[k] + sigma*rng.NormFloat64()
			}
			sigma *= r.cfg.PerturbGrowth
		}
		objs, ok, err := r.decode(zs, deriveSeed(decodeSeed, 1, uint64(t)))
		if err != nil {
			return obj, false, false, nil, err
		}
		for b := range zs {
			if !ok[b] {
				continue
			}
			if key := r.task.Key(objs[b]); !r.seenKey(key) {
				q.Z, q.Object, q.Proposed = zs[b], key, z
				q.Perturbations += t + b + 1
				return objs[b], true, false, nil, nil
			}
		}
		tried = append(tried, zs...)
	}
	q.Perturbations += r.cfg.PerturbTries
	q.Duplicate = true
	return obj, true, true, tried, nil
}

// drawRandom is the reference's random search: uniform draws from the box
// of the version's latent points (the encoder means of the training data
// and the latents of the version's new objects; quantile bounds widened to
// include the best point, as the GP's inputs), redrawn while they decode
// to an invalid or already-seen object, at most RandomDraws times; then the
// first valid draw (a duplicate), else the first draw, is evaluated.
func (r *runner[O]) drawRandom(q *Query) (obj O, valid bool, err error) {
	t := time.Now()
	point, err := r.drawPoint()
	if err != nil {
		return obj, false, err
	}
	q.Timing.Acq = time.Since(t).Seconds()
	isNew := func(key string) bool { return !r.seenKey(key) }
	obj, _, err = r.drawNovel(q, point, RandomDraws, isNew, true)
	return obj, q.Valid, err
}

// drawNovel draws latent points with point (from query q's own random
// stream), decoded in batches, until one decodes to an object isNew
// accepts, at most limit times. It reports whether it found one; when it
// did not and acceptDup is set, q holds the first valid draw (a
// duplicate), else the first draw, as the authors' random search evaluates.
func (r *runner[O]) drawNovel(q *Query, point func(*rand.Rand) []float64, limit int, isNew func(string) bool, acceptDup bool) (obj O, found bool, err error) {
	i := uint64(q.Index)
	rng := newRand(r.cfg.Seed, streamAcq, i)
	decodeSeed := deriveSeed(r.cfg.Seed, streamDecode, i)
	t := time.Now()
	defer func() { q.Timing.Decode = time.Since(t).Seconds() }()
	fallback := -1 // first valid draw, else 0
	var fbZ []float64
	var fbObj O
	batch := r.decodeBatch()
	for d := 0; d < limit; d += batch {
		zs := make([][]float64, min(batch, limit-d))
		for b := range zs {
			zs[b] = point(rng)
		}
		objs, ok, err := r.decode(zs, deriveSeed(decodeSeed, 2, uint64(d)))
		if err != nil {
			return obj, false, err
		}
		for b, z := range zs {
			if fbZ == nil || (fallback < 0 && ok[b]) {
				fbZ, fbObj = z, objs[b]
				if ok[b] {
					fallback = d + b
				}
			}
			if !ok[b] {
				continue
			}
			if key := r.task.Key(objs[b]); isNew(key) {
				q.Z, q.Object, q.Valid, q.Draws = z, key, true, d+b+1
				return objs[b], true, nil
			}
		}
	}
	if !acceptDup {
		return obj, false, nil
	}
	q.Z, q.Valid, q.Draws, q.Duplicate = fbZ, fallback >= 0, limit, fallback >= 0
	if q.Valid {
		q.Object = r.task.Key(fbObj)
	}
	return fbObj, false, nil
}

// denseRows returns the rows as a matrix.
func denseRows(rows [][]float64) *mat.Dense {
	x := mat.NewDense(len(rows), len(rows[0]), nil)
	for j, row := range rows {
		x.SetRow(j, row)
	}
	return x
}

// decode decodes latent points, checking what the model returns.
func (r *runner[O]) decode(zs [][]float64, seed uint64) ([]O, []bool, error) {
	d := r.model.LatentDim()
	m := mat.NewDense(len(zs), d, nil)
	for i, z := range zs {
		m.SetRow(i, z)
	}
	objs, ok, err := r.model.Decode(m, seed)
	if err != nil {
		return nil, nil, fmt.Errorf("decode: %w", err)
	}
	if len(objs) != len(zs) || len(ok) != len(zs) {
		return nil, nil, fmt.Errorf("decode: model returned %d objects and %d flags for %d points", len(objs), len(ok), len(zs))
	}
	return objs, ok, nil
}

// evaluate scores an object, the evaluation tag (QueryTag, SampleTag):
// invalid decodes, errors and non-finite scores get the task's failure
// score and a reason. A TaggedScorer task is told the tag. A Halt error
// is returned as such (with the failure score and its reason when it has
// one).
func (r *runner[O]) evaluate(tag string, obj O, valid bool) (score float64, failure string, halt *Halt) {
	if !valid {
		return r.task.FailureScore(), "invalid decode", nil
	}
	var s float64
	var err error
	if ts, ok := any(r.task).(TaggedScorer[O]); ok {
		s, err = ts.ScoreTagged(tag, obj)
	} else {
		s, err = r.task.Score(obj)
	}
	switch {
	case errors.As(err, &halt):
		return r.task.FailureScore(), halt.Failure, halt
	case err != nil:
		return r.task.FailureScore(), err.Error(), nil
	case math.IsNaN(s) || math.IsInf(s, 0):
		return r.task.FailureScore(), fmt.Sprintf("objective returned %v", s), nil
	}
	return s, "", nil
}
