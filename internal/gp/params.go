package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// NoiseFloor is the smallest Gaussian noise variance a fit may reach; the
// noise is parameterised as NoiseFloor + exp(u).
const NoiseFloor = 1e-6

// baseJitter is added to the inducing covariance, relative to the output
// scale, so that K_uu stays positive definite (GPflow's default is 1e-6).
const baseJitter = 1e-6

// Hyper holds the hyperparameters of a GP.
type Hyper struct {
	// Lengthscales has one positive entry per input dimension.
	Lengthscales []float64
	// Outputscale is the kernel variance s.
	Outputscale float64
	// Mean is the constant prior mean.
	Mean float64
	// Noise is the Gaussian observation-noise variance (at least NoiseFloor).
	Noise float64
	// WarpA and WarpB are the Kumaraswamy concentrations a and b per input
	// dimension (w(x) = 1 - (1 - x^a)^b); both nil when inputs are not warped.
	WarpA, WarpB []float64
}

// Clone returns a deep copy of h.
func (h Hyper) Clone() Hyper {
	c := h
	c.Lengthscales = append([]float64(nil), h.Lengthscales...)
	if h.WarpA != nil {
		c.WarpA = append([]float64(nil), h.WarpA...)
		c.WarpB = append([]float64(nil), h.WarpB...)
	}
	return c
}

// Warped reports whether h carries input-warping parameters.
func (h Hyper) Warped() bool { return h.WarpA != nil }

// validate checks h against the input dimension d.
func (h Hyper) validate(d int) error {
	if len(h.Lengthscales) != d {
		return fmt.Errorf("gp: %d length-scales for %d input dimensions", len(h.Lengthscales), d)
	}
	for i, l := range h.Lengthscales {
		if !(l > 0) || math.IsInf(l, 0) {
			return fmt.Errorf("gp: length-scale %d is %v, want a positive finite number", i, l)
		}
	}
	if !(h.Outputscale > 0) || math.IsInf(h.Outputscale, 0) {
		return fmt.Errorf("gp: output scale is %v, want a positive finite number", h.Outputscale)
	}
	if !(h.Noise >= NoiseFloor) || math.IsInf(h.Noise, 0) {
		return fmt.Errorf("gp: noise variance is %v, want a finite number >= %g", h.Noise, NoiseFloor)
	}
	if math.IsNaN(h.Mean) || math.IsInf(h.Mean, 0) {
		return fmt.Errorf("gp: mean is %v, want a finite number", h.Mean)
	}
	if (h.WarpA == nil) != (h.WarpB == nil) {
		return fmt.Errorf("gp: WarpA and WarpB must both be set or both be nil")
	}
	if h.WarpA != nil {
		if len(h.WarpA) != d || len(h.WarpB) != d {
			return fmt.Errorf("gp: warping has %d/%d concentrations for %d input dimensions", len(h.WarpA), len(h.WarpB), d)
		}
		for i := range h.WarpA {
			if !(h.WarpA[i] > 0) || !(h.WarpB[i] > 0) || math.IsInf(h.WarpA[i], 0) || math.IsInf(h.WarpB[i], 0) {
				return fmt.Errorf("gp: warping concentrations of dimension %d are (%v, %v), want positive finite numbers", i, h.WarpA[i], h.WarpB[i])
			}
		}
	}
	return nil
}

// Priors of the reference implementation (BoTorch defaults), used for MAP
// fitting. Gamma(α, β) has shape α and rate β; densities are on the
// constrained parameter (no Jacobian of the log transform), as in GPyTorch.
var (
	LengthscalePrior = Gamma{Shape: 3, Rate: 6}
	OutputscalePrior = Gamma{Shape: 2, Rate: 0.15}
	// WarpPrior is BoTorch's LogNormal(0, 0.75^½) on both Kumaraswamy
	// concentrations.
	WarpPrior = LogNormal{Mu: 0, Sigma: math.Sqrt(0.75)}
)

// prior is a density on a positive parameter, evaluated at its logarithm.
type prior interface {
	LogProbLog(u float64) (lp, dlp float64)
}

// Gamma is a Gamma distribution with the given shape and rate.
type Gamma struct{ Shape, Rate float64 }

// LogProbLog returns log p(x) at x = exp(u) and its derivative in u.
func (g Gamma) LogProbLog(u float64) (lp, dlp float64) {
	x := math.Exp(u)
	lg, _ := math.Lgamma(g.Shape)
	lp = g.Shape*math.Log(g.Rate) - lg + (g.Shape-1)*u - g.Rate*x
	return lp, (g.Shape - 1) - g.Rate*x
}

