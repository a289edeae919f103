package nn

import (
	"math"

	"github.com/tlbo-native/tlbo-native/torch"
)

// uniform returns a float32 tensor of the shape drawn from U(-bound, bound)
// with libtorch's seeded generator, as PyTorch's default initialisers do.
func uniform(bound float64, shape ...int64) *torch.Tensor {
	t := torch.Zeros(shape, torch.Float32, torch.CPU)
	if err := t.Uniform_(-bound, bound); err != nil {
		t.Close()
		return torch.ErrTensor(err)
	}
	return t
}

// Linear is y = x W^T + b, initialised as PyTorch's nn.Linear.
type Linear struct {
	Base
	Weight, Bias *torch.Tensor
}

// NewLinear returns a Linear layer from in to out features.
func NewLinear(in, out int64) *Linear {
	bound := 1 / math.Sqrt(float64(in))
	l := &Linear{}
	l.Weight = l.RegisterParameter("weight", uniform(bound, out, in))
	l.Bias = l.RegisterParameter("bias", uniform(bound, out))
	return l
}

// Forward applies the layer.
func (l *Linear) Forward(x *torch.Tensor) *torch.Tensor { return torch.Linear(x, l.Weight, l.Bias) }

// Conv1d is a 1-d convolution over (N, C, L), initialised as PyTorch's nn.Conv1d.
type Conv1d struct {
	Base
	Weight, Bias              *torch.Tensor
	Stride, Padding, Dilation int64
}

// NewConv1d returns a Conv1d layer with stride 1 and no padding.
func NewConv1d(in, out, kernel int64) *Conv1d {
	bound := 1 / math.Sqrt(float64(in*kernel))
	c := &Conv1d{Stride: 1, Dilation: 1}
	c.Weight = c.RegisterParameter("weight", uniform(bound, out, in, kernel))
	c.Bias = c.RegisterParameter("bias", uniform(bound, out))
	return c
}

// Forward applies the convolution.
func (c *Conv1d) Forward(x *torch.Tensor) *torch.Tensor {
	return torch.Conv1d(x, c.Weight, c.Bias, c.Stride, c.Padding, c.Dilation, 1)
}

// Conv2d is a 2-d convolution over (N, C, H, W), initialised as PyTorch's nn.Conv2d.
type Conv2d struct {
	Base
	Weight, Bias    *torch.Tensor
	Stride, Padding int64
}

// NewConv2d returns a square-kernel Conv2d layer.
func NewConv2d(in, out, kernel, stride, padding int64) *Conv2d {
	bound := 1 / math.Sqrt(float64(in*kernel*kernel))
	c := &Conv2d{Stride: stride, Padding: padding}
	c.Weight = c.RegisterParameter("weight", uniform(bound, out, in, kernel, kernel))
	c.Bias = c.RegisterParameter("bias", uniform(bound, out))
	return c
}

// Forward applies the convolution.
func (c *Conv2d) Forward(x *torch.Tensor) *torch.Tensor {
	return torch.Conv2d(x, c.Weight, c.Bias, [2]int64{c.Stride, c.Stride}, [2]int64{c.Padding, c.Padding},
		[2]int64{1, 1}, 1)
}

// ConvTranspose2d is a transposed 2-d convolution, initialised as PyTorch's.
type ConvTranspose2d struct {
	Base
	Weight, Bias                   *torch.Tensor
	Stride, Padding, OutputPadding int64
}

// NewConvTranspose2d returns a square-kernel ConvTranspose2d layer.
func NewConvTranspose2d(in, out, kernel, stride, padding, outputPadding int64) *ConvTranspose2d {
	// PyTorch computes the fan-in of a transposed weight (in, out, k, k) from dim 1.
	bound := 1 / math.Sqrt(float64(out*kernel*kernel))
	c := &ConvTranspose2d{Stride: stride, Padding: padding, OutputPadding: outputPadding}
	c.Weight = c.RegisterParameter("weight", uniform(bound, in, out, kernel, kernel))
	c.Bias = c.RegisterParameter("bias", uniform(bound, out))
	return c
}

// Forward applies the transposed convolution. On the CPU, a stride-1 layer
// of more than one output channel (without output padding) is computed as the
// ordinary convolution with the flipped, transposed kernel, the same map,
// which libtorch 1.13 runs through oneDNN, where it sends float32 transposed
// convolutions to its slower im2col path. A training step of the topology
// VAE (batch 1,024, one thread, the builds side by side) took 5.1-5.6 CPU s
// against 5.9-6.5. Not done: stride-2 layers as convolutions of the input
// dilated with zeros (6.7-6.9 CPU s, slower) or as sub-pixel convolutions
// (one convolution to the s² output phases, then a pixel shuffle: an epoch
// of the topology VAE at batch 256 took 32.7 CPU s against 31.1), and
// single-output-channel layers (2.7x slower as convolutions alone).
func (c *ConvTranspose2d) Forward(x *torch.Tensor) *torch.Tensor {
	s, p, o := c.Stride, c.Padding, c.OutputPadding
	w := c.Weight.Shape()
	if k := w[2]; s == 1 && o == 0 && w[1] > 1 && w[2] == w[3] && p <= k-1 && x.Device().Type == torch.CPUDevice {
		flipped := c.Weight.Transpose(0, 1).Flip(2, 3)
		return torch.Conv2d(x, flipped, c.Bias, [2]int64{1, 1}, [2]int64{k - 1 - p, k - 1 - p}, [2]int64{1, 1}, 1)
	}
	return torch.ConvTranspose2d(x, c.Weight, c.Bias, [2]int64{s, s}, [2]int64{p, p}, [2]int64{o, o},
		[2]int64{1, 1}, 1)
}

