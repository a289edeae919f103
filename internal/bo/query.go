package bo

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// searchNovel runs the acquisition step (a GP proposal, or a prior draw)
// and the novelty check; when the check finds no new object it redoes the
// step away from every point tried, at most NoveltyRedo times, and then
// accepts the duplicate. The GP is fitted once per query: a redo changes
// the acquisition, not the GP, so the warm-start chain that a resume
// replays does not depend on redos.
func (p *authorsLoop[O]) searchNovel(q *Query) (obj O, valid bool, stop *Stop, err error) {
	r := p.r
	var fit *fitResult
	var tried []triedPoint
	for a := 0; ; a++ {
		var z []float64
		if r.cfg.Strategy == StrategyPrior {
			t := time.Now()
			z = priorPoint(r.vae.LatentDim(), attemptSeed(r.cfg.Seed, streamAcq, uint64(q.Index), a))
			q.Timing.Acq += time.Since(t).Seconds()
		} else {
			if fit == nil {
				f, fitted := r.nextGP(deriveSeed(r.cfg.Seed, streamGPFit, uint64(q.Index)))
				if errors.Is(f.err, gp.ErrStopped) {
					return obj, false, nil, r.stopping()
				}
				fit = &f
				q.Timing.GPFit, q.GPKept = f.dur.Seconds(), !fitted
				if fitted {
					q.GP = gpFitRecord(f)
					r.noteClamped(q.Index, f)
				}
			}
			z, stop, err = p.propose(q, *fit, a, tried)
			if err != nil || stop != nil {
				return obj, false, stop, err
			}
		}
		t := time.Now()
		var dup bool
		var trials [][]float64
		obj, valid, dup, trials, err = p.decodeNovel(q, z, a)
		q.Timing.Decode += time.Since(t).Seconds()
		if err != nil || !dup || a == r.cfg.NoveltyRedo {
			q.Redos = a
			return obj, valid, nil, err
		}
		for _, z := range trials {
			tried = append(tried, triedPoint{z: z, radius: p.exclusionRadius(a)})
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

// propose maximises the acquisition of the fitted GP (attempt a, away from
// the points tried by earlier attempts); a failed fit or maximisation falls
// back to a uniform point of the latent box.
func (p *authorsLoop[O]) propose(q *Query, f fitResult, a int, tried []triedPoint) ([]float64, *Stop, error) {
	r := p.r
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
	prop, err := r.surrogate.propose(f, attemptSeed(r.cfg.Seed, streamAcq, i, a), tried)
	q.Timing.Acq += time.Since(t).Seconds()
	if err != nil {
		r.randomFallback(q, "acquisition failed", err, "a random point of the latent box")
		return randomInBox(f.nz, fallbackRand(r.cfg.Seed, i, a)), nil, nil
	}
	if r.cfg.Tau > 0 && r.version.spent > 0 && a == 0 && prop.ei < r.cfg.Tau {
		return nil, &Stop{Version: r.version.current, After: q.Index, EI: finite(prop.ei)}, nil
	}
	q.Acq, q.EI = finite(prop.acqValue), finite(prop.ei)
	return prop.z, nil, nil
}

// exclusionRadius is the latent radius around the points that attempt a
// tried, inside which the next attempt's acquisition is penalised: the
// typical length of the largest perturbation the novelty check made
// (σ_max √d), since points that close decoded to objects already seen,
// doubled at each redo so that three redos reach 4σ_max √d in case the
// object's region is wider.
func (p *authorsLoop[O]) exclusionRadius(a int) float64 {
	r := p.r
	sigma := r.cfg.PerturbSigma * math.Pow(r.cfg.PerturbGrowth, float64(max(r.cfg.PerturbTries, 1)-1))
	return sigma * math.Sqrt(float64(r.vae.LatentDim())) * math.Ldexp(1, a)
}

// decodeNovel decodes z (attempt a of the query) and, when the object was
// seen before, decodes perturbations z + N(0, σ_t²) (σ_t = PerturbSigma ·
// PerturbGrowth^t) until one is valid and new, at most PerturbTries times.
// It records the decoded z, the proposal it was perturbed from, the object's
// key and the novelty outcome in q. An invalid first decode is returned as
// is: the query then scores FailureScore. When no new object was found,
// dup is set and tried holds z and its perturbations.
func (p *authorsLoop[O]) decodeNovel(q *Query, z []float64, a int) (obj O, valid, dup bool, tried [][]float64, err error) {
	r := p.r
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
	if !valid || !r.data.seen(q.Object) {
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
			if key := r.task.Key(objs[b]); !r.data.seen(key) {
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
func (p *authorsLoop[O]) drawRandom(q *Query) (obj O, valid bool, err error) {
	r := p.r
	t := time.Now()
	point, err := r.drawPoint()
	if err != nil {
		return obj, false, err
	}
	q.Timing.Acq = time.Since(t).Seconds()
	isNew := func(key string) bool { return !r.data.seen(key) }
	obj, _, err = r.drawNovel(q, point, RandomDraws, isNew, true)
	return obj, q.Valid, err
}
