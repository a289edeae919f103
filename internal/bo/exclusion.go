package bo

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// exclusion is an acquisition function penalised near points already
// tried, so that a redone acquisition step looks elsewhere without
// changing the GP: with ρ_t the latent radius of tried point t and s_t(x) =
// |z(x) - z_t|²/(2ρ_t²) the scaled squared latent distance to it, the penalty is
// φ(x) = Π_t (1 - exp(-s_t(x))), which is 0 at every tried point and close
// to 1 beyond a few ρ. EI is multiplied by φ (EI is non-negative) and log-EI
// gets log φ added.
type exclusion struct {
	inner acq.Acquisition
	log   bool
	pts   [][]float64 // tried points in the unit box
	inv   []float64   // per point: 1 / (2ρ_t²)
	w     []float64   // per dimension: (latent width)²
}

// triedPoint is a latent point an earlier attempt decoded to an object
// already seen, with the radius of its exclusion.
type triedPoint struct {
	z      []float64
	radius float64
}

// logFloor bounds log(1 - exp(-s)) from below at a tried point itself.
const logFloor = -700

func newExclusion(inner acq.Acquisition, log bool, nz gp.Normalizer, tried []triedPoint) *exclusion {
	e := &exclusion{inner: inner, log: log, w: make([]float64, len(nz.Lower))}
	for k := range e.w {
		width := nz.Upper[k] - nz.Lower[k]
		e.w[k] = width * width
	}
	for _, t := range tried {
		u := make([]float64, len(t.z))
		nz.TransformVec(u, t.z)
		e.pts = append(e.pts, u)
		e.inv = append(e.inv, 1/(2*t.radius*t.radius))
	}
	return e
}

// logPenalty returns log φ(x) and, when grad is non-nil, writes its
// gradient into grad.
func (e *exclusion) logPenalty(x, grad []float64) float64 {
	for k := range grad {
		grad[k] = 0
	}
	lp := 0.0
	for j, t := range e.pts {
		s := 0.0
		for k, w := range e.w {
			d := x[k] - t[k]
			s += w * d * d
		}
		s *= e.inv[j]
		l := math.Log(-math.Expm1(-s))
		if l < logFloor || math.IsNaN(l) {
			lp += logFloor
			continue
		}
		lp += l
		if grad != nil {
			// d/dx log(1 - e^{-s}) = s'(x) / (e^s - 1)
			c := 2 * e.inv[j] / math.Expm1(s)
			for k, w := range e.w {
				grad[k] += c * w * (x[k] - t[k])
			}
		}
	}
	return lp
}

// Eval returns the penalised acquisition value and its gradient.
func (e *exclusion) Eval(x, grad []float64) float64 {
	var gi, gl []float64
	if grad != nil {
		gi, gl = make([]float64, len(x)), make([]float64, len(x))
	}
	v := e.inner.Eval(x, gi)
	lp := e.logPenalty(x, gl)
	if e.log {
		for k := range grad {
			grad[k] = gi[k] + gl[k]
		}
		return v + lp
	}
	phi := math.Exp(lp)
	for k := range grad {
		grad[k] = phi * (gi[k] + v*gl[k])
	}
	return v * phi
}

// EvalBatch evaluates the rows of x (the raw samples of the maximiser).
func (e *exclusion) EvalBatch(x *mat.Dense, dst []float64) {
	e.inner.EvalBatch(x, dst)
	for i := range dst {
		lp := e.logPenalty(x.RawRowView(i), nil)
		if e.log {
			dst[i] += lp
		} else {
			dst[i] *= math.Exp(lp)
		}
	}
}
