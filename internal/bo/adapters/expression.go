// Package adapters wires the tasks and the VAEs to the small interfaces of
// package bo (bo.Task and bo.Model), so that bo itself imports neither torch
// nor the model packages.
package adapters

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/task/expression"
	"github.com/tlbo-native/tlbo-native/models"
	gvae "github.com/tlbo-native/tlbo-native/models/expression"
	"github.com/tlbo-native/tlbo-native/models/weighting"
	"github.com/tlbo-native/tlbo-native/torch"
	"gonum.org/v1/gonum/mat"
)

// ExpressionTask is the expression objective as a bo.Task: objects are
// expressions in the data set's spaced text form.
type ExpressionTask struct {
	Objective *expression.Objective
}

// Score returns min(7, log(1 + MSE)) against the target, with the reason
// when the expression fails.
func (t ExpressionTask) Score(text string) (float64, error) { return t.Objective.TryScore(text) }

// FailureScore is the task's failure score, 7.
func (ExpressionTask) FailureScore() float64 { return expression.FailureScore }

// Maximize is false: lower scores are better.
func (ExpressionTask) Maximize() bool { return false }

// Key returns the expression without spaces (tokens are unambiguous
// without them), so that spacing does not make two expressions differ.
func (ExpressionTask) Key(text string) string { return strings.ReplaceAll(text, " ", "") }

// Parse returns the spaced form of a key.
func (ExpressionTask) Parse(key string) (string, error) { return Canonical(key) }

// Canonical returns an expression of the grammar in the spaced form that
// decoding produces.
func Canonical(text string) (string, error) {
	rules, err := expression.Parse(text)
	if err != nil {
		return "", err
	}
	return expression.Decode(rules)
}

// ExpressionOptions configures ExpressionModel's retraining and decoding.
type ExpressionOptions struct {
	// ELBO is the retraining objective.
	ELBO models.ELBO
	// Beta is the KL weight of retraining (the schedule's final value).
	Beta float64
	// LR, BatchSize and GradClip configure Adam and the mini-batches
	// (defaults 1e-3, 256, 20).
	LR        float64
	BatchSize int
	GradClip  float64
	// Attempts is the number of stochastic decodings whose most frequent
	// valid result is kept (default gvae.DefaultAttempts, 20).
	Attempts int
	// Device is where the network runs.
	Device torch.Device
}

// ExpressionModel is the grammar VAE as a bo.Model.
type ExpressionModel struct {
	net  *gvae.Model
	opts ExpressionOptions
	// onehot caches the one-hot matrices of the expressions seen.
	onehot map[string][]float32
}

// NewExpressionModel loads the grammar VAE checkpoint at path onto
// opts.Device. A zero opts.Beta takes the final KL weight of the
// checkpoint's training schedule (the expression schedule's 0.04 when the
// checkpoint has none).
func NewExpressionModel(path string, opts ExpressionOptions) (*ExpressionModel, error) {
	net, h, err := gvae.Load(path, opts.Device)
	if err != nil {
		return nil, err
	}
	if opts.Beta == 0 {
		opts.Beta = models.ExpressionBeta().Final
		if h.Training != nil {
			opts.Beta = h.Training.Beta.Final
		}
	}
	if opts.LR == 0 {
		opts.LR = 1e-3
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = 256
	}
	if opts.GradClip == 0 {
		opts.GradClip = models.DefaultGradClip
	}
	if opts.Attempts == 0 {
		opts.Attempts = gvae.DefaultAttempts
	}
	if err := opts.ELBO.Validate(); err != nil {
		net.Close()
		return nil, err
	}
	return &ExpressionModel{net: net, opts: opts, onehot: map[string][]float32{}}, nil
}

// Close releases the network.
func (m *ExpressionModel) Close() { m.net.Close() }

// LatentDim returns the latent dimension (25).
func (m *ExpressionModel) LatentDim() int { return m.net.LatentDim() }

// oneHots returns the one-hot matrices of texts, one after the other.
func (m *ExpressionModel) oneHots(texts []string) ([]float32, error) {
	out := make([]float32, 0, len(texts)*expression.MaxRules*expression.NumProductions)
	for i, t := range texts {
		x, ok := m.onehot[t]
		if !ok {
			var err error
			if x, err = expression.Encode(t); err != nil {
				return nil, fmt.Errorf("expression %d: %w", i, err)
			}
			m.onehot[t] = x
		}
		out = append(out, x...)
	}
	return out, nil
}

// Encode returns the encoder means of the expressions.
func (m *ExpressionModel) Encode(texts []string) (*mat.Dense, error) {
	x, err := m.oneHots(texts)
	if err != nil {
		return nil, err
	}
	mu, err := m.net.EncodeMeans(x)
	if err != nil {
		return nil, err
	}
	return mat.NewDense(len(texts), m.LatentDim(), mu), nil
}

