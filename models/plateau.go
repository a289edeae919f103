package models

import (
	"fmt"
	"math"
)

// Plateau lowers the learning rate when the validation loss stops improving
// and tracks the best validation loss (the epoch a ModelCheckpoint on the
// validation loss keeps). Trainer.Fit applies it once the KL weight has
// reached its final value.
//
// Two rules: PyTorch's ReduceLROnPlateau (Torch set; T-LBO's Lightning
// models, docs/design.md section 9): an epoch improves when its loss is below
// best * (1 - MinDelta), and the rate is multiplied by Factor after more than
// Patience epochs without improvement; and Keras' (Torch unset; weighted
// retraining's schedule, and checkpoints written before the rule was
// recorded): an improvement is a loss below best - MinDelta, and the rate is
// lowered after Patience epochs without one. Either way the rate never goes
// below MinLR, and the waiting count restarts after a reduction. Improvements
// are measured from the best loss so far.
type Plateau struct {
	// Factor multiplies the learning rate after Patience epochs without an
	// improvement larger than MinDelta; MinLR is its floor (MinLR equal to
	// the learning rate: never lowered).
	Factor   float64 `json:"factor"`
	Patience int     `json:"patience"`
	MinLR    float64 `json:"min_lr"`
	MinDelta float64 `json:"min_delta"`
	// Torch selects PyTorch's rule (relative MinDelta, strict patience).
	Torch bool `json:"torch,omitempty"`
	// Best is the lowest validation loss so far, valid when HasBest; Wait
	// counts the epochs since the last improvement.
	Best    float64 `json:"best"`
	HasBest bool    `json:"has_best"`
	Wait    int     `json:"wait"`
}

// TorchPlateau returns PyTorch's ReduceLROnPlateau with the given factor,
// patience and floor and its default threshold (1e-4, relative), the
// schedule of T-LBO's models (expression: 0.2, 20, lr/10; topology: min_lr =
// lr, so that the rate is never lowered).
func TorchPlateau(factor float64, patience int, minLR float64) *Plateau {
	return &Plateau{Factor: factor, Patience: patience, MinLR: minLR, MinDelta: 1e-4, Torch: true}
}

// KerasPlateau returns weighted retraining's Keras schedule: factor 0.2,
// patience 1, floor 1e-4, improvements counted above 1e-4 (Keras' default
// min_delta). T-LBO's models do not use it (docs/design.md section 11).
func KerasPlateau() *Plateau {
	return &Plateau{Factor: 0.2, Patience: 1, MinLR: 1e-4, MinDelta: 1e-4}
}

// Validate checks the settings.
func (p *Plateau) Validate() error {
	if !(p.Factor > 0 && p.Factor < 1) || p.Patience < 0 || (!p.Torch && p.Patience < 1) || !(p.MinLR >= 0) || !(p.MinDelta >= 0) {
		return fmt.Errorf("plateau: factor %v (want in (0, 1)), patience %d (want >= 1, or >= 0 with PyTorch's rule), min lr %v and min delta %v (want >= 0)",
			p.Factor, p.Patience, p.MinLR, p.MinDelta)
	}
	return nil
}

// Epoch takes the validation loss of a finished epoch and the current
// learning rate; it returns whether the loss is the best so far (the epoch
// to keep) and the learning rate for the next epoch.
func (p *Plateau) Epoch(val, lr float64) (best bool, next float64) {
	best = !p.HasBest || val < p.Best
	improved := !p.HasBest || val < p.Best-p.MinDelta
	if p.Torch {
		improved = !p.HasBest || val < p.Best*(1-p.MinDelta) // PyTorch's "rel" mode, negative losses included
	}
	if improved {
		p.Wait = 0
	} else {
		p.Wait++
		if (p.Torch && p.Wait > p.Patience) || (!p.Torch && p.Wait >= p.Patience) {
			if lr > p.MinLR {
				lr = math.Max(lr*p.Factor, p.MinLR)
			}
			p.Wait = 0
		}
	}
	if best {
		p.Best, p.HasBest = val, true
	}
	return best, lr
}
