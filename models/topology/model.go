// Package topology is the convolutional VAE of the topology task (docs/design.md
// section 3; the authors' TopologyVAE): 40x40 single-channel designs, a
// strided-convolution encoder to 2*latent outputs (first half the mean,
// second half the log standard deviation) and a transposed-convolution
// decoder to logits. The reconstruction loss is the mean squared error
// between the design and the sigmoid of the logits; a decoded design is the
// sigmoid rounded to {0, 1}.
//
// Both halves are the authors' nn.Sequential modules, so the state-dict names
// are theirs (encoder.0.weight ... encoder.20.bias, decoder.0.weight ...
// decoder.20.bias, batch-norm statistics included) and a checkpoint of their
// code loads after dropping the BaseVAE buffers prior_mu and prior_sigma,
// which this network does not hold. The model implements models.VAE on dense
// examples, so models.Trainer trains it with every ELBO, and it registers its
// kind with models.RegisterNetwork so that models.Load reads its checkpoints.
package topology

import (
	"fmt"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
)

// NetworkKind names this network in checkpoint headers.
const NetworkKind = "topology-conv"

// Size is the side of a design in pixels; the layer sizes (3200 = 128 x 5 x 5
// after three stride-2 convolutions) fix it.
const Size = 40

// Pixels is the number of values of one example.
const Pixels = Size * Size

// DefaultLatent is the paper's latent dimension; 2 serves latent maps.
const DefaultLatent = 20

// leakySlope is nn.LeakyReLU's default negative slope, which the authors use.
const leakySlope = 0.01

// Widths of the bottleneck: 128 channels of 5x5, flattened to 3200 values.
const (
	bottleneckChannels = 128
	bottleneckSide     = Size / 8
	flatSize           = bottleneckChannels * bottleneckSide * bottleneckSide
)

// AuthorsDenseWidth is the width of the authors' dense layers between the
// flattened bottleneck and the latent space, on both sides. Their two
// 3200 x 800 matrices hold 5.12 of the network's 5.76 million parameters.
const AuthorsDenseWidth = 800

// evalBatch bounds the batches of DecodeProbs.
const evalBatch = 4096

// Config is the network's shape; it is stored in checkpoint headers.
type Config struct {
	// Latent is the latent dimension (20; 2 for a latent map).
	Latent int `json:"latent_dim"`
	// DenseWidth is the width of the dense layer on each side of the latent
	// space (0, as in headers written before it could be set: the authors'
	// 800). A narrower one makes a much smaller network with the same
	// convolutions.
	DenseWidth int `json:"dense_width,omitempty"`
}

// DefaultConfig returns the paper's network: latent 20, dense width 800.
func DefaultConfig() Config { return Config{Latent: DefaultLatent, DenseWidth: AuthorsDenseWidth} }

// Validate checks the sizes.
func (c Config) Validate() error {
	if c.Latent < 1 {
		return fmt.Errorf("topology VAE config: latent_dim %d, want >= 1", c.Latent)
	}
	if c.DenseWidth < 0 {
		return fmt.Errorf("topology VAE config: dense_width %d, want >= 1 (0: the authors' %d)", c.DenseWidth, AuthorsDenseWidth)
	}
	return nil
}

// Width returns the dense layers' width: DenseWidth, or the authors' 800
// when it is 0.
func (c Config) Width() int {
	if c.DenseWidth == 0 {
		return AuthorsDenseWidth
	}
	return c.DenseWidth
}

// Model is the conv VAE. It implements models.VAE[models.Dense].
type Model struct {
	nn.Base
	cfg     Config
	encoder *nn.Sequential
	decoder *nn.Sequential
}

func lrelu() nn.Layer { return nn.LeakyReLU(leakySlope) }

func conv(in, out, stride int64) nn.Layer { return nn.NewConv2d(in, out, 3, stride, 1) }

func deconv(in, out, stride int64) nn.Layer {
	return nn.NewConvTranspose2d(in, out, 3, stride, 1, stride-1)
}

func bn(n int64) nn.Layer { return nn.NewBatchNorm(n) }

// newEncoder is the authors' _build_encoder: the indices of the layers are
// the state-dict names.
func newEncoder(latent, width int) *nn.Sequential {
	w := int64(width)
	return nn.NewSequential(
		conv(1, 16, 1), lrelu(), // 0, 1
		conv(16, 32, 2), bn(32), lrelu(), // 2, 3, 4
		conv(32, 32, 1), lrelu(), // 5, 6
		conv(32, 64, 2), bn(64), lrelu(), // 7, 8, 9
		conv(64, 64, 1), lrelu(), // 10, 11
		conv(64, 128, 2), bn(128), lrelu(), // 12, 13, 14
		conv(128, 128, 1), lrelu(), // 15, 16
		nn.NewFunc(func(x *torch.Tensor) *torch.Tensor { return x.Flatten(1, -1) }), // 17
		nn.NewLinear(flatSize, w), lrelu(), // 18, 19
		nn.NewLinear(w, int64(2*latent)), // 20
	)
}

