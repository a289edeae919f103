package bo

import (
	"fmt"
	"math"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/gp"
	"gonum.org/v1/gonum/mat"
)

// perturbBatch is how many perturbed points the novelty check decodes at
// once: decoding a batch costs about as much as decoding one point.
const perturbBatch = 10

// query proposes, decodes and evaluates the next query. It returns a Stop
// instead when the maximal EI is below tau (never on a version's first
// query, so that every version makes progress).
func (r *runner[O]) query() (Query, *Stop, error) {
	start := time.Now()
	i := len(r.queries)
	q := Query{Index: i, Version: r.version}
	q.Timing.Encode, r.encodeS = r.encodeS, 0
	var z []float64
	if r.cfg.Strategy == StrategyRandom {
		t := time.Now()
		rng := newRand(r.cfg.Seed, streamAcq, uint64(i))
		z = make([]float64, r.model.LatentDim())
		for k := range z {
			z[k] = rng.NormFloat64()
		}
		q.Timing.Acq = time.Since(t).Seconds()
	} else {
		var stop *Stop
		var err error
		z, stop, err = r.propose(&q)
		if err != nil || stop != nil {
			return q, stop, err
		}
	}
	t := time.Now()
	obj, valid, err := r.decodeNovel(&q, z)
	if err != nil {
		return q, nil, err
	}
	q.Timing.Decode = time.Since(t).Seconds()
	t = time.Now()
	q.Score, q.Failure = r.evaluate(obj, valid)
	q.Timing.Eval = time.Since(t).Seconds()
	q.Timing.Total = time.Since(start).Seconds()
	return q, nil, nil
}

// propose fits the GP and maximises the acquisition; a failed fit or
// maximisation falls back to a uniform point of the latent box.
func (r *runner[O]) propose(q *Query) ([]float64, *Stop, error) {
	i := uint64(q.Index)
	f := r.sur.fit(deriveSeed(r.cfg.Seed, streamGPFit, i))
	q.Timing.GPFit = f.dur.Seconds()
	if f.model == nil {
		if f.nz.Lower == nil {
			return nil, nil, fmt.Errorf("GP data: %w", f.err)
		}
		r.logf("query %d: GP fit failed (%v); falling back to a random point of the latent box", q.Index, f.err)
		q.Random = true
		return randomInBox(f.nz, deriveSeed(r.cfg.Seed, streamFallback, i)), nil, nil
	}
	p, err := r.sur.propose(f, deriveSeed(r.cfg.Seed, streamAcq, i))
	q.Timing.Acq = p.dur.Seconds()
	if err != nil {
		r.logf("query %d: acquisition failed (%v); falling back to a random point of the latent box", q.Index, err)
		q.Random = true
		return randomInBox(f.nz, deriveSeed(r.cfg.Seed, streamFallback, i)), nil, nil
	}
	if r.cfg.Tau > 0 && r.inVer > 0 && p.ei < r.cfg.Tau {
		return nil, &Stop{Version: r.version, After: q.Index, EI: finite(p.ei)}, nil
	}
	q.Acq, q.EI = finite(p.acqValue), finite(p.ei)
	return p.z, nil, nil
}

// randomInBox draws a uniform point of the normaliser's box.
func randomInBox(nz gp.Normalizer, seed uint64) []float64 {
	rng := newRand(seed, 0, 0)
	z := make([]float64, len(nz.Lower))
	for k := range z {
		z[k] = nz.Lower[k] + rng.Float64()*(nz.Upper[k]-nz.Lower[k])
	}
	return z
}

// decodeNovel decodes z and, when the object was seen before, decodes
// perturbations z + N(0, σ_t²) (σ_t = PerturbSigma · PerturbGrowth^t) until
// one is valid and new, at most PerturbTries times. It records the final z,
// the object's key and the novelty outcome in q. An invalid first decode is
// returned as is: the query then scores FailureScore.
func (r *runner[O]) decodeNovel(q *Query, z []float64) (obj O, valid bool, err error) {
	i := uint64(q.Index)
	decodeSeed := deriveSeed(r.cfg.Seed, streamDecode, i)
	objs, ok, err := r.decode([][]float64{z}, deriveSeed(decodeSeed, 0, 0))
	if err != nil {
		return obj, false, err
	}
	obj, valid = objs[0], ok[0]
	q.Z, q.Valid = z, valid
	if valid {
		q.Object = r.task.Key(obj)
	}
	if !valid || !r.seen[q.Object] {
		return obj, valid, nil
	}
	rng := newRand(r.cfg.Seed, streamPerturb, i)
	sigma := r.cfg.PerturbSigma
	for t := 0; t < r.cfg.PerturbTries; t += perturbBatch {
		n := min(perturbBatch, r.cfg.PerturbTries-t)
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
			return obj, false, err
		}
		for b := range zs {
			if !ok[b] {
				continue
			}
			if key := r.task.Key(objs[b]); !r.seen[key] {
				q.Z, q.Object, q.Perturbations = zs[b], key, t+b+1
				return objs[b], true, nil
			}
		}
	}
	q.Perturbations, q.Duplicate = r.cfg.PerturbTries, true
	return obj, true, nil
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

// evaluate scores an object: invalid decodes, errors and non-finite scores
// get the task's failure score and a reason.
func (r *runner[O]) evaluate(obj O, valid bool) (score float64, failure string) {
	if !valid {
		return r.task.FailureScore(), "invalid decode"
	}
	s, err := r.task.Score(obj)
	switch {
	case err != nil:
		return r.task.FailureScore(), err.Error()
	case math.IsNaN(s) || math.IsInf(s, 0):
		return r.task.FailureScore(), fmt.Sprintf("objective returned %v", s)
	}
	return s, ""
}