// BatchNorm normalises over the channel dim 1 of (N, C) or (N, C, ...) input,
// as PyTorch's BatchNorm1d/2d: batch statistics in training (updating the
// running ones with Momentum), running statistics in evaluation.
type BatchNorm struct {
	Base
	Weight, Bias, RunningMean, RunningVar, NumBatchesTracked *torch.Tensor
	Momentum, Eps                                            float64
}

// NewBatchNorm returns a batch normalisation over n channels (momentum 0.1, eps 1e-5).
func NewBatchNorm(n int64) *BatchNorm {
	b := &BatchNorm{Momentum: 0.1, Eps: 1e-5}
	b.Weight = b.RegisterParameter("weight", torch.Ones([]int64{n}, torch.Float32, torch.CPU))
	b.Bias = b.RegisterParameter("bias", torch.Zeros([]int64{n}, torch.Float32, torch.CPU))
	b.RunningMean = b.RegisterBuffer("running_mean", torch.Zeros([]int64{n}, torch.Float32, torch.CPU))
	b.RunningVar = b.RegisterBuffer("running_var", torch.Ones([]int64{n}, torch.Float32, torch.CPU))
	b.NumBatchesTracked = b.RegisterBuffer("num_batches_tracked", torch.Zeros([]int64{}, torch.Int64, torch.CPU))
	return b
}

// Forward normalises x.
func (b *BatchNorm) Forward(x *torch.Tensor) *torch.Tensor {
	if b.IsTraining() {
		torch.NoGrad(func() {
			if err := b.NumBatchesTracked.AddInt_(1); err != nil {
				x = torch.ErrTensor(err)
			}
		})
	}
	return torch.BatchNorm(x, b.Weight, b.Bias, b.RunningMean, b.RunningVar, b.IsTraining(), b.Momentum, b.Eps)
}

// Embedding maps int64 indices to rows of a weight table (initialised N(0, 1)).
type Embedding struct {
	Base
	Weight *torch.Tensor
}

// NewEmbedding returns an embedding of n entries of size dim.
func NewEmbedding(n, dim int64) *Embedding {
	e := &Embedding{}
	e.Weight = e.RegisterParameter("weight", torch.Randn([]int64{n, dim}, torch.Float32, torch.CPU))
	return e
}

// Forward looks up the rows of the indices.
func (e *Embedding) Forward(indices *torch.Tensor) *torch.Tensor {
	return torch.Embedding(e.Weight, indices)
}

// Dropout zeroes elements with probability P in training mode.
type Dropout struct {
	Base
	P float64
}

// NewDropout returns a dropout layer.
func NewDropout(p float64) *Dropout { return &Dropout{P: p} }

// Forward applies dropout in training mode and is the identity in evaluation.
func (d *Dropout) Forward(x *torch.Tensor) *torch.Tensor {
	return torch.Dropout(x, d.P, d.IsTraining())
}

// Func is a parameter-free layer from a function (activations, flatten), which
// takes an index in Sequential as PyTorch's nn.ReLU() does.
type Func struct {
	Base
	F func(*torch.Tensor) *torch.Tensor
}

// NewFunc returns a layer that applies f.
func NewFunc(f func(*torch.Tensor) *torch.Tensor) *Func { return &Func{F: f} }

// Forward applies the function.
func (f *Func) Forward(x *torch.Tensor) *torch.Tensor { return f.F(x) }

// ReLU returns a ReLU layer.
func ReLU() *Func { return NewFunc((*torch.Tensor).Relu) }

// LeakyReLU returns a leaky ReLU layer with the given negative slope.
func LeakyReLU(slope float64) *Func {
	return NewFunc(func(x *torch.Tensor) *torch.Tensor { return x.LeakyRelu(slope) })
}

// Sequential applies layers in order; their names are their indices.
type Sequential struct {
	Base
	Layers []Layer
}

// NewSequential returns a Sequential of the layers.
func NewSequential(layers ...Layer) *Sequential {
	s := &Sequential{Layers: layers}
	for i, l := range layers {
		s.RegisterModule(itoa(i), l)
	}
	return s
}

// Forward applies every layer in order.
func (s *Sequential) Forward(x *torch.Tensor) *torch.Tensor {
	for _, l := range s.Layers {
		x = l.Forward(x)
	}
	return x
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
