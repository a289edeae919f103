package gp

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// sparseKernels prepares what both sparse objectives share: the scaled
// inputs and inducing points, the correlations w.kc (N x M), K_uu (with
// jitter) in w.kuu, its Cholesky factor in w.l and the factor's inverse in
// w.linv. It returns the inducing points as a matrix and, for the gradient,
// the kernels' κ matrices (kap aliases w.kc for the RBF kernel).
func (o *Objective) sparseKernels(h Hyper, z []float64, wantGrad bool) (zg, kap, kapuu blas64.General, err error) {
	w := &o.ws
	n, d, m := o.x.Rows, o.x.Cols, o.lay.m
	s := h.Outputscale
	o.inputs(h, wantGrad)

	// The inducing points live in the input space and are warped like the
	// data, so that a change of warping moves both together.
	w.zh = reshape(w.zh, m, d)
	zg = blas64.General{Rows: m, Cols: d, Stride: d, Data: z}
	if h.Warped() {
		warpRows(zg, h, w.zh, nil)
	} else {
		copy(w.zh.Data, z)
	}
	for j := 0; j < m; j++ {
		for k := 0; k < d; k++ {
			w.zh.Data[j*d+k] /= h.Lengthscales[k]
		}
	}
	w.zhSq = rowSqNorms(w.zh, w.zhSq)

	// Correlations (without s) between data and inducing points.
	w.kc = reshape(w.kc, n, m)
	w.kuu = reshape(w.kuu, m, m)
	if wantGrad && o.spec.Kernel != RBF { // κ, stored only when it differs from the correlation
		w.kap = reshape(w.kap, n, m)
		w.kapuu = reshape(w.kapuu, m, m)
		kap, kapuu = w.kap, w.kapuu
	}
	crossCorr(o.spec.Kernel, w.xh, w.xhSq, w.zh, w.zhSq, w.kc, kap)
	crossCorr(o.spec.Kernel, w.zh, w.zhSq, w.zh, w.zhSq, w.kuu, kapuu)
	if o.spec.Kernel == RBF {
		kap = w.kc // κ = k/s for the RBF kernel
	}
	// K_uu = s (C_uu + jitter I), kept intact in w.kuu; factor a copy.
	for i, v := range w.kuu.Data {
		w.kuu.Data[i] = s * v
	}
	for j := 0; j < m; j++ {
		w.kuu.Data[j*m+j] = s * (1 + baseJitter)
	}
	w.l = reshape(w.l, m, m)
	copy(w.l.Data, w.kuu.Data)
	if w.kuuJit, err = cholesky(w.l, "K_uu (inducing-point covariance)"); err != nil {
		return zg, kap, kapuu, err
	}
	// L⁻¹ explicitly: triangular products run faster than triangular solves
	// in OpenBLAS, and the sandwiches of both objectives need several.
	w.linv = reshape(w.linv, m, m)
	copy(w.linv.Data, w.l.Data)
	if !lapack64.Trtri(lower(w.linv)) {
		return zg, kap, kapuu, fmt.Errorf("gp: inverse of the Cholesky factor of K_uu: %w", ErrNotPositiveDefinite)
	}
	return zg, kap, kapuu, nil
}

// sparseInputGrads adds to grad the part of the gradient that flows through
// the kernel matrices into the length-scales, the inducing points and the
// warping. w.g holds ∂F/∂K_fu except for a rank-one part alpha x yᵀ, added
// here, and guu holds ∂F/∂K_uu (symmetric); both are overwritten.
func (o *Objective) sparseInputGrads(h Hyper, zg, kap, kapuu, guu blas64.General, x, y []float64, alpha float64, grad []float64) {
	w := &o.ws
	m, d := o.lay.m, o.x.Cols
	s := h.Outputscale
	// W = G_fu ∘ ∂k (the kernel's κ times s), in place.
	rsW, csW := rankOneHadamard(w.g, x, y, alpha, kap, s, &w.rs)
	if o.spec.Kernel == RBF {
		// K_uu holds s (C_uu + jitter I); the jitter's diagonal does not
		// matter because the diagonal of W_uu cancels in ∂F/∂Ẑ.
		hadamardScaled(guu, w.kuu, 1)
	} else {
		hadamardScaled(guu, kapuu, s)
	}

	// ∂F/∂X̂ = W Ẑ - rowsum(W) ∘ X̂; ∂F/∂Ẑ = Wᵀ X̂ - colsum(W) ∘ Ẑ
	// + 2 (W_uu Ẑ - rowsum(W_uu) ∘ Ẑ).
	w.dzh = reshape(w.dzh, m, d)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, w.g, w.zh, 0, w.dxh)
	subRowScaled(w.dxh, w.xh, rsW)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, w.g, w.xh, 0, w.dzh)
	subRowScaled(w.dzh, w.zh, csW)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 2, guu, w.zh, 1, w.dzh)
	uu := rowSums(guu, nil)
	for j := range uu {
		uu[j] *= 2
	}
	subRowScaled(w.dzh, w.zh, uu)

	o.scaledGrads(h, o.x, w.xh, w.dxh, grad, nil)
	var gz []float64
	if o.lay.learnZ {
		gz = grad[o.lay.z : o.lay.z+m*d]
	}
	o.scaledGrads(h, zg, w.zh, w.dzh, grad, gz)
}
