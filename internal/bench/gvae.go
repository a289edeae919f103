// Package bench holds the networks and loops that `tlbo-native bench` times,
// so that the timed code is library code with tests, not command wiring.
package bench

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
	"github.com/tlbo-native/tlbo-native/torch/optim"
)

// GVAE step shape: the expression grammar VAE of DESIGN.md section 3.
const (
	gvaeBatch   = 256
	gvaeSeqLen  = 15
	gvaeRules   = 12
	gvaeLatent  = 25
	gvaeHidden  = 100
	gvaeLayers  = 3
	gvaeFlatten = 4 * (gvaeSeqLen - 1 - 2 - 3)
)

// gvaeNet is a network shaped like the expression grammar VAE: Conv1d+BatchNorm
// encoder to a 25-d latent, 3-layer GRU decoder with hidden 100.
type gvaeNet struct {
	nn.Base
	encoder    *nn.Sequential
	mu, logStd *nn.Linear
	decoderIn  *nn.Sequential
	gru        *nn.GRU
	out        *nn.Linear
}

func newGVAENet() *gvaeNet {
	n := &gvaeNet{
		encoder: nn.NewSequential(
			nn.NewConv1d(gvaeRules, 2, 2), nn.ReLU(), nn.NewBatchNorm(2),
			nn.NewConv1d(2, 3, 3), nn.ReLU(), nn.NewBatchNorm(3),
			nn.NewConv1d(3, 4, 4), nn.ReLU(), nn.NewBatchNorm(4),
			nn.NewFunc(func(x *torch.Tensor) *torch.Tensor { return x.Flatten(1, -1) }),
			nn.NewLinear(gvaeFlatten, 100), nn.ReLU()),
		mu:        nn.NewLinear(100, gvaeLatent),
		logStd:    nn.NewLinear(100, gvaeLatent),
		decoderIn: nn.NewSequential(nn.NewBatchNorm(gvaeLatent), nn.NewLinear(gvaeLatent, gvaeLatent), nn.ReLU()),
		gru:       nn.NewGRU(gvaeLatent, gvaeHidden, gvaeLayers, true),
		out:       nn.NewLinear(gvaeHidden, gvaeRules),
	}
	n.RegisterModule("encoder", n.encoder)
	n.RegisterModule("mu", n.mu)
	n.RegisterModule("log_std", n.logStd)
	n.RegisterModule("decoder_in", n.decoderIn)
	n.RegisterModule("gru", n.gru)
	n.RegisterModule("out", n.out)
	return n
}

// loss returns reconstruction cross-entropy plus KL for one-hot x (B, 15, 12)
// and its int64 rule indices (B, 15).
func (n *gvaeNet) loss(x, target *torch.Tensor) *torch.Tensor {
	h := n.encoder.Forward(x.Transpose(1, 2))
	mu, s := n.mu.Forward(h), n.logStd.Forward(h)
	z := mu.Add(s.Exp().Mul(mu.RandnLike()))
	d := n.decoderIn.Forward(z).Unsqueeze(1).Repeat(1, gvaeSeqLen, 1)
	out, _ := n.gru.Forward(d, nil)
	logits := n.out.Forward(out)
	rec := torch.CrossEntropyLoss(logits.Reshape(-1, gvaeRules), target.Reshape(-1), torch.ReduceMean)
	kl := s.MulScalar(2).Exp().Add(mu.Square()).AddScalar(-1).Sub(s.MulScalar(2)).Sum().MulScalar(0.5 / gvaeBatch)
	return rec.Add(kl.MulScalar(0.04))
}

// GVAEStepOptions configure the grammar-VAE training-step benchmark.
type GVAEStepOptions struct {
	Device torch.Device
	Steps  int // timed steps (after 3 warm-up steps)
	Seed   uint64
}

// GVAEStep times training steps (forward, backward, Adam) of a network shaped
// like the expression grammar VAE on random one-hot batches of 256 x 15 x 12 and
// returns the duration of every timed step.
func GVAEStep(opts GVAEStepOptions) ([]time.Duration, error) {
	if opts.Steps < 1 {
		return nil, fmt.Errorf("bench gvae-step: steps must be at least 1, got %d", opts.Steps)
	}
	if err := torch.ManualSeed(opts.Seed); err != nil {
		return nil, err
	}
	net := newGVAENet()
	defer net.Close()
	if err := net.Err(); err != nil {
		return nil, fmt.Errorf("bench gvae-step: %w", err)
	}
	if err := net.To(opts.Device); err != nil {
		return nil, err
	}
	adam := newAdam(net)
	x, target := randomOneHot(newRNG(opts.Seed))
	xd, td := x.To(opts.Device), target.To(opts.Device)
	defer func() { x.Close(); target.Close(); xd.Close(); td.Close() }()
	times, err := Repeat(opts.Steps, 3, func() error {
		if err := gvaeTrainStep(net, adam, xd, td); err != nil {
			return err
		}
		return torch.Synchronize()
	})
	if err != nil {
		return nil, fmt.Errorf("bench gvae-step: %w", err)
	}
	return times, nil
}

func gvaeTrainStep(net *gvaeNet, adam *optim.Adam, x, target *torch.Tensor) error {
	sc := torch.NewScope()
	defer sc.Close()
	if err := adam.ZeroGrad(); err != nil {
		return err
	}
	loss := net.loss(sc.Own(x.Detach()), target)
	if err := loss.Backward(); err != nil {
		return err
	}
	return adam.Step()
}

func newAdam(net *gvaeNet) *optim.Adam {
	return optim.NewAdam(net.Parameters(), optim.DefaultAdam(1e-3))
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

// randomOneHot returns a random batch of one-hot rule matrices and their indices.
func randomOneHot(rng *rand.Rand) (*torch.Tensor, *torch.Tensor) {
	onehot := make([]float32, gvaeBatch*gvaeSeqLen*gvaeRules)
	idx := make([]int64, gvaeBatch*gvaeSeqLen)
	for i := range idx {
		idx[i] = int64(rng.IntN(gvaeRules))
		onehot[i*gvaeRules+int(idx[i])] = 1
	}
	return torch.FromFloat32(onehot, gvaeBatch, gvaeSeqLen, gvaeRules), torch.FromInt64(idx, gvaeBatch, gvaeSeqLen)
}
