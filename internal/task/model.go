package task

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// Model is a task's VAE as the BO loop's retrainable model (bo.Model[O]):
// objects in, latent points out, and back. One Trainer serves every
// retraining, so the target-prediction head persists across them while Adam
// restarts for each (as the reference).
type Model[O, E any] struct {
	d       *Defined[O, E]
	net     models.VAE[E]
	tr      *models.Trainer[E]
	decode  DecodeOptions
	key     func(O) string
	example map[string]E     // examples of the objects seen, by key
	refused map[string]error // why objects were refused as examples, by key
	// ctx is the verb's (Env.Ctx): when it ends, a retraining that
	// materialises its mini-batches stops at the next one.
	ctx context.Context
}

var (
	_ bo.Model[string]    = (*Model[string, models.Dense])(nil)
	_ bo.PointwiseDecoder = (*Model[string, models.Dense])(nil)
)

// OpenModel loads the pretrained checkpoint req.Path onto env.Device (bound,
// see Spec.Bind) with a trainer for req.ELBO. A zero req.Beta takes the
// task's retraining KL weight (retrainBeta).
func (d *Defined[O, E]) OpenModel(env *Env, req ModelRequest) (*Model[O, E], error) {
	obj, err := d.s.Objective(env)
	if err != nil {
		return nil, err
	}
	return d.openModel(env, req, obj)
}

// openModel is OpenModel with the task's objective, whose keys identify the
// objects whose examples the model keeps.
func (d *Defined[O, E]) openModel(env *Env, req ModelRequest, obj Objective[O]) (*Model[O, E], error) {
	net, h, err := d.loadNetwork(env, req.Path)
	if err != nil {
		return nil, err
	}
	beta := req.Beta
	if beta == 0 {
		beta = d.retrainBeta(h)
	}
	tr, err := models.NewTrainer(net, models.TrainOptions{ELBO: req.ELBO, Beta: models.FixedBeta(beta), LR: req.LR,
		BatchSize: req.BatchSize, GradClip: req.GradClip, Device: env.Device, Seed: env.Seed})
	if err != nil {
		net.Close()
		return nil, err
	}
	tr.Augment = d.s.Augment
	return &Model[O, E]{d: d, net: net, tr: tr, decode: req.Decode, key: obj.Key, example: map[string]E{}, refused: map[string]error{},
		ctx: env.Context()}, nil
}

// retrainBeta is the KL weight of retraining a network with header h: the
// task's Defaults.RetrainBeta when it fixes one, else the weight the
// network's training ended at (so that retraining continues the ELBO it
// was trained on), else the final weight of the task's schedule.
func (d *Defined[O, E]) retrainBeta(h models.Header) float64 {
	switch {
	case d.s.Defaults.RetrainBeta > 0:
		return d.s.Defaults.RetrainBeta
	case h.Training != nil:
		return h.Training.LastBeta()
	}
	return d.s.Defaults.Beta.Final
}

// LatentDim is the size of the latent points.
func (m *Model[O, E]) LatentDim() int { return m.net.LatentDim() }

// Close releases the network and its trainer.
func (m *Model[O, E]) Close() {
	m.tr.Close()
	m.net.Close()
}

// Accept makes obj's example (kept for later use) and returns the error
// that prevented it, if any; a refusal is remembered too, so that an object
// is featurised once whatever the outcome.
func (m *Model[O, E]) Accept(obj O) error {
	k := m.key(obj)
	if _, ok := m.example[k]; ok {
		return nil
	}
	if err, ok := m.refused[k]; ok {
		return err
	}
	e, err := m.d.s.Example(obj)
	if err != nil {
		m.refused[k] = err
		return err
	}
	m.example[k] = e
	return nil
}

// Encode returns the encoder means of objs, one row per object.
func (m *Model[O, E]) Encode(objs []O) (*mat.Dense, error) {
	ex, err := m.d.examples(objs, m.example, m.key)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	mu, err := m.encodeMeans(ex)
	if err != nil {
		return nil, err
	}
	return mat.NewDense(len(objs), m.net.LatentDim(), mu), nil
}

// encodeMeans returns the encoder means of ex, each example materialised
// first: for the encoder alone where the task can (Spec.MaterialiseEncoder),
// else whole (Spec.Materialise). A stop (the verb's context ended) gives up
// an encoding under way at its next chunk: the GP's 10,000 molecules take
// tens of CPU seconds, more when featurised on demand. The first chunk is
// always encoded, so a stopped run can still encode a few objects.
func (m *Model[O, E]) encodeMeans(ex []E) ([]float64, error) {
	materialise := m.d.materialise
	if m.d.s.MaterialiseEncoder != nil {
		materialise = m.d.s.MaterialiseEncoder
	}
	return models.EncodeMeansIn(m.net, ex, func(first int, chunk []E) ([]E, error) {
		if first > 0 && m.ctx.Err() != nil {
			return nil, fmt.Errorf("stopped after %d of %d objects: %w", first, len(ex), context.Cause(m.ctx))
		}
		return materialise(chunk)
	})
}

