package models

import (
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
)

// PredictorHidden is the width of the target predictor's hidden layers.
const PredictorHidden = 128

// PredictorPrefix prefixes the target predictor's tensors in a checkpoint.
const PredictorPrefix = "target_predictor."

// TargetPredictor is the target-prediction head of TP-LBO: an MLP
// latent -> 128 -> 128 -> 1 with ReLU activations, trained by squared error on
// the sampled z. It predicts the min-max normalised label (in [0, 1]) so that
// its loss has the same scale for every task; the reference predicts raw
// targets.
type TargetPredictor struct {
	nn.Base
	mlp *nn.Sequential
}

// NewTargetPredictor returns a predictor for latent vectors of size latent,
// initialised as PyTorch's nn.Linear (from libtorch's seeded generator).
func NewTargetPredictor(latent int) *TargetPredictor {
	p := &TargetPredictor{}
	p.mlp = nn.NewSequential(
		nn.NewLinear(int64(latent), PredictorHidden), nn.ReLU(),
		nn.NewLinear(PredictorHidden, PredictorHidden), nn.ReLU(),
		nn.NewLinear(PredictorHidden, 1))
	p.RegisterModule("mlp", p.mlp)
	return p
}

// Forward returns the predictions (B) for latent vectors z (B, latent).
func (p *TargetPredictor) Forward(z *torch.Tensor) *torch.Tensor {
	return p.mlp.Forward(z).Squeeze(1)
}

// Loss returns the mean squared error of the predictions for z against y (B).
func (p *TargetPredictor) Loss(z, y *torch.Tensor) *torch.Tensor {
	return torch.MSELoss(p.Forward(z), y, torch.ReduceMean)
}