// Decode decodes each row of z with grammar-masked Gumbel-max sampling
// (Attempts samples, the most frequent valid expression kept), the noise
// drawn from seed.
func (m *ExpressionModel) Decode(z *mat.Dense, seed uint64) ([]string, []bool, error) {
	n, d := z.Dims()
	if d != m.LatentDim() {
		return nil, nil, fmt.Errorf("grammar VAE decode: %d-dimensional latent points, want %d", d, m.LatentDim())
	}
	flat := make([]float64, 0, n*d)
	for i := 0; i < n; i++ {
		flat = append(flat, z.RawRowView(i)...)
	}
	rules, err := m.net.Decode(flat, m.opts.Attempts, rand.New(rand.NewPCG(seed, 0x6465636f6465)))
	if err != nil {
		return nil, nil, err
	}
	texts, valid := make([]string, n), make([]bool, n)
	for i, r := range rules {
		if r == nil {
			continue
		}
		if texts[i], err = expression.Decode(r); err == nil {
			valid[i] = true
		}
	}
	return texts, valid, nil
}

// Retrain trains the network for req.Epochs passes over the objects (a
// fraction gives that share of the steps, at least one), mini-batches drawn
// with replacement in proportion to the rank weights, with the ELBO on the
// labels; libtorch and the sampler are seeded from req.Seed, and Adam
// starts afresh, as the reference's retraining does.
func (m *ExpressionModel) Retrain(req bo.RetrainRequest[string]) error {
	x, err := m.oneHots(req.Objects)
	if err != nil {
		return fmt.Errorf("retrain: %w", err)
	}
	if err := torch.ManualSeed(req.Seed); err != nil {
		return fmt.Errorf("retrain: %w", err)
	}
	tr, err := models.NewTrainer(m.net, models.TrainOptions{
		ELBO: m.opts.ELBO, Beta: models.FixedBeta(m.opts.Beta), LR: m.opts.LR, BatchSize: m.opts.BatchSize,
		GradClip: m.opts.GradClip, Device: m.opts.Device, Seed: req.Seed,
	})
	if err != nil {
		return fmt.Errorf("retrain: %w", err)
	}
	data := models.Data{X: x, Labels: req.Scores, Weights: req.Weights}
	size := len(x) / len(req.Objects)
	n := len(req.Objects)
	bs := min(m.opts.BatchSize, n)
	steps := max(1, int(req.Epochs*float64(n/bs)))
	sampler, err := weighting.NewWeightedSampler(req.Weights, rand.New(rand.NewPCG(req.Seed, 0x7265747261696e)))
	if err != nil {
		return fmt.Errorf("retrain: %w", err)
	}
	if lo, hi, ok := labelRange(req.Scores); ok {
		if err := tr.SetLabelRange(lo, hi); err != nil {
			return fmt.Errorf("retrain: %w", err)
		}
	}
	bx := make([]float32, 0, bs*size)
	by := make([]float64, 0, bs)
	for s := 0; s < steps; s++ {
		bx, by = bx[:0], by[:0]
		for _, i := range sampler.Sample(bs) {
			bx = append(bx, data.X[i*size:(i+1)*size]...)
			by = append(by, data.Labels[i])
		}
		if _, err := tr.TrainBatch(bx, by); err != nil {
			return fmt.Errorf("retrain version %d: %w", req.Version, err)
		}
	}
	m.net.SetTraining(false)
	return nil
}

// labelRange returns the smallest and largest score.
func labelRange(ys []float64) (lo, hi float64, ok bool) {
	for i, y := range ys {
		if i == 0 || y < lo {
			lo = y
		}
		if i == 0 || y > hi {
			hi = y
		}
	}
	return lo, hi, len(ys) > 0
}

// Save writes the network's checkpoint (path and its JSON header).
func (m *ExpressionModel) Save(path string) error { return m.net.Save(path) }

// Load replaces the network by the checkpoint at path.
func (m *ExpressionModel) Load(path string) error {
	net, _, err := gvae.Load(path, m.opts.Device)
	if err != nil {
		return err
	}
	m.net.Close()
	m.net = net
	return nil
}

// ExpressionGrammar returns the expression task's grammar in the form the
// grammar VAE takes.
func ExpressionGrammar() gvae.Grammar {
	s := expression.GrammarSpec()
	return gvae.Grammar{LHS: s.LHS, RHSNonterminals: s.RHSNonterminals, NumNonterminals: s.NumNonterminals,
		Start: s.Start, Padding: s.Padding, Productions: s.Productions}
}
