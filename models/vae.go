package models

import (
	"fmt"

	"github.com/tlbo-native/tlbo-native/torch"
)

// Network is what the trainer needs of a module tree (nn.Base provides it).
type Network interface {
	Parameters() []*torch.Tensor
	StateDict() []torch.Named
	LoadStateDict(sd []torch.Named) error
	SetTraining(on bool)
	IsTraining() bool
	To(dev torch.Device) error
	// Device is where the network's tensors are.
	Device() torch.Device
	// Close releases the network's tensors.
	Close()
	// Describe returns the network's kind (e.g. "expression-gvae") and its
	// configuration, recorded in checkpoint headers so that Load rebuilds
	// the network without flags.
	Describe() (kind string, config any)
}

// Batch is a mini-batch in a network's own form, on the network's device:
// one dense tensor for images and one-hot matrices, trees and graphs as
// index tensors for the JT-VAE. Only the network that made it reads it.
type Batch interface {
	// Len is the number of examples in the batch.
	Len() int
}

// VAE is the network-specific part of a variational autoencoder whose
// examples (one training object in host memory, as the network takes it) have
// type E; the ELBO, the metric and prediction terms and the training loop are
// shared (Trainer).
type VAE[E any] interface {
	Network
	// LatentDim is the size of the latent vectors.
	LatentDim() int
	// Collate turns examples into a batch on the network's device; the
	// tensors it makes belong to sc.
	Collate(sc *torch.Scope, examples []E) (Batch, error)
	// EncodeParams returns the mean and the log standard deviation (B, latent)
	// of q(z|x) for a batch.
	EncodeParams(b Batch) (mu, logStd *torch.Tensor)
	// ReconstructionLoss returns the scalar reconstruction loss of the batch
	// decoded from latent samples z (B, latent), averaged over the batch.
	ReconstructionLoss(z *torch.Tensor, b Batch) *torch.Tensor
}

// DenseBatch is the batch of networks whose examples are fixed-size float32
// arrays (Dense): one tensor of shape (B, example shape...).
type DenseBatch struct {
	X *torch.Tensor
}

// Len returns the number of examples (0 when X carries an error).
func (b DenseBatch) Len() int {
	if s := b.X.Shape(); len(s) > 0 {
		return int(s[0])
	}
	return 0
}

// Dense is one example of a dense network: its values in row-major order.
type Dense = []float32

// CollateDense stacks examples of the given shape into one float32 tensor
// (len(examples), shape...) on dev, owned by sc.
func CollateDense(sc *torch.Scope, examples []Dense, shape []int64, dev torch.Device) (DenseBatch, error) {
	size := 1
	for _, s := range shape {
		size *= int(s)
	}
	flat := make([]float32, 0, len(examples)*size)
	for i, e := range examples {
		if len(e) != size {
			return DenseBatch{}, fmt.Errorf("batch: example %d has %d values, want %d (shape %v)", i, len(e), size, shape)
		}
		flat = append(flat, e...)
	}
	full := append([]int64{int64(len(examples))}, shape...)
	x := sc.Own(torch.FromFloat32(flat, full...)).To(dev)
	return DenseBatch{X: x}, x.Err()
}

// SplitDense cuts n examples of size values each out of flat (row-major),
// sharing its memory.
func SplitDense(flat []float32, size int) ([]Dense, error) {
	if size <= 0 || len(flat)%size != 0 {
		return nil, fmt.Errorf("%d values do not make whole examples of %d values", len(flat), size)
	}
	out := make([]Dense, len(flat)/size)
	for i := range out {
		out[i] = flat[i*size : (i+1)*size : (i+1)*size]
	}
	return out, nil
}

// evalBatchSize bounds the batches of EncodeMeans.
const evalBatchSize = 4096

// EncodeBatcher is a VAE that encodes in batches of its own size, for
// networks whose batch memory grows faster than the batch (the JT-VAE's
// synchronous tree sweeps cover every message of the batch).
type EncodeBatcher interface {
	// EncodeBatchSize is the largest batch EncodeMeans gives the network.
	EncodeBatchSize() int
}

// encodeBatchSize returns v's encoding batch size.
func encodeBatchSize(v any) int {
	if b, ok := v.(EncodeBatcher); ok && b.EncodeBatchSize() > 0 {
		return b.EncodeBatchSize()
	}
	return evalBatchSize
}

// EncodeMeans returns the encoder means (len(examples) x latent, row-major)
// of the examples, in evaluation mode without gradients; the network's mode
// is restored afterwards.
func EncodeMeans[E any](v VAE[E], examples []E) ([]float64, error) {
	return encodeMeans(v, examples, make([]float64, 0, len(examples)*v.LatentDim()))
}

// chunkExamples is the least number of examples of a chunk of EncodeMeansIn.
const chunkExamples = 1024

// EncodeMeansIn is EncodeMeans taken a chunk of whole encoding batches at a
// time (at least 1,024 examples, so the batches and the means are
// EncodeMeans's): each chunk first goes through prepare, given the index of
// its first example, which returns the examples to encode in its place
// (e.g. materialised) or an error that ends the encoding (e.g. a stopped
// run: encoding a molecule data set takes tens of seconds).
func EncodeMeansIn[E any](v VAE[E], examples []E, prepare func(first int, chunk []E) ([]E, error)) ([]float64, error) {
	batch := encodeBatchSize(v)
	size := (chunkExamples + batch - 1) / batch * batch
	out := make([]float64, 0, len(examples)*v.LatentDim())
	for lo := 0; lo < len(examples); lo += size {
		hi := min(lo+size, len(examples))
		chunk, err := prepare(lo, examples[lo:hi])
		if err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		if len(chunk) != hi-lo {
			return nil, fmt.Errorf("encode: examples %d to %d prepared as %d", lo, hi, len(chunk))
		}
		if out, err = encodeMeans(v, chunk, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// encodeMeans appends the encoder means of examples to out.
func encodeMeans[E any](v VAE[E], examples []E, out []float64) ([]float64, error) {
	training := v.IsTraining()
	v.SetTraining(false)
	defer v.SetTraining(training)
	err := torch.OnOneThread(func() error {
		var err error
		torch.NoGrad(func() {
			size := encodeBatchSize(v)
			for lo := 0; lo < len(examples) && err == nil; lo += size {
				var mu []float64
				mu, err = encodeBatch(v, examples[lo:min(lo+size, len(examples))])
				out = append(out, mu...)
			}
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return out, nil
}

func encodeBatch[E any](v VAE[E], examples []E) ([]float64, error) {
	sc := torch.NewScope()
	defer sc.Close()
	b, err := v.Collate(sc, examples)
	if err != nil {
		return nil, err
	}
	mu, _ := v.EncodeParams(b)
	return mu.Float64s()
}