// Decode decodes the rows of z with the model's decoding options;
// stochastic decoding depends only on seed.
func (m *Model[O, E]) Decode(z *mat.Dense, seed uint64) ([]O, []bool, error) {
	n, d := z.Dims()
	flat := make([]float64, 0, n*d)
	for i := range n {
		flat = append(flat, z.RawRowView(i)...)
	}
	return m.d.s.Decode(m.net, flat, m.decode, seed)
}

// DecodeWidth is the task's decode width under the model's decoding
// options (bo.PointwiseDecoder); 0 when the task has none.
func (m *Model[O, E]) DecodeWidth() int {
	if m.d.s.DecodeWidth == nil {
		return 0
	}
	return m.d.s.DecodeWidth(m.decode)
}

// Retrain trains the network for req.Epochs passes over the objects (a
// fraction gives that share of the steps, at least one), mini-batches drawn
// with replacement in proportion to the weights; libtorch and the sampler
// are seeded from req.Seed. It returns the mean losses (total, rec, kl,
// pred, metric) and the KL weight (beta).
func (m *Model[O, E]) Retrain(req bo.RetrainRequest[O]) (map[string]float64, error) {
	ex, err := m.d.examples(req.Objects, m.example, m.key)
	if err != nil {
		return nil, fmt.Errorf("retrain: %w", err)
	}
	if err := torch.ManualSeed(req.Seed); err != nil {
		return nil, fmt.Errorf("retrain: %w", err)
	}
	m.tr.Restart(req.Seed)
	steps := max(1, int(math.Floor(req.Epochs*float64(m.tr.StepsPerEpoch(len(ex))))))
	data := models.Data[E]{Examples: ex, Labels: req.Scores, Weights: req.Weights}
	if m.d.s.Materialise != nil {
		// Only the examples drawn into a mini-batch are made, as they are
		// drawn; making them draws nothing from the sampler, so the batches
		// are those of examples made beforehand.
		stop, err := m.prefetchSteps(data, steps)
		if err != nil {
			return nil, fmt.Errorf("retrain: %w", err)
		}
		defer stop()
	}
	// A stop (SIGINT, SIGTERM) ends the retraining at the next mini-batch
	// rather than after its last one (minutes of featurisation for a
	// molecule run); the version is not made, and a resume retrains it from
	// the start.
	var merr error
	defer func(aug models.Augment[E]) { m.tr.Augment = aug }(m.tr.Augment)
	m.tr.Augment = gateBatch(m.ctx, m.d.s.Materialise, m.tr.Augment, &merr)
	l, err := m.tr.TrainSteps(data, steps, nil)
	m.net.SetTraining(false)
	if merr != nil {
		err = merr
	}
	if err != nil {
		return nil, fmt.Errorf("retrain: %w", err)
	}
	return map[string]float64{"total": l.Total, "rec": l.Rec, "kl": l.KL, "pred": l.Pred, "metric": l.Metric, "beta": l.Beta}, nil
}

// prefetchSteps hands the mini-batches that the next steps over data will
// draw to Spec.Prefetch and returns its stop. An Augment draws from the
// sampler's generator, so with one the batches are not known ahead and
// nothing is prefetched.
func (m *Model[O, E]) prefetchSteps(data models.Data[E], steps int) (stop func(), err error) {
	if m.d.s.Prefetch == nil || m.d.s.Augment != nil {
		return func() {}, nil
	}
	plan, err := m.tr.PlanSteps(data, steps)
	if err != nil {
		return nil, err
	}
	batches := make([][]E, len(plan))
	for i, rows := range plan {
		batches[i] = make([]E, len(rows))
		for k, j := range rows {
			batches[i][k] = data.Examples[j]
		}
	}
	return m.d.s.Prefetch(batches), nil
}

// gateBatch returns the retraining Augment that checks ctx before each
// mini-batch, then completes it with mat (if any) and aug (if any). When
// ctx has ended or mat fails, it keeps the error in *failed and returns an
// empty batch, which the trainer refuses, ending the retraining.
func gateBatch[E any](ctx context.Context, mat func([]E) ([]E, error), aug models.Augment[E], failed *error) models.Augment[E] {
	return func(batch []E, rng *rand.Rand) []E {
		if *failed != nil {
			return nil
		}
		if ctx.Err() != nil {
			*failed = fmt.Errorf("stopped: %w", context.Cause(ctx))
			return nil
		}
		if mat != nil {
			var err error
			if batch, err = mat(batch); err != nil {
				*failed = err
				return nil
			}
		}
		if aug != nil {
			batch = aug(batch, rng)
		}
		return batch
	}
}

// FeaturiseCPU returns the CPU seconds of the task's featurisation on
// demand so far (Spec.FeaturiseCPU; 0 without one): bo.FeaturiseCPU.
func (m *Model[O, E]) FeaturiseCPU() float64 {
	if m.d.s.FeaturiseCPU == nil {
		return 0
	}
	return m.d.s.FeaturiseCPU()
}

// Save writes the model's weights (VAE and target predictor).
func (m *Model[O, E]) Save(path string) error { return m.tr.SaveWeights(path) }

// Load reads weights written by Save.
func (m *Model[O, E]) Load(path string) error { return m.tr.LoadWeights(path) }
