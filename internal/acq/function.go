package acq

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Function is an acquisition function to be maximised over a box.
type Function interface {
	// Eval returns the value at x and, when grad is non-nil, writes the
	// gradient with respect to x into it.
	Eval(x, grad []float64) float64
}

// BatchFunction is a Function that also evaluates many points at once;
// Maximize uses it for the raw samples, calling EvalBatch from several
// goroutines at once when Options.Workers > 1 (an Acquisition allows it
// when its Model does, as a *gp.Model).
type BatchFunction interface {
	Function
	// EvalBatch writes the values at the rows of x into dst.
	EvalBatch(x *mat.Dense, dst []float64)
}

// Func adapts a closure to Function.
type Func func(x, grad []float64) float64

// Eval calls f.
func (f Func) Eval(x, grad []float64) float64 { return f(x, grad) }

// Model is the posterior an acquisition function needs; *gp.Model
// implements it. Means and variances are of the latent objective, which is
// maximised.
type Model interface {
	Dim() int
	PredictGrad(x, dmean, dvar []float64) (mean, variance float64)
	PredictBatch(x *mat.Dense, mean, variance []float64)
}

// Kind selects an acquisition function.
type Kind int

const (
	// KindEI is expected improvement.
	KindEI Kind = iota
	// KindLogEI is the logarithm of expected improvement (the same
	// maximiser, but with gradients that do not vanish far from bestF).
	KindLogEI
	// KindUCB is the upper confidence bound.
	KindUCB
)

// String returns the kind's command-line name.
func (k Kind) String() string {
	switch k {
	case KindEI:
		return "ei"
	case KindLogEI:
		return "logei"
	case KindUCB:
		return "ucb"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind returns the kind named s ("ei", "logei" or "ucb").
func ParseKind(s string) (Kind, error) {
	switch s {
	case "ei":
		return KindEI, nil
	case "logei", "log-ei":
		return KindLogEI, nil
	case "ucb":
		return KindUCB, nil
	}
	return 0, fmt.Errorf("acq: unknown acquisition %q (want ei, logei or ucb)", s)
}

// Acquisition evaluates an acquisition function of a Model's posterior. It
// implements BatchFunction; it is safe for concurrent use when the Model is.
type Acquisition struct {
	Model Model
	Kind  Kind
	// BestF is the incumbent for EI and log-EI (see BestObserved and
	// QuantileBest).
	BestF float64
	// Beta is UCB's exploration weight: mean + √Beta σ.
	Beta float64
}

// NewEI returns expected improvement over bestF.
func NewEI(m Model, bestF float64) Acquisition {
	return Acquisition{Model: m, Kind: KindEI, BestF: bestF}
}

// NewLogEI returns log expected improvement over bestF.
func NewLogEI(m Model, bestF float64) Acquisition {
	return Acquisition{Model: m, Kind: KindLogEI, BestF: bestF}
}

// NewUCB returns the upper confidence bound with weight beta.
func NewUCB(m Model, beta float64) Acquisition {
	return Acquisition{Model: m, Kind: KindUCB, Beta: beta}
}

// value maps a posterior mean and variance to the acquisition value.
func (a Acquisition) value(mean, variance float64) (v, dMean, dVar float64) {
	switch a.Kind {
	case KindLogEI:
		return LogEI(mean, variance, a.BestF)
	case KindUCB:
		return UCB(mean, variance, a.Beta)
	default:
		return EI(mean, variance, a.BestF)
	}
}

// Eval returns the acquisition value at x and its gradient (grad non-nil).
func (a Acquisition) Eval(x, grad []float64) float64 {
	if grad == nil {
		mean, variance := a.Model.PredictGrad(x, nil, nil)
		v, _, _ := a.value(mean, variance)
		return v
	}
	dvar := make([]float64, len(x))
	mean, variance := a.Model.PredictGrad(x, grad, dvar)
	v, dm, dv := a.value(mean, variance)
	for i := range grad {
		grad[i] = dm*grad[i] + dv*dvar[i]
	}
	return v
}

// EvalBatch writes the acquisition values at the rows of x into dst.
func (a Acquisition) EvalBatch(x *mat.Dense, dst []float64) {
	q, _ := x.Dims()
	mean, variance := make([]float64, q), make([]float64, q)
	a.Model.PredictBatch(x, mean, variance)
	for i := range dst {
		dst[i], _, _ = a.value(mean[i], variance[i])
	}
}

// BestObserved returns the largest of y (the usual EI incumbent).
func BestObserved(y []float64) float64 { return slices.Max(y) }

// QuantileBest returns the q-quantile of y with linear interpolation
// (numpy's default); the reference uses q = 0.9 as EI's incumbent.
func QuantileBest(y []float64, q float64) float64 {
	s := slices.Clone(y)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	if i < 0 {
		return s[0]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}
