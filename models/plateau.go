package models

import (
	"fmt"
	"math"
)

// Plateau lowers the learning rate when the validation loss stops improving
// and tracks the best validation loss, as the authors' pretraining does
// (Keras' ReduceLROnPlateau with factor 0.2, patience 1 and a floor of 1e-4
// on the validation loss, and ModelCheckpoint keeping the best epoch).
// Trainer.Fit applies it once the KL weight has reached its final value.
type Plateau struct {
	// Factor multiplies the learning rate after Patience epochs without an
	// improvement larger than MinDelta; MinLR is its floor.
	Factor   float64 `json:"factor"`
	Patience int     `json:"patience"`
	MinLR    float64 `json:"min_lr"`
	MinDelta float64 `json:"min_delta"`
	// Best is the lowest validation loss so far, valid when HasBest; Wait
	// counts the epochs since the last improvement.
	Best    float64 `json:"best"`
	HasBest bool    `json:"has_best"`
	Wait    int     `json:"wait"`
}

// AuthorsPlateau returns the authors' schedule: factor 0.2, patience 1,
// floor 1e-4, improvements counted above 1e-4 (Keras' default min_delta).
func AuthorsPlateau() *Plateau {
	return &Plateau{Factor: 0.2, Patience: 1, MinLR: 1e-4, MinDelta: 1e-4}
}

// Validate checks the settings.
func (p *Plateau) Validate() error {
	if !(p.Factor > 0 && p.Factor < 1) || p.Patience < 1 || !(p.MinLR >= 0) || !(p.MinDelta >= 0) {
		return fmt.Errorf("plateau: factor %v (want in (0, 1)), patience %d (want >= 1), min lr %v and min delta %v (want >= 0)",
			p.Factor, p.Patience, p.MinLR, p.MinDelta)
	}
	return nil
}

// Epoch takes the validation loss of a finished epoch and the current
// learning rate; it returns whether the loss is the best so far (the epoch
// to keep) and the learning rate for the next epoch.
func (p *Plateau) Epoch(val, lr float64) (best bool, next float64) {
	best = !p.HasBest || val < p.Best
	if !p.HasBest || val < p.Best-p.MinDelta {
		p.Wait = 0
	} else {
		p.Wait++
		if p.Wait >= p.Patience && lr > p.MinLR {
			lr = math.Max(lr*p.Factor, p.MinLR)
			p.Wait = 0
		}
	}
	if best {
		p.Best, p.HasBest = val, true
	}
	return best, lr
}
