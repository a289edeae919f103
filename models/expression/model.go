// Package expression is the grammar VAE of the expression task (Kusner et al.
// 2017, as in the T-LBO reference; docs/design.md section 3): a 1-d convolutional
// encoder of the one-hot rule sequence, a GRU decoder, grammar-masked
// teacher-forced reconstruction and grammar-masked Gumbel-max decoding.
//
// The model implements models.VAE on dense examples (one-hot matrices), so
// models.Trainer trains it with any ELBO; it registers its kind with
// models.RegisterNetwork, so models.Load reads its checkpoints.
// It takes the grammar as plain data (Grammar) and knows nothing of the task's
// text; state-dict names follow the reference's PyTorch module, so a
// checkpoint loads into it with Python's torch.load.
//
// Encoding and greedy decoding equal the T-LBO authors' own code on the shipped
// networks (internal/task/expression's TestDecodeMatchesAuthors). Training draws
// z with the posterior's full scale, as T-LBO's PyTorch port does
// (models.Reparameterize); Kusner et al.'s Keras original, and weighted
// retraining's copy of it, scale that noise by 0.01, which leaves the network
// nearly an autoencoder and reconstructing far more (pretrained/README.md).
package expression

import (
	"fmt"
	"math/rand/v2"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
)

// NetworkKind names this network in checkpoint headers.
const NetworkKind = "expression-gvae"

// DefaultAttempts is the number of stochastic decodings whose most frequent
// valid result Decode keeps (the reference's 20).
const DefaultAttempts = 20

// evalBatch bounds the batch of DecodeLogits.
const evalBatch = 4096

// Config is the network's shape; it is stored in checkpoint headers.
type Config struct {
	// MaxLen is the number of rules of a one-hot matrix (15).
	MaxLen int `json:"max_len"`
	// Latent is the latent dimension (25).
	Latent int `json:"latent_dim"`
	// Conv are the channels of the three convolutions, which are also their
	// kernel sizes (2, 3, 4).
	Conv [3]int `json:"conv"`
	// Dense is the width of the encoder's hidden layer (100).
	Dense int `json:"dense"`
	// Hidden is the GRU's hidden size (100) and GRULayers its depth (3).
	Hidden    int `json:"hidden"`
	GRULayers int `json:"gru_layers"`
	// Grammar gives the productions (the one-hot columns) and the masks.
	Grammar Grammar `json:"grammar"`
}

// DefaultConfig returns the reference network for a grammar: 15 rules,
// latent 25, convolutions 2/3/4, dense 100, 3-layer GRU of 100.
func DefaultConfig(g Grammar) Config {
	return Config{MaxLen: 15, Latent: 25, Conv: [3]int{2, 3, 4}, Dense: 100, Hidden: 100, GRULayers: 3, Grammar: g}
}

func (g Grammar) numProductions() int { return len(g.LHS) }

// convOut is the length left after the three valid convolutions.
func (c Config) convOut() int { return c.MaxLen - (c.Conv[0] - 1) - (c.Conv[1] - 1) - (c.Conv[2] - 1) }

// Validate checks the sizes and the grammar.
func (c Config) Validate() error {
	if err := c.Grammar.Validate(); err != nil {
		return fmt.Errorf("grammar VAE config: %w", err)
	}
	for _, k := range c.Conv {
		if k < 1 {
			return fmt.Errorf("grammar VAE config: conv %v: sizes must be >= 1", c.Conv)
		}
	}
	switch {
	case c.MaxLen < 1 || c.convOut() < 1:
		return fmt.Errorf("grammar VAE config: max_len %d too short for convolutions %v", c.MaxLen, c.Conv)
	case c.Latent < 1 || c.Dense < 1 || c.Hidden < 1 || c.GRULayers < 1:
		return fmt.Errorf("grammar VAE config: latent_dim %d, dense %d, hidden %d and gru_layers %d must be >= 1",
			c.Latent, c.Dense, c.Hidden, c.GRULayers)
	}
	return nil
}

