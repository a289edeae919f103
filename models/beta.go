package models

import (
	"fmt"
	"math"
)

// BetaSchedule is the annealing of the KL weight (docs/design.md section 4): beta
// starts at Init and, once Warmup optimiser steps are done, grows every Every
// steps, never exceeding Final: by Step when Step > 0 (linear, as icml18-jtnn's
// fast_molvae), else by the factor Factor (geometric, as the authors' expression
// and topology scripts). A schedule with Init == Final (see FixedBeta) is
// constant, as used for retraining and BO.
type BetaSchedule struct {
	Init   float64 `json:"init"`
	Final  float64 `json:"final"`
	Warmup int     `json:"warmup"`
	Every  int     `json:"every"`
	Factor float64 `json:"factor"`
	Step   float64 `json:"step,omitempty"`
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

// LinearBeta returns an additive annealing from init to final: after warmup
// steps, beta grows by step every `every` steps. fast_molvae's schedule (beta 0,
// +0.002 every 2,000 steps once 40,000 are done, at most 1) is
// LinearBeta(0, 1, 0.002, 2000, 39999): it raises beta after its 1-based step
// 40,000, which is the step with 0-based index 39,999 here (see At).
func LinearBeta(init, final, step float64, every, warmup int) BetaSchedule {
	return BetaSchedule{Init: init, Final: final, Warmup: warmup, Every: every, Factor: 1, Step: step}
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
	case !(b.Step >= 0) || math.IsInf(b.Step, 0):
		return fmt.Errorf("beta schedule: step %v must be finite and >= 0", b.Step)
	case b.Final > b.Init && b.Every < 1:
		return fmt.Errorf("beta schedule: annealing needs every >= 1 (got %d)", b.Every)
	case b.Final > b.Init && b.Step == 0 && !(b.Factor > 1):
		return fmt.Errorf("beta schedule: geometric annealing needs factor > 1 (got %v), or a linear step > 0", b.Factor)
	case b.Final > b.Init && b.Step == 0 && b.Init == 0:
		return fmt.Errorf("beta schedule: geometric annealing from init 0 never grows: give init > 0 or a linear step > 0")
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
	if b.Step > 0 {
		return math.Min(b.Final, b.Init+b.Step*float64(n))
	}
	return math.Min(b.Final, b.Init*math.Pow(b.Factor, float64(n)))
}
