package gp

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// gradBatchScratch is the workspace of PredictGradBatch: Q x d scaled
// inputs and chain factors, Q x M correlations, their derivative factors
// (Matérn only: the RBF kernel's are the correlations) and kC, and the
// per-row sums of the gradient weights.
type gradBatchScratch struct {
	xh, jac, k, kap, ck blas64.General
	xSq, sv, sc         []float64
}

// gradBatchPool keeps workspaces between calls (an acquisition maximiser
// calls PredictGradBatch a few hundred times with the same sizes).
var gradBatchPool = sync.Pool{New: func() any { return new(gradBatchScratch) }}

// PredictGradBatch is PredictGrad at each row of x (Q x Dim): it writes
// the means and variances into mean and variance (length Q) and the
// gradients of each with respect to the row into the rows of dmean and
// dvar (Q x Dim). The kernel vectors, k C and the gradients come from
// matrix products over all rows at once, so a row's values agree with
// PredictGrad's to the rounding of their dot products summed in another
// order; the elementwise steps are PredictGrad's, in its order.
func (m *Model) PredictGradBatch(x *mat.Dense, mean, variance []float64, dmean, dvar *mat.Dense) {
	q, d := x.Dims()
	if d != m.Dim() || len(mean) != q || len(variance) != q || !sameDims(dmean, q, d) || !sameDims(dvar, q, d) {
		panic(fmt.Sprintf("gp: PredictGradBatch with %d x %d inputs, %d/%d outputs and gradients %s/%s for a %d-dimensional model",
			q, d, len(mean), len(variance), dimsString(dmean), dimsString(dvar), m.Dim()))
	}
	if q == 0 {
		return
	}
	ws := gradBatchPool.Get().(*gradBatchScratch)
	defer gradBatchPool.Put(ws)
	mm := m.post.centres.Rows
	ws.xh, ws.jac = reshape(ws.xh, q, d), reshape(ws.jac, q, d)
	ws.k, ws.ck = reshape(ws.k, q, mm), reshape(ws.ck, q, mm)
	raw := x.RawMatrix()
	for i := 0; i < q; i++ {
		m.scale(raw.Data[i*raw.Stride:i*raw.Stride+d], ws.xh.Data[i*d:(i+1)*d], ws.jac.Data[i*d:(i+1)*d])
	}
	ws.xSq = rowSqNorms(ws.xh, ws.xSq)
	m.post.predictGradBatchScaled(m.kernel, ws, mean, variance, dmean.RawMatrix(), dvar.RawMatrix())
	dm, dv := dmean.RawMatrix(), dvar.RawMatrix()
	for i := 0; i < q; i++ {
		jac := ws.jac.Data[i*d : (i+1)*d]
		gm, gv := dm.Data[i*dm.Stride:i*dm.Stride+d], dv.Data[i*dv.Stride:i*dv.Stride+d]
		for k := 0; k < d; k++ {
			gm[k] *= jac[k]
			gv[k] *= jac[k]
		}
	}
}

// sameDims reports whether a is r x c.
func sameDims(a *mat.Dense, r, c int) bool {
	if a == nil {
		return false
	}
	ar, ac := a.Dims()
	return ar == r && ac == c
}

// dimsString describes a's shape for an error message.
func dimsString(a *mat.Dense) string {
	if a == nil {
		return "nil"
	}
	r, c := a.Dims()
	return fmt.Sprintf("%d x %d", r, c)
}

// predictGradBatchScaled is predictScaled at each row of ws.xh (whose
// squared norms are in ws.xSq), with the gradients written into the rows of
// dmean and dvar (with respect to the scaled inputs).
func (p *posterior) predictGradBatchScaled(k Kernel, ws *gradBatchScratch, mean, variance []float64, dmean, dvar blas64.General) {
	q, mm := ws.xh.Rows, p.centres.Rows
	// k_ij = s·corr(x̂_i, ẑ_j) and its derivative factor, from one dgemm.
	// The RBF kernel's factor is its correlation: kap aliases k then (the
	// loop below reads kap_ij before it overwrites k_ij).
	kap := ws.k
	if k == RBF {
		crossCorr(k, ws.xh, ws.xSq, p.centres, p.centresSq, ws.k, blas64.General{})
	} else {
		ws.kap = reshape(ws.kap, q, mm)
		kap = ws.kap
		crossCorr(k, ws.xh, ws.xSq, p.centres, p.centresSq, ws.k, ws.kap)
		for i := range kap.Data {
			kap.Data[i] *= p.s
		}
	}
	for i := range ws.k.Data {
		ws.k.Data[i] *= p.s
	}
	// kC for every row at once. C is stored in full and exactly symmetric,
	// so dgemm reads the same numbers as predictScaled's dsymv on its upper
	// triangle. OpenBLAS's dgemm skips dsymm's symmetric packing of C:
	// about the same CPU at 50 rows, some 9% less at 10 (the packing of
	// the M x M matrix weighs more on few rows; BenchmarkPredictGradBatch),
	// and it gave the same bits on every maximisation compared (issue 51).
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, ws.k, p.c, 0, ws.ck)
	if cap(ws.sv) < q {
		ws.sv, ws.sc = make([]float64, q), make([]float64, q)
	}
	sv, sc := ws.sv[:q], ws.sc[:q]
	floor := minVarRel * p.s
	for i := 0; i < q; i++ {
		kc, kap, ck := ws.k.Data[i*mm:(i+1)*mm], kap.Data[i*mm:(i+1)*mm], ws.ck.Data[i*mm:(i+1)*mm]
		mu, quad := p.mean, 0.0
		for j, kv := range kc {
			mu += kv * p.v[j]
		}
		for j, kv := range kc {
			quad += kv * ck[j]
		}
		mean[i], variance[i] = mu, p.s-quad
		clamped := !(variance[i] > floor)
		if clamped {
			variance[i] = floor
		}
		// The gradient weights v∘κ and Ck∘κ (see predictScaled), in place of
		// k and kC; a clamped variance has a zero gradient.
		sv[i], sc[i] = 0, 0
		for j := 0; j < mm; j++ {
			a, b := p.v[j]*kap[j], ck[j]*kap[j]
			if clamped {
				b = 0
			}
			kc[j], ck[j] = a, b
			sv[i] += a
			sc[i] += b
		}
	}
	// ∂mean/∂x̂ = Ẑᵀ(v∘κ) - (Σ v∘κ) x̂ and ∂var/∂x̂ = -2 [Ẑᵀ(Ck∘κ) - (Σ Ck∘κ) x̂],
	// for every row from one dgemm each.
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, ws.k, p.centres, 0, dmean)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, -2, ws.ck, p.centres, 0, dvar)
	d := p.centres.Cols
	for i := 0; i < q; i++ {
		xh := ws.xh.Data[i*d : (i+1)*d]
		gm, gv := dmean.Data[i*dmean.Stride:i*dmean.Stride+d], dvar.Data[i*dvar.Stride:i*dvar.Stride+d]
		for k := 0; k < d; k++ {
			gm[k] -= sv[i] * xh[k]
			gv[k] += 2 * sc[i] * xh[k]
		}
	}
}
