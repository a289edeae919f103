package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	conv "github.com/tlbo-native/tlbo-native/models/topology"
	"github.com/tlbo-native/tlbo-native/torch"
)

// RecoveryThreshold is the paper's similarity above which a decoding counts
// as the target in the domain-recovery experiment.
const RecoveryThreshold = 0.8

// Run configuration fields written by Objective.Describe.
const (
	fieldTarget    = "target"
	fieldTargetKey = "target-key"
)

// targetTask is the topology task with the domain-recovery hooks
// (task.TargetTask).
type targetTask struct {
	*task.Defined[Design, models.Dense]
}

// Recovery: a decoding draws every pixel from the decoder's Bernoulli
// probabilities (its sigmoid outputs); the similarity is the objective's.
func (targetTask) Recovery() task.Recovery {
	return task.Recovery{Threshold: RecoveryThreshold, Similarity: "cosine similarity with the target design",
		Decoding: "every pixel drawn from Bernoulli(sigmoid(decoder logit)), the decoder's distribution (its rounding is the task's decode)",
		Mode:     "every pixel rounded (set where sigmoid(decoder logit) > 0.5), the task's decode"}
}

// OpenTargetModel loads a conv-VAE checkpoint with the target design of a
// run's configuration (field target-key).
func (targetTask) OpenTargetModel(env *task.Env, checkpoint string, run map[string]string) (task.TargetModel, error) {
	key, ok := run[fieldTargetKey]
	if !ok {
		return nil, fmt.Errorf("no field %s (the target design): not a run of the topology task", fieldTargetKey)
	}
	tg, err := ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", fieldTargetKey, err)
	}
	if !slices.Contains(tg, 1) {
		return nil, fmt.Errorf("field %s: the target design is empty", fieldTargetKey)
	}
	net, _, err := conv.Load(checkpoint, env.Device)
	if err != nil {
		return nil, err
	}
	desc := run[fieldTarget]
	if desc == "" {
		desc = "the design of field " + fieldTargetKey
	}
	return &targetModel{net: net, target: tg, desc: desc}, nil
}

// targetModel is a conv VAE with the target design.
type targetModel struct {
	net    *conv.Model
	target Design
	desc   string
}

func (m *targetModel) LatentDim() int { return m.net.LatentDim() }
func (m *targetModel) Target() string { return m.desc }
func (m *targetModel) Close()         { m.net.Close() }

// Posterior encodes the target in evaluation mode: mean and exp(log-std).
func (m *targetModel) Posterior() (mu, std []float64, err error) {
	x, err := example(m.target)
	if err != nil {
		return nil, nil, err
	}
	training := m.net.IsTraining()
	m.net.SetTraining(false)
	defer m.net.SetTraining(training)
	torch.NoGrad(func() {
		sc := torch.NewScope()
		defer sc.Close()
		var b models.Batch
		if b, err = m.net.Collate(sc, []models.Dense{x}); err != nil {
			return
		}
		mt, logStd := m.net.EncodeParams(b)
		if mu, err = sc.Own(mt).Float64s(); err != nil {
			return
		}
		std, err = sc.Own(sc.Own(logStd).Exp()).Float64s()
	})
	if err != nil {
		return nil, nil, fmt.Errorf("encode the target: %w", err)
	}
	return mu, std, nil
}

// Similarities draws n designs per latent point, pixel j set with
// probability p_j (the decoder's sigmoid output), from the PCG stream
// (seed, i) of point i, and returns their similarities with the target.
func (m *targetModel) Similarities(z []float64, n int, seed uint64) ([]float64, error) {
	if n < 1 {
		return nil, fmt.Errorf("topology recovery: %d decodings per point, want >= 1", n)
	}
	probs, err := m.net.DecodeProbs(z)
	if err != nil {
		return nil, err
	}
	points := len(probs) / Pixels
	out := make([]float64, 0, points*n)
	d := make(Design, Pixels)
	for i := range points {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		p := probs[i*Pixels : (i+1)*Pixels]
		for range n {
			sampleDesign(d, p, rng)
			out = append(out, Similarity(d, m.target))
		}
	}
	return out, nil
}

// ModeSimilarities decodes each latent point as the task does (rounded
// probabilities) and returns the similarities with the target.
func (m *targetModel) ModeSimilarities(z []float64) ([]float64, error) {
	designs, err := m.net.Decode(z)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(designs))
	for i, d := range designs {
		out[i] = Similarity(d, m.target)
	}
	return out, nil
}

// sampleDesign fills d with one draw of independent Bernoulli pixels of
// probabilities p: pixel j is 1 when a uniform draw is below p_j.
func sampleDesign(d Design, p []float32, rng *rand.Rand) {
	for j, pj := range p {
		d[j] = 0
		if rng.Float64() < float64(pj) {
			d[j] = 1
		}
	}
}

var _ task.TargetTask = targetTask{}
