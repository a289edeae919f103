package gp

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// posterior holds what prediction needs after a fit: the scaled centres
// (inducing points, or training inputs for an exact GP), the weight vector
// v and the matrix C, so that for k = k(x, centres)
//
//	mean(x) = μ + kᵀv,  var(x) = s - kᵀ C k.
//
// For SGPR v = P⁻¹K_uf r/σ² and C = K_uu⁻¹ - P⁻¹ with P = K_uu + K_uf K_fu/σ²;
// for the exact GP v = K⁻¹r and C = K⁻¹ (K including the noise). C is
// stored in full and exactly symmetric (every writer symmetrises it), so
// that a product with it may read either triangle.
type posterior struct {
	centres   blas64.General
	centresSq []float64
	v         []float64
	c         blas64.General
	s, mean   float64
	cond      *conditioning // what Condition updates besides v and C
}

// set copies the given quantities into p.
func (p *posterior) set(centres blas64.General, sq, v []float64, c blas64.General, s, mean float64) {
	p.centres = blas64.General{Rows: centres.Rows, Cols: centres.Cols, Stride: centres.Cols,
		Data: append([]float64(nil), denseRows(centres)...)}
	p.centresSq = append([]float64(nil), sq...)
	p.v = append([]float64(nil), v...)
	p.c = blas64.General{Rows: c.Rows, Cols: c.Cols, Stride: c.Cols, Data: append([]float64(nil), denseRows(c)...)}
	p.s, p.mean = s, mean
}

// denseRows returns the rows of g back to back.
func denseRows(g blas64.General) []float64 {
	if g.Stride == g.Cols {
		return g.Data[:g.Rows*g.Cols]
	}
	out := make([]float64, 0, g.Rows*g.Cols)
	for i := 0; i < g.Rows; i++ {
		out = append(out, g.Data[i*g.Stride:i*g.Stride+g.Cols]...)
	}
	return out
}

// minVarRel is the floor of the latent variance relative to the output
// scale; rounding in s - kᵀCk can otherwise make it zero or negative.
const minVarRel = 1e-12

// predictScaled returns the latent mean and variance at the scaled input xh
// and, when dmean and dvar are non-nil, their gradients with respect to xh.
// kc, kap and ck are scratch of length M.
func (p *posterior) predictScaled(k Kernel, xh []float64, dmean, dvar []float64, kc, kap, ck []float64) (float64, float64) {
	m, d := p.centres.Rows, p.centres.Cols
	xSq := 0.0
	for _, v := range xh {
		xSq += v * v
	}
	// kc_j = centres_j · xh, then the kernel map.
	blas64.Gemv(blas.NoTrans, 1, p.centres, vec(xh), 0, vec(kc))
	for j := 0; j < m; j++ {
		c, kp := k.corr(xSq + p.centresSq[j] - 2*kc[j])
		kc[j] = p.s * c
		kap[j] = p.s * kp
	}
	mean := p.mean
	for j, kv := range kc {
		mean += kv * p.v[j]
	}
	blas64.Symv(1, blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: p.c.Stride, Data: p.c.Data}, vec(kc), 0, vec(ck))
	q := 0.0
	for j, kv := range kc {
		q += kv * ck[j]
	}
	variance := p.s - q
	clamped := false
	if floor := minVarRel * p.s; !(variance > floor) {
		variance, clamped = floor, true
	}
	if dmean == nil && dvar == nil {
		return mean, variance
	}
	// ∂k_j/∂x̂ = -κ_j (x̂ - ẑ_j), so
	// ∂mean/∂x̂ = Ẑᵀ(v∘κ) - (Σ v∘κ) x̂ and ∂var/∂x̂ = -2 [Ẑᵀ(Ck∘κ) - (Σ Ck∘κ) x̂].
	sv, sc := 0.0, 0.0
	for j := 0; j < m; j++ {
		a, b := p.v[j]*kap[j], ck[j]*kap[j]
		kc[j], ck[j] = a, b // reuse the scratch as weights
		sv += a
		sc += b
	}
	if dmean != nil {
		blas64.Gemv(blas.Trans, 1, p.centres, vec(kc), 0, vec(dmean))
		for i := 0; i < d; i++ {
			dmean[i] -= sv * xh[i]
		}
	}
	if dvar != nil {
		if clamped {
			clear(dvar)
		} else {
			blas64.Gemv(blas.Trans, -2, p.centres, vec(ck), 0, vec(dvar))
			for i := 0; i < d; i++ {
				dvar[i] += 2 * sc * xh[i]
			}
		}
	}
	return mean, variance
}

// predictBatchScaled fills mean and variance for the scaled inputs xh (Q x d).
func (p *posterior) predictBatchScaled(k Kernel, xh blas64.General, mean, variance []float64) {
	q, m := xh.Rows, p.centres.Rows
	kq := newGeneral(q, m)
	crossCorr(k, xh, rowSqNorms(xh, nil), p.centres, p.centresSq, kq, blas64.General{})
	// Correlations times s, then the mean and kᵀCk from one dgemm.
	for i := range kq.Data {
		kq.Data[i] *= p.s
	}
	blas64.Gemv(blas.NoTrans, 1, kq, vec(p.v), 0, vec(mean))
	kc := newGeneral(q, m)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, kq, p.c, 0, kc)
	floor := minVarRel * p.s
	for i := 0; i < q; i++ {
		mean[i] += p.mean
		s := 0.0
		a := kq.Data[i*m : (i+1)*m]
		for j, v := range kc.Data[i*m : (i+1)*m] {
			s += v * a[j]
		}
		variance[i] = math.Max(p.s-s, floor)
	}
}
