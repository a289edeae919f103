package gp

import (
	"fmt"
	"time"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Model is a fitted GP: hyperparameters, inducing points (sparse) and the
// precomputed posterior. Prediction costs O(M²) per point for M inducing
// points (N training points for an exact GP). A Model is immutable and safe
// for concurrent use.
type Model struct {
	kernel   Kernel
	hyper    Hyper
	inducing *mat.Dense // M x d in the input space (warped like the data); nil for exact
	approx   Approximation
	post     posterior
	n        int
	logLik   float64
	logPrior float64
	info     FitInfo
}

// FitInfo describes how a model was fitted.
type FitInfo struct {
	// Evaluations counts objective+gradient evaluations.
	Evaluations int
	// Iterations counts L-BFGS major iterations.
	Iterations int
	// Status is the optimiser's termination status.
	Status string
	// Warm reports whether the fit started from a previous model.
	Warm bool
	// Duration is the wall time of the fit, k-means included.
	Duration time.Duration
}

// New builds the posterior of a GP with fixed hyperparameters h on inputs x
// (N x d, in [0,1]^d) and targets y, without fitting. spec.Inducing selects
// a sparse GP with those inducing points (spec.Approximation: the Titsias or
// the FITC posterior); nil means exact.
func New(x *mat.Dense, y []float64, spec Spec, h Hyper) (*Model, error) {
	spec.FixInducing = true
	o, err := NewObjective(x, y, spec)
	if err != nil {
		return nil, err
	}
	theta, err := o.Pack(h, nil)
	if err != nil {
		return nil, err
	}
	return o.model(theta, FitInfo{})
}

// model evaluates the objective at theta and returns the model there.
func (o *Objective) model(theta []float64, info FitInfo) (*Model, error) {
	m := &Model{kernel: o.spec.Kernel, n: o.x.Rows, info: info}
	f, err := o.eval(theta, nil, &m.post)
	if err != nil {
		return nil, err
	}
	m.hyper, m.inducing = o.Unpack(theta)
	if m.inducing != nil {
		m.approx = o.spec.Approximation
	}
	m.logPrior = 0
	if !o.spec.NoPriors {
		m.logPrior = o.lay.logPrior(theta, nil)
	}
	m.logLik = f - m.logPrior
	return m, nil
}

// Dim returns the input dimension.
func (m *Model) Dim() int { return len(m.hyper.Lengthscales) }

// Kernel returns the covariance function.
func (m *Model) Kernel() Kernel { return m.kernel }

// Sparse reports whether the model is an SGPR.
func (m *Model) Sparse() bool { return m.inducing != nil }

// Hyper returns a copy of the hyperparameters.
func (m *Model) Hyper() Hyper { return m.hyper.Clone() }

// Inducing returns a copy of the inducing points (M x d, in the input space:
// the kernel sees them warped like the data), or nil for an exact GP.
func (m *Model) Inducing() *mat.Dense {
	if m.inducing == nil {
		return nil
	}
	return mat.DenseCopyOf(m.inducing)
}

// WarmStart is what a fit warm-started from a model takes of it (see
// Options.Init). It is a plain value, so that a long run can save it and a
// resumed one go on from exactly where the fits were.
type WarmStart struct {
	// Hyper are the model's hyperparameters.
	Hyper Hyper
	// Inducing are its M x d inducing points; nil for an exact GP.
	Inducing *mat.Dense
}

// WarmStart returns a copy of what a warm-started fit takes of m; nil for a
// nil m, so that a chain of fits can start from "no previous model".
func (m *Model) WarmStart() *WarmStart {
	if m == nil {
		return nil
	}
	return &WarmStart{Hyper: m.Hyper(), Inducing: m.Inducing()}
}

// Check reports whether w can warm-start a fit on d-dimensional inputs.
func (w *WarmStart) Check(d int) error {
	h := w.Hyper
	if len(h.Lengthscales) != d {
		return fmt.Errorf("gp: warm start from a %d-dimensional model for %d-dimensional inputs", len(h.Lengthscales), d)
	}
	if (h.WarpA == nil) != (h.WarpB == nil) || h.WarpA != nil && (len(h.WarpA) != d || len(h.WarpB) != d) {
		return fmt.Errorf("gp: warm start has %d and %d warping parameters for %d dimensions", len(h.WarpA), len(h.WarpB), d)
	}
	if w.Inducing != nil {
		if _, c := w.Inducing.Dims(); c != d {
			return fmt.Errorf("gp: warm start has %d-dimensional inducing points for %d-dimensional inputs", c, d)
		}
	}
	return nil
}

// Approximation returns the sparse objective the model was fitted with and
// predicts by ("" for an exact GP).
func (m *Model) Approximation() Approximation { return m.approx }

// LogLik returns the log marginal likelihood (exact or FITC) or the
// collapsed bound (Titsias) at the fitted hyperparameters, without the prior.
func (m *Model) LogLik() float64 { return m.logLik }

// LogPrior returns the log prior density of the fitted hyperparameters (0
// when priors were disabled).
func (m *Model) LogPrior() float64 { return m.logPrior }

// Info returns how the model was fitted.
func (m *Model) Info() FitInfo { return m.info }

// Points returns the number of training points.
func (m *Model) Points() int { return m.n }

// scale maps a raw input to the kernel's scaled space, writing the chain
// factor ∂x̂_k/∂x_k into jac when non-nil.
func (m *Model) scale(x, xh, jac []float64) {
	h := &m.hyper
	for k, v := range x {
		dw := 1.0
		if h.Warped() {
			v, dw, _, _ = kumaraswamy(v, h.WarpA[k], h.WarpB[k])
		}
		xh[k] = v / h.Lengthscales[k]
		if jac != nil {
			jac[k] = dw / h.Lengthscales[k]
		}
	}
}

// Predict returns the posterior mean and variance of the latent function
// at x (length Dim, in [0,1]^d). Add Hyper().Noise for the variance of a
// new observation.
func (m *Model) Predict(x []float64) (mean, variance float64) {
	return m.PredictGrad(x, nil, nil)
}

// PredictGrad is Predict that also writes the gradients of the mean and the
// variance with respect to x into dmean and dvar (each may be nil).
func (m *Model) PredictGrad(x, dmean, dvar []float64) (mean, variance float64) {
	d := m.Dim()
	if len(x) != d || (dmean != nil && len(dmean) != d) || (dvar != nil && len(dvar) != d) {
		panic(fmt.Sprintf("gp: Predict with input of length %d for a %d-dimensional model", len(x), d))
	}
	mm := m.post.centres.Rows
	buf := make([]float64, 2*d+3*mm)
	xh, jac := buf[:d], buf[d:2*d]
	kc, kap, ck := buf[2*d:2*d+mm], buf[2*d+mm:2*d+2*mm], buf[2*d+2*mm:]
	m.scale(x, xh, jac)
	mean, variance = m.post.predictScaled(m.kernel, xh, dmean, dvar, kc, kap, ck)
	for k := 0; k < d; k++ {
		if dmean != nil {
			dmean[k] *= jac[k]
		}
		if dvar != nil {
			dvar[k] *= jac[k]
		}
	}
	return mean, variance
}

// PredictBatch writes the posterior means and variances at the rows of x
// (Q x Dim) into mean and variance (length Q), using matrix products.
func (m *Model) PredictBatch(x *mat.Dense, mean, variance []float64) {
	q, d := x.Dims()
	if d != m.Dim() || len(mean) != q || len(variance) != q {
		panic(fmt.Sprintf("gp: PredictBatch with %d x %d inputs and %d/%d outputs for a %d-dimensional model",
			q, d, len(mean), len(variance), m.Dim()))
	}
	if q == 0 {
		return
	}
	raw := x.RawMatrix()
	xh := blas64.General{Rows: q, Cols: d, Stride: d, Data: make([]float64, q*d)}
	for i := 0; i < q; i++ {
		m.scale(raw.Data[i*raw.Stride:i*raw.Stride+d], xh.Data[i*d:(i+1)*d], nil)
	}
	m.post.predictBatchScaled(m.kernel, xh, mean, variance)
}