// Model is the grammar VAE. It implements models.VAE.
type Model struct {
	nn.Base
	cfg       Config
	enc       *encoder
	dec       *decoder
	ruleMasks []float32
}

// New returns a network with PyTorch's default initialisation from libtorch's
// generator (seed it with torch.ManualSeed), on the CPU.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, enc: newEncoder(cfg), dec: newDecoder(cfg), ruleMasks: cfg.Grammar.ruleMasks()}
	// The reference's prior buffers come first in its state dict.
	m.RegisterBuffer("prior_mu", torch.Zeros([]int64{int64(cfg.Latent)}, torch.Float32, torch.CPU))
	m.RegisterBuffer("prior_sigma", torch.Ones([]int64{int64(cfg.Latent)}, torch.Float32, torch.CPU))
	m.RegisterModule("encoder", m.enc)
	m.RegisterModule("decoder", m.dec)
	if err := m.Err(); err != nil {
		return nil, fmt.Errorf("grammar VAE: %w", err)
	}
	return m, nil
}

// Config returns the network's configuration.
func (m *Model) Config() Config { return m.cfg }

// LatentDim returns the latent dimension.
func (m *Model) LatentDim() int { return m.cfg.Latent }

// InputShape returns [MaxLen, productions], the shape of one example.
func (m *Model) InputShape() []int64 {
	return []int64{int64(m.cfg.MaxLen), int64(m.cfg.Grammar.numProductions())}
}

// Describe returns the network kind and its configuration.
func (m *Model) Describe() (string, any) { return NetworkKind, m.cfg }

// Collate stacks one-hot matrices (T x P values each) into a (B, T, P)
// tensor on the network's device.
func (m *Model) Collate(sc *torch.Scope, examples []models.Dense) (models.Batch, error) {
	return models.CollateDense(sc, examples, m.InputShape(), m.Device())
}

// EncodeParams returns mu and log-std (B, latent) of a batch of one-hot
// matrices.
func (m *Model) EncodeParams(b models.Batch) (mu, logStd *torch.Tensor) {
	return m.enc.forward(b.(models.DenseBatch).X)
}

// Logits returns the decoder's unmasked logits (B, T, P) for z (B, latent).
func (m *Model) Logits(z *torch.Tensor) *torch.Tensor { return m.dec.forward(z) }

// ReconstructionLoss is the grammar-masked teacher-forced reconstruction loss:
// the binary cross-entropy, averaged over every element, between the one-hot
// x and the softmax of the logits restricted at each step to the productions
// of the true rule's left-hand side, times T (as the reference).
func (m *Model) ReconstructionLoss(z *torch.Tensor, b models.Batch) *torch.Tensor {
	x := b.(models.DenseBatch).X
	p := int64(m.cfg.Grammar.numProductions())
	masks := own(x, torch.FromFloat32(m.ruleMasks, p, p)).To(x.Device()).ToDType(x.DType())
	probs := maskedProbs(m.Logits(z), x, masks)
	return torch.BCELoss(probs, x, nil, torch.ReduceMean).MulScalar(float64(m.cfg.MaxLen))
}

// own adopts t into ref's scope when ref has one.
func own(ref, t *torch.Tensor) *torch.Tensor {
	if sc := ref.Scope(); sc != nil {
		return sc.Own(t)
	}
	return t
}

// evaluate runs fn in evaluation mode without gradients, then restores the mode.
func (m *Model) evaluate(fn func() error) error {
	training := m.IsTraining()
	m.SetTraining(false)
	defer m.SetTraining(training)
	var err error
	torch.NoGrad(func() { err = fn() })
	return err
}

// EncodeMeans returns the encoder means (n x latent, row-major) of n one-hot
// matrices x (n x T x P, row-major), in evaluation mode.
func (m *Model) EncodeMeans(x []float32) ([]float64, error) {
	ex, err := models.SplitDense(x, m.cfg.MaxLen*m.cfg.Grammar.numProductions())
	if err != nil || len(ex) == 0 {
		return nil, fmt.Errorf("grammar VAE encode: %d values are not whole %dx%d one-hot matrices", len(x), m.cfg.MaxLen, m.cfg.Grammar.numProductions())
	}
	return models.EncodeMeans[models.Dense](m, ex)
}

