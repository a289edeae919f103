package bo

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/models/weighting"
)

// versionState is where the current model version stands.
type versionState struct {
	current int  // the current model version (-1: none yet)
	spent   int  // its queries that spent budget
	first   int  // index of its first query
	stopped bool // its inner loop has stopped (tau)
	loaded  bool // the model holds its weights
	// moved says the model no longer holds its starting weights: a
	// version was loaded or retrained in this process.
	moved bool
	// surrogateReady says the surrogate holds the version's points.
	surrogateReady bool
	// events are the version's GP fits and point additions in journal
	// order (rounds), which prepareSurrogate replays after a resume.
	events []surEvent
	// clampNoted is 1 + the model version whose fits' clamped targets were
	// noted (noteClamped); 0 for none.
	clampNoted int
	// encodeSeconds is the encoding time to charge to the next query,
	// encodeFeaturiseCPU the CPU time of the featurisation it needed.
	encodeSeconds, encodeFeaturiseCPU float64
}

// chargeEncoding charges the version's encoding to the timing of its
// first query (or round) and clears it.
func (s *versionState) chargeEncoding(t *Timing) {
	t.Encode, t.FeaturiseCPU = s.encodeSeconds, s.encodeFeaturiseCPU
	s.encodeSeconds, s.encodeFeaturiseCPU = 0, 0
}

// begin makes v, whose first query has index first, the current version.
func (s *versionState) begin(v, first int) {
	s.current, s.spent, s.first, s.stopped, s.surrogateReady, s.events = v, 0, first, false, false, nil
}

// newVersion retrains the model on the current data (from the current
// version's weights), saves and journals the next version.
func (r *runner[O]) newVersion() error {
	if r.version.current >= 0 && !r.version.loaded {
		if err := r.loadVersion(r.version.current); err != nil {
			return err
		}
	}
	v := r.version.current + 1
	r.version.begin(v, len(r.journal.queries))
	r.progress(StageRetrain, nil)
	epochs := r.cfg.RetrainEpochs
	if v == 0 {
		epochs = r.cfg.InitialRetrainEpochs
	}
	rec := Version{Version: v, File: versionFile(v), Points: r.data.Len(), Epochs: epochs}
	start, featurised := time.Now(), r.featuriseCPU()
	if epochs > 0 || r.cfg.Strategy != StrategyPrior {
		idx, err := r.acceptedData(r.data.Len())
		if err != nil {
			return fmt.Errorf("bo: retrain version %d: %w", v, err)
		}
		rec.Excluded = r.data.Len() - len(idx)
		if epochs > 0 {
			losses, err := r.retrain(idx, epochs, v)
			r.version.moved = true
			if err != nil {
				return fmt.Errorf("bo: retrain version %d: %w", v, err)
			}
			rec.Losses = finiteMap(losses)
		}
	}
	rec.RetrainSeconds, rec.FeaturiseCPU = time.Since(start).Seconds(), r.featuriseCPU()-featurised
	if err := r.saveModel(v); err != nil {
		return err
	}
	r.version.loaded = true
	if err := r.samplePrior(&rec); err != nil {
		return err
	}
	if err := r.journal.file.append(record{Version: &rec}); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.journal.versions = append(r.journal.versions, rec)
	return nil
}

// stopVersion journals the early end of the current version's inner loop.
func (r *runner[O]) stopVersion(stop *Stop) error {
	if err := r.journal.file.append(record{Stop: stop}); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.version.stopped = true
	r.logf("version %d: max EI %.3g < tau %g after %d queries; retraining early", r.version.current, stop.EI, r.cfg.Tau, r.version.spent)
	return nil
}

// readyVersion loads the current version's weights and prepares its
// surrogate when they are not in place (after a resume or a retraining).
func (r *runner[O]) readyVersion() error {
	if !r.version.loaded {
		if err := r.loadVersion(r.version.current); err != nil {
			return err
		}
	}
	if r.cfg.Strategy != StrategyPrior && !r.version.surrogateReady {
		return r.prepareSurrogate()
	}
	return nil
}

// loadVersion loads the weights of version v into the model, rebuilding
// them first when their file is gone.
func (r *runner[O]) loadVersion(v int) error {
	path := filepath.Join(r.opts.Dir, versionFile(v))
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return r.rebuildVersions(v)
	}
	if err := r.vae.Load(path); err != nil {
		return fmt.Errorf("bo: load model version %d: %w", v, err)
	}
	r.version.loaded, r.version.moved = true, true
	return nil
}