// LogNormal is the distribution of exp(N(Mu, Sigma²)).
type LogNormal struct{ Mu, Sigma float64 }

// LogProbLog returns log p(x) at x = exp(u) and its derivative in u.
func (l LogNormal) LogProbLog(u float64) (lp, dlp float64) {
	z := (u - l.Mu) / l.Sigma
	lp = -u - math.Log(l.Sigma) - 0.5*math.Log(2*math.Pi) - 0.5*z*z
	return lp, -1 - z/l.Sigma
}

// layout describes how the parameters are packed into the vector that the
// optimiser sees: log length-scales, log output scale, mean, log(noise -
// NoiseFloor), the inducing points (row-major, when learned), then the log
// warping concentrations a and b (when warping).
type layout struct {
	d, m         int  // input dimension, learned inducing points (0: none)
	warp         bool // warping parameters present
	learnZ       bool
	logS, mean   int
	noise, z     int
	warpA, warpB int
	size         int
}

func newLayout(d, m int, learnZ, warp bool) layout {
	l := layout{d: d, m: m, warp: warp, learnZ: learnZ && m > 0}
	l.logS = d
	l.mean = d + 1
	l.noise = d + 2
	l.z = d + 3
	next := l.z
	if l.learnZ {
		next += m * d
	}
	l.warpA, l.warpB = next, next+d
	if warp {
		next += 2 * d
	}
	l.size = next
	return l
}

// pack writes h (and z when learned) into a new parameter vector.
func (l layout) pack(h Hyper, z *mat.Dense) []float64 {
	theta := make([]float64, l.size)
	for k, v := range h.Lengthscales {
		theta[k] = math.Log(v)
	}
	theta[l.logS] = math.Log(h.Outputscale)
	theta[l.mean] = h.Mean
	theta[l.noise] = math.Log(math.Max(h.Noise-NoiseFloor, 1e-300))
	if l.learnZ {
		copy(theta[l.z:l.z+l.m*l.d], denseData(z))
	}
	if l.warp {
		for k := 0; k < l.d; k++ {
			theta[l.warpA+k] = math.Log(h.WarpA[k])
			theta[l.warpB+k] = math.Log(h.WarpB[k])
		}
	}
	return theta
}

// unpack reads the hyperparameters from theta; z, when learned, aliases theta.
func (l layout) unpack(theta []float64) (Hyper, []float64) {
	h := Hyper{Lengthscales: make([]float64, l.d)}
	for k := range h.Lengthscales {
		h.Lengthscales[k] = math.Exp(theta[k])
	}
	h.Outputscale = math.Exp(theta[l.logS])
	h.Mean = theta[l.mean]
	h.Noise = NoiseFloor + math.Exp(theta[l.noise])
	if l.warp {
		h.WarpA = make([]float64, l.d)
		h.WarpB = make([]float64, l.d)
		for k := 0; k < l.d; k++ {
			h.WarpA[k] = math.Exp(theta[l.warpA+k])
			h.WarpB[k] = math.Exp(theta[l.warpB+k])
		}
	}
	var z []float64
	if l.learnZ {
		z = theta[l.z : l.z+l.m*l.d]
	}
	return h, z
}

// logPrior returns the log prior density of theta and adds its gradient to
// grad (when non-nil).
func (l layout) logPrior(theta, grad []float64) float64 {
	lp := 0.0
	add := func(i int, p prior) {
		v, dv := p.LogProbLog(theta[i])
		lp += v
		if grad != nil {
			grad[i] += dv
		}
	}
	for k := 0; k < l.d; k++ {
		add(k, LengthscalePrior)
	}
	add(l.logS, OutputscalePrior)
	if l.warp {
		for k := 0; k < l.d; k++ {
			add(l.warpA+k, WarpPrior)
			add(l.warpB+k, WarpPrior)
		}
	}
	return lp
}

// denseData returns the row-major elements of m (copied if m is strided).
func denseData(m *mat.Dense) []float64 {
	raw := m.RawMatrix()
	if raw.Stride == raw.Cols {
		return raw.Data[:raw.Rows*raw.Cols]
	}
	out := make([]float64, 0, raw.Rows*raw.Cols)
	for i := 0; i < raw.Rows; i++ {
		out = append(out, raw.Data[i*raw.Stride:i*raw.Stride+raw.Cols]...)
	}
	return out
}
