package bo

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// EvalGradBatch evaluates the rows of x with their gradients (the
// maximiser's restarts in lockstep): the inner acquisition's batch, then
// each row's penalty as Eval applies it.
func (e *exclusion) EvalGradBatch(x *mat.Dense, dst []float64, grad *mat.Dense) {
	e.inner.EvalGradBatch(x, dst, grad)
	_, d := x.Dims()
	gl := make([]float64, d)
	for i, v := range dst {
		lp := e.logPenalty(x.RawRowView(i), gl)
		gi := grad.RawRowView(i)
		if e.log {
			for k := range gi {
				gi[k] += gl[k]
			}
			dst[i] = v + lp
			continue
		}
		phi := math.Exp(lp)
		for k := range gi {
			gi[k] = phi * (gi[k] + v*gl[k])
		}
		dst[i] = v * phi
	}
}