// rebuildVersions remakes the weights of the journaled version v when its
// file is gone, as after a run directory was carried to another machine
// with its journal but without its model versions: from the newest earlier
// version still on disk, or from the starting weights, it replays the
// journaled retrainings in order, each on the data its version was made
// from, with the same seed and length, and saves each version again. With
// the same build and thread count the retraining is deterministic, so the
// weights are the ones the run used; when a retraining's losses differ
// from the journal's, the run goes on with the rebuilt weights, saying so.
func (r *runner[O]) rebuildVersions(v int) error {
	from := v - 1
	for ; from >= 0; from-- {
		if _, err := os.Stat(filepath.Join(r.opts.Dir, versionFile(from))); err == nil {
			break
		}
	}
	if from >= 0 {
		if err := r.loadVersion(from); err != nil {
			return err
		}
	} else if r.version.moved {
		return fmt.Errorf("bo: model version %d is gone and the model no longer holds its starting weights to rebuild it from", v)
	}
	for u := from + 1; u <= v; u++ {
		if err := r.rebuildVersion(r.journal.versions[u]); err != nil {
			return fmt.Errorf("bo: rebuild model version %d (%s is gone): %w", u, versionFile(u), err)
		}
	}
	r.version.loaded, r.version.moved = true, true
	return nil
}

// rebuildVersion replays the retraining of one journaled version on the
// model, which holds the previous version's weights, and saves the result.
func (r *runner[O]) rebuildVersion(rec Version) error {
	r.logf("version %d: weights gone; retraining again on the %d points it was made from", rec.Version, rec.Points)
	if rec.Epochs > 0 {
		idx, err := r.acceptedData(rec.Points)
		if err != nil {
			return err
		}
		losses, err := r.retrain(idx, rec.Epochs, rec.Version)
		r.version.moved = true
		if err != nil {
			return err
		}
		if got := finiteMap(losses); !maps.Equal(got, rec.Losses) {
			r.logf("warning: version %d rebuilt with losses %v, the journal has %v: the run goes on with the rebuilt weights, "+
				"which differ from those its queries of this version used (another build or thread count?)", rec.Version, got, rec.Losses)
		}
	}
	return r.saveModel(rec.Version)
}

// featuriseCPU returns the model's featurisation CPU seconds so far
// (FeaturiseCPU; 0 for a model without it).
func (r *runner[O]) featuriseCPU() float64 {
	if f, ok := r.vae.(FeaturiseCPU); ok {
		return f.FeaturiseCPU()
	}
	return 0
}

// retrain retrains the model on the data points idx, weighted by rank
// among them, to make version v.
func (r *runner[O]) retrain(idx []int, epochs float64, v int) (map[string]float64, error) {
	req := RetrainRequest[O]{Epochs: epochs, Seed: deriveSeed(r.cfg.Seed, streamRetrain, uint64(v)), Version: v}
	for _, j := range idx {
		req.Objects = append(req.Objects, r.data.Objects[j])
		req.Scores = append(req.Scores, r.data.Scores[j])
	}
	weights, err := weighting.RankWeights(r.data.utilAt(idx), r.cfg.RankK, true)
	if err != nil {
		return nil, err
	}
	req.Weights = weights
	return r.vae.Retrain(req)
}

// saveModel saves the model as version v: into a temporary directory that
// is then renamed to model-v<v>, so that a kill never leaves a partial
// checkpoint (which may be several files) under the final name.
func (r *runner[O]) saveModel(v int) error {
	final := filepath.Join(r.opts.Dir, versionDir(v))
	tmp := filepath.Join(r.opts.Dir, "."+versionDir(v)+".tmp")
	fail := func(err error) error {
		os.RemoveAll(tmp)
		return fmt.Errorf("bo: save model version %d: %w", v, err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fail(err)
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return fail(err)
	}
	if err := r.vae.Save(filepath.Join(tmp, modelFileName)); err != nil {
		return fail(err)
	}
	// A directory left by a kill before the version was journaled is stale.
	if err := os.RemoveAll(final); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fail(err)
	}
	return nil
}

// samplePrior decodes and scores the version's prior samples.
func (r *runner[O]) samplePrior(rec *Version) error {
	n := r.cfg.SamplesPerModel
	if n == 0 {
		return nil
	}
	start := time.Now()
	d := r.vae.LatentDim()
	rng := newRand(r.cfg.Seed, streamSamples, uint64(rec.Version))
	z := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			z.Set(i, k, rng.NormFloat64())
		}
	}
	objs, valid, err := r.vae.Decode(z, deriveSeed(r.cfg.Seed, streamSamples, uint64(rec.Version)))
	if err != nil {
		return fmt.Errorf("bo: decode prior samples of version %d: %w", rec.Version, err)
	}
	if len(objs) != n || len(valid) != n {
		return fmt.Errorf("bo: model decoded %d rows into %d objects", n, len(objs))
	}
	for i := range objs {
		s := Sample{Valid: valid[i]}
		if valid[i] {
			s.Object = r.task.Key(objs[i])
		}
		var h *Halt
		if s.Score, _, h = r.evaluate(SampleTag(rec.Version, i), objs[i], valid[i]); h != nil {
			// The version is journaled with its samples: a resume makes
			// it again.
			r.halt = h.Err
			return h.Err
		}
		rec.Samples = append(rec.Samples, s)
	}
	rec.SampleSeconds = time.Since(start).Seconds()
	return nil
}

