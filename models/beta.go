package models

import (
	"fmt"
	"math"
)

// BetaSchedule is the annealing of the KL weight (docs/design.md section 4): beta
// starts at Init and, once Warmup optimiser steps are done, is multiplied by
// Factor every Every steps, never exceeding Final. A schedule with Init == Final
// (see FixedBeta) is constant, as used for retraining and BO.
type BetaSchedule struct {
	Init   float64 `json:"init"`
	Final  float64 `json:"final"`
	Warmup int     `json:"warmup"`
	Every  int     `json:"every"`
	Factor float64 `json:"factor"`
}

// FixedBeta returns a constant schedule.
func FixedBeta(beta float64) BetaSchedule {
	return BetaSchedule{Init: beta, Final: beta, Every: 1, Factor: 1}
}

// AnnealedBeta returns the reference's annealing from init to final: after
// warmup steps, beta grows by 1.1 every 10 steps (docs/design.md section 4; each
// task sets its own numbers, e.g. the expression task 1e-6 -> 0.04 after 500).
func AnnealedBeta(init, final float64, warmup int) BetaSchedule {
	return BetaSchedule{Init: init, Final: final, Warmup: warmup, Every: 10, Factor: 1.1}
}

// Validate checks the schedule's fields.
func (b BetaSchedule) Validate() error {
	switch {
	case !(b.Init >= 0) || math.IsInf(b.Init, 0):
		return fmt.Errorf("beta schedule: init %v must be finite and >= 0", b.Init)
	case !(b.Final >= b.Init) || math.IsInf(b.Final, 0):
		return fmt.Errorf("beta schedule: final %v must be finite and >= init %v", b.Final, b.Init)
	case b.Warmup < 0:
		return fmt.Errorf("beta schedule: warmup %d must be >= 0", b.Warmup)
	case b.Final > b.Init && (b.Every < 1 || !(b.Factor > 1)):
		return fmt.Errorf("beta schedule: annealing needs every >= 1 (got %d) and factor > 1 (got %v)", b.Every, b.Factor)
	}
	return nil
}

// At returns beta for the optimiser step with 0-based index step, as the
// reference computes it before each step: one increase for every step index t
// in (Warmup, step] that is a multiple of Every.
func (b BetaSchedule) At(step int) float64 {
	if b.Final <= b.Init || step <= b.Warmup {
		return b.Init
	}
	n := step/b.Every - b.Warmup/b.Every
	if n <= 0 {
		return b.Init
	}
	// Once Final is reached it stays there, so the closed form needs no loop.
	return math.Min(b.Final, b.Init*math.Pow(b.Factor, float64(n)))
}
