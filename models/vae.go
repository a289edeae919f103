package models

import "github.com/tlbo-native/tlbo-native/torch"

// Network is what the trainer needs of a module tree (nn.Base provides it).
type Network interface {
	Parameters() []*torch.Tensor
	StateDict() []torch.Named
	LoadStateDict(sd []torch.Named) error
	SetTraining(on bool)
	To(dev torch.Device) error
}

// VAE is the network-specific part of a variational autoencoder; the ELBO, the
// metric and prediction terms and the training loop are shared (Trainer).
type VAE interface {
	Network
	// LatentDim is the size of the latent vectors.
	LatentDim() int
	// InputShape is the shape of one example, e.g. [15 12] for the grammar VAE.
	InputShape() []int64
	// EncodeParams returns the mean and the log standard deviation (B, latent)
	// of q(z|x) for a batch x of shape (B, InputShape...).
	EncodeParams(x *torch.Tensor) (mu, logStd *torch.Tensor)
	// ReconstructionLoss returns the scalar reconstruction loss of the batch x
	// decoded from latent samples z (B, latent), averaged over the batch.
	ReconstructionLoss(z, x *torch.Tensor) *torch.Tensor
}

// InputSize returns the number of elements of one example of v.
func InputSize(v VAE) int {
	n := 1
	for _, s := range v.InputShape() {
		n *= int(s)
	}
	return n
}
