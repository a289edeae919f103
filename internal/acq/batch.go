package acq

import (
	"gonum.org/v1/gonum/mat"
)

// GradBatchModel is a Model that also predicts with input gradients at many
// points at once (*gp.Model).
type GradBatchModel interface {
	Model
	// PredictGradBatch writes the means and variances at the rows of x into
	// mean and variance and their gradients into the rows of dmean and dvar.
	PredictGradBatch(x *mat.Dense, mean, variance []float64, dmean, dvar *mat.Dense)
}

// GradBatchFunction is a BatchFunction that also evaluates gradients at
// many points at once; Maximize then refines its restarts in lockstep, one
// call for the current point of every restart of a chunk (see
// Options.Sequential and Options.Workers: the calls for different chunks
// may come from several goroutines at once).
type GradBatchFunction interface {
	BatchFunction
	// EvalGradBatch writes the values at the rows of x into dst and the
	// gradients into the rows of grad (the shape of x).
	EvalGradBatch(x *mat.Dense, dst []float64, grad *mat.Dense)
}

// EvalGradBatch writes the acquisition values at the rows of x into dst and
// their gradients into the rows of grad. A GradBatchModel predicts all rows
// at once (its rows agree with Eval's to the rounding of reordered dot
// products); another model is evaluated row by row, exactly as Eval.
func (a Acquisition) EvalGradBatch(x *mat.Dense, dst []float64, grad *mat.Dense) {
	gm, ok := a.Model.(GradBatchModel)
	if !ok {
		for i := range dst {
			dst[i] = a.Eval(x.RawRowView(i), grad.RawRowView(i))
		}
		return
	}
	q, d := x.Dims()
	buf := make([]float64, 2*q+q*d)
	mean, variance := buf[:q], buf[q:2*q]
	dvar := mat.NewDense(q, d, buf[2*q:])
	gm.PredictGradBatch(x, mean, variance, grad, dvar)
	for i := range dst {
		v, dm, dv := a.value(mean[i], variance[i])
		g, gv := grad.RawRowView(i), dvar.RawRowView(i)
		for k := range g {
			g[k] = dm*g[k] + dv*gv[k]
		}
		dst[i] = v
	}
}