// DecodeLogits returns the decoder's logits (n x T x P, row-major) for n
// latent points z (n x latent, row-major), in evaluation mode.
func (m *Model) DecodeLogits(z []float64) ([]float32, error) {
	l := m.cfg.Latent
	if len(z) == 0 || len(z)%l != 0 {
		return nil, fmt.Errorf("grammar VAE decode: %d values are not whole latent points of %d", len(z), l)
	}
	n := len(z) / l
	out := make([]float32, 0, n*m.cfg.MaxLen*m.cfg.Grammar.numProductions())
	err := m.evaluate(func() error {
		for lo := 0; lo < n; lo += evalBatch {
			hi := min(lo+evalBatch, n)
			v, err := m.logitsBatch(z[lo*l : hi*l])
			if err != nil {
				return err
			}
			out = append(out, v...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("grammar VAE decode: %w", err)
	}
	return out, nil
}

func (m *Model) logitsBatch(z []float64) ([]float32, error) {
	sc := torch.NewScope()
	defer sc.Close()
	zt := sc.Own(torch.FromFloat64(z, int64(len(z)/m.cfg.Latent), int64(m.cfg.Latent))).To(m.Device()).ToDType(torch.Float32)
	return m.Logits(zt).Float32s()
}

// Decode decodes n latent points z (n x latent, row-major) into rule
// sequences (production indices, padding dropped): the decoder's logits are
// sampled attempts times with grammar-masked Gumbel-max and the most frequent
// valid derivation is kept (ties: the one found first), nil when no attempt
// finished within MaxLen rules. attempts = 0 decodes once greedily (the
// largest allowed logit at each step, no randomness); rng may then be nil.
func (m *Model) Decode(z []float64, attempts int, rng *rand.Rand) ([][]int, error) {
	if attempts < 0 || (attempts > 0 && rng == nil) {
		return nil, fmt.Errorf("grammar VAE decode: %d attempts (with rng %v): want 0, or > 0 with an rng", attempts, rng != nil)
	}
	logits, err := m.DecodeLogits(z)
	if err != nil {
		return nil, err
	}
	size := m.cfg.MaxLen * m.cfg.Grammar.numProductions()
	out := make([][]int, len(logits)/size)
	for i := range out {
		out[i] = m.decodeOne(logits[i*size:(i+1)*size], attempts, rng)
	}
	return out, nil
}

func (m *Model) decodeOne(logits []float32, attempts int, rng *rand.Rand) []int {
	g := m.cfg.Grammar
	if attempts == 0 {
		if rules, ok := g.sample(logits, m.cfg.MaxLen, nil); ok {
			return rules
		}
		return nil
	}
	type seen struct {
		rules []int
		count int
	}
	var found []seen
	for range attempts {
		rules, ok := g.sample(logits, m.cfg.MaxLen, rng)
		if !ok {
			continue
		}
		key := fmt.Sprint(rules)
		i := 0
		for i < len(found) && fmt.Sprint(found[i].rules) != key {
			i++
		}
		if i == len(found) {
			found = append(found, seen{rules: rules})
		}
		found[i].count++
	}
	best := -1
	for i, f := range found {
		if best < 0 || f.count > found[best].count {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	return found[best].rules
}

func init() { models.RegisterConfig(NetworkKind, New) }

// Load reads a grammar-VAE checkpoint (written by SaveNetwork or by a
// trainer) onto dev and returns the network and the checkpoint's header. A
// checkpoint of another network, or one whose tensors do not fit the
// configuration, is an error naming the file.
func Load(path string, dev torch.Device) (*Model, models.Header, error) {
	return models.LoadNetwork[*Model](path, dev, NetworkKind)
}
