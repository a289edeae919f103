package expression

import (
	"math"

	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
)

// Batch-norm settings of the reference grammar VAE (ported from Keras).
const (
	bnMomentum = 0.01
	bnEps      = 1e-3
)

func batchNorm(n int) *nn.BatchNorm {
	b := nn.NewBatchNorm(int64(n))
	b.Momentum, b.Eps = bnMomentum, bnEps
	return b
}

// encoder is Conv1d(P->c1, k=c1) ReLU BN; Conv1d(c1->c2, k=c2) ReLU BN;
// Conv1d(c2->c3, k=c3) ReLU BN; flatten -> Linear(dense) ReLU -> two heads.
type encoder struct {
	nn.Base
	layers, layersSup *nn.Sequential
	fcMean, fcLogStd  *nn.Linear
}

func newEncoder(c Config) *encoder {
	p, k := c.Grammar.numProductions(), c.Conv
	e := &encoder{
		layers: nn.NewSequential(
			nn.NewConv1d(int64(p), int64(k[0]), int64(k[0])), nn.ReLU(), batchNorm(k[0]),
			nn.NewConv1d(int64(k[0]), int64(k[1]), int64(k[1])), nn.ReLU(), batchNorm(k[1]),
			nn.NewConv1d(int64(k[1]), int64(k[2]), int64(k[2])), nn.ReLU(), batchNorm(k[2])),
		layersSup: nn.NewSequential(
			nn.NewFunc(func(x *torch.Tensor) *torch.Tensor { return x.Flatten(1, -1) }),
			nn.NewLinear(int64(c.convOut()*k[2]), int64(c.Dense)), nn.ReLU()),
		fcMean:   nn.NewLinear(int64(c.Dense), int64(c.Latent)),
		fcLogStd: nn.NewLinear(int64(c.Dense), int64(c.Latent)),
	}
	e.RegisterModule("layers", e.layers)
	e.RegisterModule("layers_sup", e.layersSup)
	e.RegisterModule("fc_mean", e.fcMean)
	e.RegisterModule("fc_log_std", e.fcLogStd)
	return e
}

// forward maps one-hot x (B, T, P) to mu and log-std (B, latent).
func (e *encoder) forward(x *torch.Tensor) (mu, logStd *torch.Tensor) {
	// Convolve over time with productions as channels; flatten time-major, as
	// the reference does (transpose before flatten), so state dicts match.
	h := e.layers.Forward(x.Transpose(1, 2)).Transpose(1, 2)
	h = e.layersSup.Forward(h)
	return e.fcMean.Forward(h), e.fcLogStd.Forward(h)
}

// gruBlock holds the GRU as child "0", the reference's nn.Sequential(nn.GRU).
type gruBlock struct {
	nn.Base
	gru *nn.GRU
}

// decoder is BN(latent) -> Linear(latent, latent) ReLU -> repeated T times ->
// GRU (layers, hidden) -> Linear(hidden, P).
type decoder struct {
	nn.Base
	fc    *nn.Sequential
	gru   *gruBlock
	outFC *nn.Linear
	steps int64
}

func newDecoder(c Config) *decoder {
	l := int64(c.Latent)
	d := &decoder{
		fc:    nn.NewSequential(batchNorm(c.Latent), nn.NewLinear(l, l), nn.ReLU()),
		gru:   &gruBlock{gru: nn.NewGRU(l, int64(c.Hidden), int64(c.GRULayers), true)},
		outFC: nn.NewLinear(int64(c.Hidden), int64(c.Grammar.numProductions())),
		steps: int64(c.MaxLen),
	}
	d.gru.RegisterModule("0", d.gru.gru)
	d.RegisterModule("fc", d.fc)
	d.RegisterModule("gru", d.gru)
	d.RegisterModule("out_fc", d.outFC)
	return d
}

// forward maps z (B, latent) to unmasked logits (B, T, P).
func (d *decoder) forward(z *torch.Tensor) *torch.Tensor {
	h := d.fc.Forward(z).Unsqueeze(1).Repeat(1, d.steps, 1)
	out, _ := d.gru.gru.Forward(h, nil)
	return d.outFC.Forward(out)
}

// maskedProbs returns the teacher-forced rule probabilities (B, T, P): at each
// step the softmax of the logits over the productions sharing the left-hand
// side of the true rule of x (the others get probability 0). ruleMasks is the
// grammar's P x P matrix on x's device.
func maskedProbs(logits, x, ruleMasks *torch.Tensor) *torch.Tensor {
	allowed := x.MatMul(ruleMasks).GtScalar(0.5)
	return logits.MaskedFill(allowed.LogicalNot(), math.Inf(-1)).Softmax(2)
}