// prepareSurrogate encodes the latent points of the current version: the GP
// subset (BO) or all the training data (random search, whose box they
// span). For BO it replays the GP fits of the version's journaled queries,
// so that the warm-start chain is exactly as it was before a resume.
func (r *runner[O]) prepareSurrogate() error {
	r.progress(StageEncode, nil)
	start, featurised := time.Now(), r.featuriseCPU()
	// The points are those of the data as they were when the version was
	// made, also when queries of the version were replayed from the journal.
	// Objects the model does not accept cannot be encoded and are left out.
	accepted, err := r.acceptedData(r.journal.versions[len(r.journal.versions)-1].Points)
	if err != nil {
		return fmt.Errorf("bo: encode the latent points of version %d: %w", r.version.current, err)
	}
	util := r.data.utilAt(accepted)
	idx := orderBest(util)
	if r.cfg.Strategy == StrategyBO {
		idx = gpSubset(util, r.cfg.NBest, r.cfg.NRand, newRand(r.cfg.Seed, streamSubset, uint64(r.version.current)))
	}
	objs := make([]O, len(idx))
	u := make([]float64, len(idx))
	for i, j := range idx {
		objs[i], u[i] = r.data.Objects[accepted[j]], util[j]
	}
	z, err := r.vae.Encode(objs)
	if err != nil {
		return fmt.Errorf("bo: encode the latent points of version %d: %w", r.version.current, err)
	}
	x, err := rows(z, len(objs), r.vae.LatentDim())
	if err != nil {
		return fmt.Errorf("bo: encode the latent points of version %d: %w", r.version.current, err)
	}
	r.surrogate.reset(x, u)
	r.version.encodeSeconds, r.version.encodeFeaturiseCPU = time.Since(start).Seconds(), r.featuriseCPU()-featurised
	refit := r.cfg.Strategy == StrategyBO
	if last, ok := r.policy.lastFit(); ok && refit && r.restoreWarm(last) {
		refit = false
		r.logf("restored the GP warm start of model v%d's fit at query %d from %s", r.version.current, last+1, GPWarmFile)
	}
	if refit && len(r.journal.queries) > r.version.first {
		r.progress(StageReplay, nil)
	}
	r.policy.replayFits(refit)
	if !refit {
		r.surrogate.restoreKept()
	}
	r.version.surrogateReady = true
	return nil
}

// replayFit replays the journaled GP fit seeded by index start: fitted
// again (refit), or only marked where it was (the warm start of the
// version's last fit was restored); a query or round that kept the GP of an
// earlier fit made none, its points joining the kept GP at the next step.
func (r *runner[O]) replayFit(start int, kept, refit bool) {
	switch {
	case kept:
	case refit:
		r.surrogate.refit(deriveSeed(r.cfg.Seed, streamGPFit, uint64(start)))
		r.journal.replayedFits++
	default:
		r.surrogate.markFit()
	}
}

// addPoint adds an evaluated query's latent point to the version's points:
// every query for BO (the GP learns from failures too), valid ones for
// random search (whose box, as the reference's, grows with the latents of
// the new objects), none for prior sampling.
func (r *runner[O]) addPoint(q Query) {
	switch {
	case r.cfg.Strategy == StrategyBO, r.cfg.Strategy == StrategyRandom && q.Valid:
		r.surrogate.add(q.Z, r.sign*q.Score)
		if r.policy.counts(q) {
			r.surrogate.evaluated++ // for GPRefit's N
		}
	}
}

// rows copies the rows of an n x d matrix, checking its shape and values.
func rows(z *mat.Dense, n, d int) ([][]float64, error) {
	if z == nil {
		return nil, fmt.Errorf("model returned no latent points for %d objects", n)
	}
	if rz, cz := z.Dims(); rz != n || cz != d {
		return nil, fmt.Errorf("model returned %d x %d latent points for %d objects of dimension %d", rz, cz, n, d)
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = mat.Row(nil, i, z)
		for k, v := range out[i] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("latent point %d has %v in dimension %d", i, v, k)
			}
		}
	}
	return out, nil
}
