package task

import (
	"fmt"
	"math"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// model is a task's VAE as the BO loop's retrainable Model: one Trainer
// serves every retraining, so the target-prediction head persists across
// them while Adam restarts for each (as the reference).
type model[O, E any] struct {
	d       *defined[O, E]
	net     models.VAE[E]
	tr      *models.Trainer[E]
	decode  DecodeOptions
	key     func(O) string
	example map[string]E     // examples of the objects seen, by key
	refused map[string]error // why objects were refused as examples, by key
}

// OpenModel loads the pretrained checkpoint req.Path onto env.Device with a
// trainer for req.ELBO. A zero req.Beta takes the final KL weight of the
// checkpoint's training schedule (the task's when it has none).
func (d *defined[O, E]) OpenModel(env *Env, req ModelRequest) (Model, error) {
	if err := d.bind(env); err != nil {
		return nil, err
	}
	net, h, err := models.LoadVAE[E](req.Path, env.Device, d.s.Networks...)
	if err != nil {
		return nil, err
	}
	beta := req.Beta
	if beta == 0 {
		beta = d.s.Defaults.Beta.Final
		if h.Training != nil {
			beta = h.Training.Beta.Final
		}
	}
	tr, err := models.NewTrainer(net, models.TrainOptions{ELBO: req.ELBO, Beta: models.FixedBeta(beta), LR: req.LR,
		BatchSize: req.BatchSize, GradClip: req.GradClip, Device: env.Device, Seed: env.Seed})
	if err != nil {
		net.Close()
		return nil, err
	}
	tr.Augment = d.s.Augment
	obj, err := d.s.Objective(env)
	if err != nil {
		tr.Close()
		net.Close()
		return nil, err
	}
	return &model[O, E]{d: d, net: net, tr: tr, decode: req.Decode, key: obj.Key, example: map[string]E{}, refused: map[string]error{}}, nil
}

func (m *model[O, E]) LatentDim() int { return m.net.LatentDim() }

func (m *model[O, E]) Close() {
	m.tr.Close()
	m.net.Close()
}

// Accept makes obj's example (kept for later use) and returns the error
// that prevented it, if any; a refusal is remembered too, so that an object
// is featurised once whatever the outcome.
func (m *model[O, E]) Accept(obj any) error {
	o, ok := obj.(O)
	if !ok {
		return fmt.Errorf("object is a %T, want %T", obj, o)
	}
	k := m.key(o)
	if _, ok := m.example[k]; ok {
		return nil
	}
	if err, ok := m.refused[k]; ok {
		return err
	}
	e, err := m.d.s.Example(o)
	if err != nil {
		m.refused[k] = err
		return err
	}
	m.example[k] = e
	return nil
}

func (m *model[O, E]) examples(objs []any) ([]E, error) {
	typed, err := fromAny[O](objs)
	if err != nil {
		return nil, err
	}
	return m.d.examples(typed, m.example, m.key)
}

func (m *model[O, E]) Encode(objs []any) ([]float64, error) {
	ex, err := m.examples(objs)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return models.EncodeMeans(m.net, ex)
}

func (m *model[O, E]) Decode(z []float64, seed uint64) ([]any, []bool, error) {
	objs, valid, err := m.d.s.Decode(m.net, z, m.decode, seed)
	if err != nil {
		return nil, nil, err
	}
	return toAny(objs), valid, nil
}

// Retrain trains the network for req.Epochs passes over the objects (a
// fraction gives that share of the steps, at least one), mini-batches drawn
// with replacement in proportion to the weights; libtorch and the sampler
// are seeded from req.Seed.
func (m *model[O, E]) Retrain(req RetrainRequest) (models.Losses, error) {
	ex, err := m.examples(req.Objects)
	if err != nil {
		return models.Losses{}, fmt.Errorf("retrain: %w", err)
	}
	if err := torch.ManualSeed(req.Seed); err != nil {
		return models.Losses{}, fmt.Errorf("retrain: %w", err)
	}
	m.tr.Restart(req.Seed)
	steps := max(1, int(math.Floor(req.Epochs*float64(m.tr.StepsPerEpoch(len(ex))))))
	l, err := m.tr.TrainSteps(models.Data[E]{Examples: ex, Labels: req.Scores, Weights: req.Weights}, steps, nil)
	m.net.SetTraining(false)
	if err != nil {
		return l, fmt.Errorf("retrain: %w", err)
	}
	return l, nil
}

func (m *model[O, E]) Save(path string) error { return m.tr.SaveWeights(path) }
func (m *model[O, E]) Load(path string) error { return m.tr.LoadWeights(path) }