// newDecoder is the authors' _build_decoder (logits out, no sigmoid).
func newDecoder(latent, width int) *nn.Sequential {
	w := int64(width)
	return nn.NewSequential(
		nn.NewLinear(int64(latent), w), lrelu(), // 0, 1
		nn.NewLinear(w, flatSize), lrelu(), // 2, 3
		nn.NewFunc(func(x *torch.Tensor) *torch.Tensor { // 4: UnFlatten(128, 5)
			return x.Reshape(-1, bottleneckChannels, bottleneckSide, bottleneckSide)
		}),
		deconv(128, 128, 1), lrelu(), // 5, 6
		deconv(128, 64, 2), bn(64), lrelu(), // 7, 8, 9
		deconv(64, 64, 1), lrelu(), // 10, 11
		deconv(64, 32, 2), bn(32), lrelu(), // 12, 13, 14
		deconv(32, 32, 1), lrelu(), // 15, 16
		deconv(32, 16, 2), bn(16), lrelu(), // 17, 18, 19
		deconv(16, 1, 1), lrelu(), // 20, 21
	)
}

// New returns a network with PyTorch's default initialisation from libtorch's
// generator (seed it with torch.ManualSeed), on the CPU.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, encoder: newEncoder(cfg.Latent, cfg.Width()), decoder: newDecoder(cfg.Latent, cfg.Width())}
	m.RegisterModule("encoder", m.encoder)
	m.RegisterModule("decoder", m.decoder)
	if err := m.Err(); err != nil {
		m.Close()
		return nil, fmt.Errorf("topology VAE: %w", err)
	}
	return m, nil
}

// Config returns the network's configuration.
func (m *Model) Config() Config { return m.cfg }

// LatentDim returns the latent dimension.
func (m *Model) LatentDim() int { return m.cfg.Latent }

// Describe returns the network kind and its configuration.
func (m *Model) Describe() (string, any) { return NetworkKind, m.cfg }

// inputShape is the shape of one example: one channel of Size x Size.
var inputShape = []int64{1, Size, Size}

// Collate stacks designs (Pixels values each, row-major, row 0 at the top)
// into a (B, 1, 40, 40) tensor on the network's device.
func (m *Model) Collate(sc *torch.Scope, examples []models.Dense) (models.Batch, error) {
	return models.CollateDense(sc, examples, inputShape, m.Device())
}

// EncodeParams returns mu and log-std (B, latent) of a batch of designs.
func (m *Model) EncodeParams(b models.Batch) (mu, logStd *torch.Tensor) {
	h := m.encoder.Forward(b.(models.DenseBatch).X)
	l := int64(m.cfg.Latent)
	return h.Narrow(1, 0, l), h.Narrow(1, l, l)
}

// Logits returns the decoder's logits (B, 1, 40, 40) for z (B, latent).
func (m *Model) Logits(z *torch.Tensor) *torch.Tensor { return m.decoder.Forward(z) }

// ReconstructionLoss is the authors' MSE loss: the mean over every pixel of
// the batch of (x - sigmoid(logits))^2.
func (m *Model) ReconstructionLoss(z *torch.Tensor, b models.Batch) *torch.Tensor {
	x := b.(models.DenseBatch).X
	return torch.MSELoss(m.Logits(z).Sigmoid(), x, torch.ReduceMean)
}

// DecodeProbs returns the sigmoid of the decoder's logits (n x Pixels,
// row-major) for n latent points z (n x latent, row-major), in evaluation
// mode without gradients.
func (m *Model) DecodeProbs(z []float64) ([]float32, error) {
	l := m.cfg.Latent
	if len(z) == 0 || len(z)%l != 0 {
		return nil, fmt.Errorf("topology VAE decode: %d values are not whole latent points of %d", len(z), l)
	}
	n := len(z) / l
	out := make([]float32, 0, n*Pixels)
	training := m.IsTraining()
	m.SetTraining(false)
	defer m.SetTraining(training)
	var err error
	torch.NoGrad(func() {
		for lo := 0; lo < n && err == nil; lo += evalBatch {
			var p []float32
			p, err = m.probsBatch(z[lo*l : min(lo+evalBatch, n)*l])
			out = append(out, p...)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("topology VAE decode: %w", err)
	}
	return out, nil
}

func (m *Model) probsBatch(z []float64) ([]float32, error) {
	sc := torch.NewScope()
	defer sc.Close()
	l := int64(m.cfg.Latent)
	zt := sc.Own(torch.FromFloat64(z, int64(len(z))/l, l)).To(m.Device()).ToDType(torch.Float32)
	return m.Logits(zt).Sigmoid().Float32s()
}

// Decode returns the designs (Pixels values of 0 or 1 each, row 0 at the
// top) decoded from n latent points: the sigmoid of the logits rounded,
// i.e. 1 where it exceeds 0.5.
func (m *Model) Decode(z []float64) ([][]uint8, error) {
	p, err := m.DecodeProbs(z)
	if err != nil {
		return nil, err
	}
	out := make([][]uint8, len(p)/Pixels)
	for i := range out {
		d := make([]uint8, Pixels)
		for j, v := range p[i*Pixels : (i+1)*Pixels] {
			if v > 0.5 {
				d[j] = 1
			}
		}
		out[i] = d
	}
	return out, nil
}

func init() { models.RegisterConfig(NetworkKind, New) }

// Load reads a topology-VAE checkpoint (written by SaveNetwork or by a
// trainer) onto dev and returns the network and the checkpoint's header.
func Load(path string, dev torch.Device) (*Model, models.Header, error) {
	return models.LoadNetwork[*Model](path, dev, NetworkKind)
}
