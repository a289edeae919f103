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
	if p, ok := r.vae.(PointwiseDecoder); ok {
		if w := p.DecodeWidth(); w > 0 {
			return min(w, perturbBatch)
		}
	}
	return perturbBatch
}

// decode decodes latent points, checking what the model returns.
func (r *runner[O]) decode(zs [][]float64, seed uint64) ([]O, []bool, error) {
	d := r.vae.LatentDim()
	m := mat.NewDense(len(zs), d, nil)
	for i, z := range zs {
		m.SetRow(i, z)
	}
	objs, ok, err := r.vae.Decode(m, seed)
	if err != nil {
		return nil, nil, fmt.Errorf("decode: %w", err)
	}
	if len(objs) != len(zs) || len(ok) != len(zs) {
		return nil, nil, fmt.Errorf("decode: model returned %d objects and %d flags for %d points", len(objs), len(ok), len(zs))
	}
	return objs, ok, nil
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

// drawPoint returns the sampler of random search (uniform in the box of
// the version's latent points) or of prior sampling (N(0, I)).
func (r *runner[O]) drawPoint() (func(*rand.Rand) []float64, error) {
	d := r.vae.LatentDim()
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

// latentBox is the box random search draws from: that of the version's
// latent points (quantile bounds widened to include the best point, as the
// GP's inputs).
func (r *runner[O]) latentBox() (gp.Normalizer, error) {
	x := denseRows(r.surrogate.x)
	nz, err := gp.NewNormalizer(x, r.surrogate.x[argmax(r.surrogate.u)])
	if err != nil {
		return nz, fmt.Errorf("random search box: %w", err)
	}
	return nz, nil
}

// randomInBox draws a uniform point of the normaliser's box.
func randomInBox(nz gp.Normalizer, rng interface{ Float64() float64 }) []float64 {
	z := make([]float64, len(nz.Lower))
	for k := range z {
		z[k] = nz.Lower[k] + rng.Float64()*(nz.Upper[k]-nz.Lower[k])
	}
	return z
}

// denseRows returns the rows as a matrix.
func denseRows(rows [][]float64) *mat.Dense {
	x := mat.NewDense(len(rows), len(rows[0]), nil)
	for j, row := range rows {
		x.SetRow(j, row)
	}
	return x
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
	return r.outcome(r.score(tag, obj))
}

// score asks the task for obj's score, through ScoreTagged when it ties
// evaluations to their tags.
func (r *runner[O]) score(tag string, obj O) (float64, error) {
	if ts, ok := any(r.task).(TaggedScorer[O]); ok {
		return ts.ScoreTagged(tag, obj)
	}
	return r.task.Score(obj)
}

// outcome turns a task's answer into the evaluation's score and failure
// (a Halt passed on).
func (r *runner[O]) outcome(s float64, err error) (score float64, failure string, halt *Halt) {
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

// unixNow is the time in seconds since 1970, for the journal.
func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }

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
	if f.st.Clamped > 0 && r.version.clampNoted != r.version.current+1 {
		r.version.clampNoted = r.version.current + 1
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
