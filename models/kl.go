package models

import "github.com/tlbo-native/tlbo-native/torch"

// scaleEps keeps the posterior scale positive, as the reference's sample_latent.
const scaleEps = 1e-10

// KL returns the KL divergence of N(mu, exp(logStd)^2) from N(0, I), summed over
// the latent dimensions and averaged over the batch (dim 0):
// 0.5 * sum(exp(2s) + mu^2 - 1 - 2s) / B.
func KL(mu, logStd *torch.Tensor) *torch.Tensor {
	shape := mu.Shape()
	if len(shape) == 0 || shape[0] == 0 {
		return torch.ErrTensor(errorf("kl: mu must have a non-empty batch dimension, got shape %v", shape))
	}
	s2 := logStd.MulScalar(2)
	terms := s2.Exp().Add(mu.Square()).AddScalar(-1).Sub(s2)
	return terms.Sum().MulScalar(0.5 / float64(shape[0]))
}

// Reparameterize draws z = mu + (exp(logStd) + 1e-10) * eps with eps ~ N(0, I)
// from libtorch's generator, differentiable in mu and logStd.
func Reparameterize(mu, logStd *torch.Tensor) *torch.Tensor {
	eps := mu.RandnLike()
	return logStd.Exp().AddScalar(scaleEps).Mul(eps).Add(mu)
}
