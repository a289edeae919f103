package gp

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Spec describes the model whose fitting objective an Objective evaluates.
type Spec struct {
	// Kernel is the covariance function.
	Kernel Kernel
	// Inducing holds the M x d inducing points of a sparse GP (SGPR); nil
	// means the exact GP. When learned, these are only the layout's size and
	// the starting values come from the parameter vector.
	Inducing *mat.Dense
	// FixInducing keeps the inducing points out of the parameter vector.
	FixInducing bool
	// Warp adds Kumaraswamy input warping per dimension.
	Warp bool
	// NoPriors drops the hyperparameter priors (maximum likelihood instead
	// of MAP).
	NoPriors bool
	// Approximation is the sparse objective ("" is DefaultApproximation);
	// it does not matter for the exact GP.
	Approximation Approximation
}

// Objective is the function a fit maximises: the exact log marginal
// likelihood, or the Titsias collapsed evidence lower bound of a sparse GP,
// plus the log prior of the hyperparameters, as a function of a packed
// parameter vector (see Pack). It owns workspace, so it is not safe for
// concurrent use.
type Objective struct {
	x      blas64.General // N x d inputs in [0,1]^d
	y      []float64
	spec   Spec
	lay    layout
	zFixed []float64 // inducing points when not learned
	ws     workspace
}

// workspace holds the buffers reused across evaluations.
type workspace struct {
	xt, xh, dxh     blas64.General // warped, scaled inputs and their gradient
	xhSq, r, kv, rs []float64
	zh, dzh         blas64.General // scaled inducing points and gradient
	zhSq            []float64
	kc, kap, g      blas64.General // N x M (or N x N) correlations, κ, adjoint
	kuu, kapuu, l   blas64.General // M x M correlations, κ, Cholesky factor
	kuuJit          float64        // the jitter K_uu's factorisation added beyond baseJitter
	linv            blas64.General // inverse of the Cholesky factor
	t, lb, y1, y2   blas64.General
	b, c, v         []float64
	a               blas64.General // FITC: K_fu L⁻ᵀ
	lam             []float64      // FITC: the diagonal Λ
	clamped         []bool         // FITC: where K_ii - Q_ii < 0 was clamped to 0
}

// NewObjective returns the fitting objective for inputs x (N x d, expected
// in [0,1]^d) and targets y under spec.
func NewObjective(x *mat.Dense, y []float64, spec Spec) (*Objective, error) {
	if err := checkData(x, y); err != nil {
		return nil, err
	}
	if !spec.Kernel.valid() {
		return nil, fmt.Errorf("gp: unknown kernel %v", spec.Kernel)
	}
	approx, err := ParseApproximation(string(spec.Approximation))
	if err != nil {
		return nil, err
	}
	spec.Approximation = approx
	_, d := x.Dims()
	o := &Objective{x: toGeneral(x), y: append([]float64(nil), y...), spec: spec}
	m := 0
	if spec.Inducing != nil {
		var dz int
		m, dz = spec.Inducing.Dims()
		if dz != d {
			return nil, fmt.Errorf("gp: inducing points have %d columns, inputs have %d", dz, d)
		}
		if m < 1 {
			return nil, fmt.Errorf("gp: no inducing points")
		}
		if !allFinite(denseData(spec.Inducing)) {
			return nil, fmt.Errorf("gp: inducing points contain NaN or Inf")
		}
		if spec.FixInducing {
			o.zFixed = append([]float64(nil), denseData(spec.Inducing)...)
		}
	}
	o.lay = newLayout(d, m, !spec.FixInducing, spec.Warp)
	return o, nil
}

// Len returns the length of the parameter vector.
func (o *Objective) Len() int { return o.lay.size }

// Sparse reports whether the objective is the SGPR bound.
func (o *Objective) Sparse() bool { return o.spec.Inducing != nil }

// Pack returns the parameter vector for h and, for a sparse objective with
// learned inducing points, z (M x d; nil uses spec.Inducing).
func (o *Objective) Pack(h Hyper, z *mat.Dense) ([]float64, error) {
	if err := h.validate(o.lay.d); err != nil {
		return nil, err
	}
	if h.Warped() != o.spec.Warp {
		return nil, fmt.Errorf("gp: hyperparameters warped=%v, objective warped=%v", h.Warped(), o.spec.Warp)
	}
	if z == nil {
		z = o.spec.Inducing
	}
	if o.lay.learnZ {
		if r, c := z.Dims(); r != o.lay.m || c != o.lay.d {
			return nil, fmt.Errorf("gp: inducing points are %d x %d, want %d x %d", r, c, o.lay.m, o.lay.d)
		}
	}
	return o.lay.pack(h, z), nil
}

// Unpack returns the hyperparameters and inducing points (nil for an exact
// GP) encoded in theta.
func (o *Objective) Unpack(theta []float64) (Hyper, *mat.Dense) {
	h, z := o.lay.unpack(theta)
	if !o.Sparse() {
		return h, nil
	}
	if z == nil {
		z = o.zFixed
	}
	return h, mat.NewDense(o.lay.m, o.lay.d, append([]float64(nil), z...))
}

// Eval returns the objective at theta (log marginal likelihood or bound,
// plus log prior) and, when grad is non-nil, writes its gradient there.
func (o *Objective) Eval(theta, grad []float64) (float64, error) {
	if len(theta) != o.lay.size || (grad != nil && len(grad) != o.lay.size) {
		return 0, fmt.Errorf("gp: parameter vector has length %d, want %d", len(theta), o.lay.size)
	}
	return o.eval(theta, grad, nil)
}

// eval computes the objective, its gradient (grad non-nil) and the
// posterior (post non-nil).
func (o *Objective) eval(theta, grad []float64, post *posterior) (float64, error) {
	if grad != nil {
		clear(grad)
	}
	h, z := o.lay.unpack(theta)
	if z == nil {
		z = o.zFixed
	}
	var f float64
	var err error
	switch {
	case o.Sparse() && o.spec.Approximation == FITC:
		f, err = o.evalFITC(h, z, grad, post)
	case o.Sparse():
		f, err = o.evalSparse(h, z, grad, post)
	default:
		f, err = o.evalExact(h, grad, post)
	}
	if err != nil {
		return math.NaN(), err
	}
	if !o.spec.NoPriors {
		f += o.lay.logPrior(theta, grad)
	}
	return f, nil
}

// inputs fills the warped (xt) and scaled (xh) inputs and the residuals.
func (o *Objective) inputs(h Hyper, wantGrad bool) {
	w := &o.ws
	n, d := o.x.Rows, o.x.Cols
	w.xh = reshape(w.xh, n, d)
	if h.Warped() {
		w.xt = reshape(w.xt, n, d)
		warpRows(o.x, h, w.xt, nil)
	} else {
		w.xt = o.x
	}
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			w.xh.Data[i*d+k] = w.xt.Data[i*w.xt.Stride+k] / h.Lengthscales[k]
		}
	}
	w.xhSq = rowSqNorms(w.xh, w.xhSq)
	w.r = resize(w.r, n)
	for i, v := range o.y {
		w.r[i] = v - h.Mean
	}
	if wantGrad {
		w.dxh = reshape(w.dxh, n, d)
	}
}

// evalSparse evaluates the collapsed bound
//
//	F = log N(y | μ, Q + σ²I) - tr(K_ff - Q)/(2σ²),  Q = K_fu K_uu⁻¹ K_uf,
//
// through Ψ₂ = K_uf K_fu, T = L⁻¹Ψ₂L⁻ᵀ/σ² and B = I + T (L Lᵀ = K_uu), so
// the N-sized work is one dsyrk and, for the gradient, one dgemm on N x M.
func (o *Objective) evalSparse(h Hyper, z []float64, grad []float64, post *posterior) (float64, error) {
	w := &o.ws
	n, m := o.x.Rows, o.lay.m
	s, sig2 := h.Outputscale, h.Noise
	zg, kap, kapuu, err := o.sparseKernels(h, z, grad != nil)
	if err != nil {
		return 0, err
	}
	L := lower(w.l)

	// Ψ₂ = s² C_fuᵀ C_fu (upper, then mirrored) and b = K_uf r.
	w.t = reshape(w.t, m, m)
	blas64.Syrk(blas.Trans, s*s, w.kc, 0, blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: w.t.Data})
	symmetrizeFromUpper(w.t)
	psi2 := append(w.y2.Data[:0], w.t.Data...) // kept for the gradient
	w.y2 = blas64.General{Rows: m, Cols: m, Stride: m, Data: psi2}
	w.b = resize(w.b, m)
	blas64.Gemv(blas.Trans, s, w.kc, vec(w.r), 0, vec(w.b))

	Linv := lower(w.linv)

	// T = L⁻¹ Ψ₂ L⁻ᵀ / σ², B = I + T.
	whiten(Linv, w.t, 1/sig2)
	w.lb = reshape(w.lb, m, m)
	copy(w.lb.Data, w.t.Data)
	trT := 0.0
	for j := 0; j < m; j++ {
		trT += w.t.Data[j*m+j]
		w.lb.Data[j*m+j] += 1
	}
	if _, err := cholesky(w.lb, "B = I + L⁻¹Ψ₂L⁻ᵀ/σ²"); err != nil {
		return 0, err
	}
	LB := lower(w.lb)

	// c = LB⁻¹ L⁻¹ b / σ².
	w.c = resize(w.c, m)
	copy(w.c, w.b)
	blas64.Trsv(blas.NoTrans, L, vec(w.c))
	blas64.Trsv(blas.NoTrans, LB, vec(w.c))
	cc, yy := 0.0, 0.0
	for j := range w.c {
		w.c[j] /= sig2
		cc += w.c[j] * w.c[j]
	}
	for _, v := range w.r {
		yy += v * v
	}
	nf := float64(n)
	f := -0.5*nf*math.Log(2*math.Pi) - logDetChol(w.lb) - 0.5*nf*math.Log(sig2) -
		0.5*yy/sig2 + 0.5*cc - 0.5*nf*s/sig2 + 0.5*trT
	if grad == nil && post == nil {
		return f, nil
	}

	// v = L⁻ᵀ LB⁻ᵀ c = P⁻¹ b / σ² with P = K_uu + Ψ₂/σ².
	w.v = resize(w.v, m)
	copy(w.v, w.c)
	blas64.Trsv(blas.Trans, LB, vec(w.v))
	blas64.Trsv(blas.Trans, L, vec(w.v))
	if post != nil {
		post.cond = sparseConditioning(w.l, w.lb, w.c, w.linv, false, sig2)
		post.cond.keepData(w.xh, w.xhSq, w.r, w.kuuJit, m)
	}
	// Y1 = L⁻ᵀ (I - B⁻¹) L⁻¹ = K_uu⁻¹ - P⁻¹, also the predictive matrix.
	if err := cholInverse(w.lb); err != nil {
		return 0, err
	}
	trBinv := 0.0
	w.y1 = reshape(w.y1, m, m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			w.y1.Data[i*m+j] = -w.lb.Data[i*m+j]
		}
		trBinv += w.lb.Data[i*m+i]
		w.y1.Data[i*m+i] += 1
	}
	unwhiten(Linv, w.y1)
	if post != nil {
		post.set(w.zh, w.zhSq, w.v, w.y1, s, h.Mean)
	}
	if grad == nil {
		return f, nil
	}

	// Adjoints. S = ∂F/∂Ψ₂, G_uu = ∂F/∂K_uu, G_fu = ∂F/∂K_fu = 2 K_fu S + r vᵀ/σ².
	// Y2 = L⁻ᵀ T L⁻¹ = K_uu⁻¹ Ψ₂ K_uu⁻¹ / σ² (in w.lb, no longer needed).
	copy(w.lb.Data, w.t.Data)
	unwhiten(Linv, w.lb)
	S, Guu := w.t, w.lb // T is no longer needed either
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			vv := w.v[i] * w.v[j]
			sij := (w.y1.Data[i*m+j] - vv) / (2 * sig2)
			S.Data[i*m+j] = sij
			Guu.Data[i*m+j] = sig2*sij - 0.5*w.lb.Data[i*m+j]
		}
	}
	trSPsi, sumGK := 0.0, 0.0
	for i, sv := range S.Data {
		trSPsi += sv * psi2[i]
		sumGK += Guu.Data[i] * w.kuu.Data[i]
	}
	w.kv = resize(w.kv, n)
	blas64.Gemv(blas.NoTrans, s, w.kc, vec(w.v), 0, vec(w.kv))
	vPsiV, sumKv, sumR, bv := 0.0, 0.0, 0.0, 0.0
	for i, kv := range w.kv {
		vPsiV += kv * kv
		sumKv += kv
		sumR += w.r[i]
	}
	for j := range w.b {
		bv += w.b[j] * w.v[j]
	}
	lay := o.lay
	grad[lay.logS] = 2*trSPsi + bv/sig2 + sumGK - 0.5*nf*s/sig2
	mf := float64(m)
	dSig2 := -0.5*nf/sig2 + 0.5*(yy+nf*s)/(sig2*sig2) + 0.5*(mf-trBinv)/sig2 -
		cc/sig2 + 0.5*vPsiV/(sig2*sig2) - 0.5*trT/sig2
	grad[lay.noise] = dSig2 * (sig2 - NoiseFloor)
	grad[lay.mean] = (sumR - sumKv) / sig2

	// G_fu without its rank-one part r vᵀ/σ², added by sparseInputGrads.
	w.g = reshape(w.g, n, m)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 2*s, w.kc, S, 0, w.g)
	o.sparseInputGrads(h, zg, kap, kapuu, Guu, w.r, w.v, 1/sig2, grad)
	return f, nil
}

// scaledGrads takes the gradient dsh of F with respect to scaled inputs sh
// = w(src)/ℓ (rows are points) and adds its length-scale part
// (-Σ_i dsh_ik sh_ik per log ℓ_k) and its warping part to grad; when dsrc is
// non-nil it receives the gradient with respect to src.
func (o *Objective) scaledGrads(h Hyper, src, sh, dsh blas64.General, grad, dsrc []float64) {
	n, d := src.Rows, src.Cols
	for k := 0; k < d; k++ {
		g := 0.0
		for i := 0; i < n; i++ {
			g += dsh.Data[i*d+k] * sh.Data[i*d+k]
		}
		grad[k] -= g
	}
	if !h.Warped() {
		if dsrc != nil {
			for i := 0; i < n; i++ {
				for k := 0; k < d; k++ {
					dsrc[i*d+k] = dsh.Data[i*d+k] / h.Lengthscales[k]
				}
			}
		}
		return
	}
	lay := o.lay
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			dwarped := dsh.Data[i*d+k] / h.Lengthscales[k]
			_, dx, da, db := kumaraswamy(src.Data[i*src.Stride+k], h.WarpA[k], h.WarpB[k])
			grad[lay.warpA+k] += dwarped * da * h.WarpA[k]
			grad[lay.warpB+k] += dwarped * db * h.WarpB[k]
			if dsrc != nil {
				dsrc[i*d+k] = dwarped * dx
			}
		}
	}
}

// evalExact evaluates the log marginal likelihood
// log N(y | μ1, s C + σ²I) and its gradient.
func (o *Objective) evalExact(h Hyper, grad []float64, post *posterior) (float64, error) {
	w := &o.ws
	n := o.x.Rows
	s, sig2 := h.Outputscale, h.Noise
	wantGrad := grad != nil
	o.inputs(h, wantGrad)
	w.kc = reshape(w.kc, n, n)
	var kap blas64.General
	if wantGrad && o.spec.Kernel != RBF {
		w.kap = reshape(w.kap, n, n)
		kap = w.kap
	}
	crossCorr(o.spec.Kernel, w.xh, w.xhSq, w.xh, w.xhSq, w.kc, kap)
	if o.spec.Kernel == RBF {
		kap = w.kc
	}
	w.l = reshape(w.l, n, n)
	for i, v := range w.kc.Data {
		w.l.Data[i] = s * v
	}
	for i := 0; i < n; i++ {
		w.kc.Data[i*n+i] = 1 // exact, whatever the rounding of the distance
		w.l.Data[i*n+i] = s + sig2
	}
	jit, err := cholesky(w.l, "K + σ²I (data covariance)")
	if err != nil {
		return 0, err
	}
	L := lower(w.l)
	w.v = resize(w.v, n)
	copy(w.v, w.r)
	blas64.Trsv(blas.NoTrans, L, vec(w.v))
	ra := 0.0
	for _, v := range w.v {
		ra += v * v
	}
	blas64.Trsv(blas.Trans, L, vec(w.v)) // α = K⁻¹ r
	f := -0.5*ra - logDetChol(w.l) - 0.5*float64(n)*math.Log(2*math.Pi)
	if grad == nil && post == nil {
		return f, nil
	}
	if post != nil {
		post.cond = exactConditioning(w.l, w.r, sig2, jit)
	}
	if err := cholInverse(w.l); err != nil {
		return 0, err
	}
	if post != nil {
		post.set(w.xh, w.xhSq, w.v, w.l, s, h.Mean)
	}
	if grad == nil {
		return f, nil
	}
	// G = ∂F/∂K = (ααᵀ - K⁻¹)/2, in place of K⁻¹.
	G := w.l
	trG, sumGC, sumA := 0.0, 0.0, 0.0
	for i := 0; i < n; i++ {
		sumA += w.v[i]
		for j := 0; j < n; j++ {
			g := 0.5 * (w.v[i]*w.v[j] - G.Data[i*n+j])
			G.Data[i*n+j] = g
			sumGC += g * w.kc.Data[i*n+j]
		}
		trG += G.Data[i*n+i]
	}
	lay := o.lay
	grad[lay.logS] = s * sumGC
	grad[lay.noise] = trG * (sig2 - NoiseFloor)
	grad[lay.mean] = sumA
	// ∂F/∂X̂ = 2 (W X̂ - rowsum(W) ∘ X̂) with W = G ∘ s κ (symmetric).
	hadamardScaled(G, kap, s)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 2, G, w.xh, 0, w.dxh)
	rs := rowSums(G, &w.rs)
	for i := range rs {
		rs[i] *= 2
	}
	subRowScaled(w.dxh, w.xh, rs)
	o.scaledGrads(h, o.x, w.xh, w.dxh, grad, nil)
	return f, nil
}

// whiten overwrites the symmetric a with alpha L⁻¹ a L⁻ᵀ, given linv = L⁻¹.
func whiten(linv blas64.Triangular, a blas64.General, alpha float64) {
	blas64.Trmm(blas.Left, blas.NoTrans, 1, linv, a)
	blas64.Trmm(blas.Right, blas.Trans, alpha, linv, a)
	symmetrizeAverage(a)
}

// unwhiten overwrites the symmetric a with L⁻ᵀ a L⁻¹, given linv = L⁻¹.
func unwhiten(linv blas64.Triangular, a blas64.General) {
	blas64.Trmm(blas.Left, blas.Trans, 1, linv, a)
	blas64.Trmm(blas.Right, blas.NoTrans, 1, linv, a)
	symmetrizeAverage(a)
}

// symmetrizeAverage replaces a by (a + aᵀ)/2, removing rounding asymmetry.
func symmetrizeAverage(a blas64.General) {
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < i; j++ {
			v := 0.5 * (a.Data[i*a.Stride+j] + a.Data[j*a.Stride+i])
			a.Data[i*a.Stride+j], a.Data[j*a.Stride+i] = v, v
		}
	}
}

// rankOneHadamard sets g = (g + alpha x yᵀ) ∘ (s b) elementwise in one pass
// over the N x M matrices and returns the row and column sums of the result
// (the row sums in *rowBuf).
func rankOneHadamard(g blas64.General, x, y []float64, alpha float64, b blas64.General, s float64, rowBuf *[]float64) (rows, cols []float64) {
	*rowBuf = resize(*rowBuf, g.Rows)
	rows = *rowBuf
	// Per-chunk column sums, added in chunk order so that the result does
	// not depend on goroutine scheduling.
	var mu sync.Mutex
	partial := map[int][]float64{}
	parallelFor(g.Rows, g.Cols, func(lo, hi int) {
		cs := make([]float64, g.Cols)
		for i := lo; i < hi; i++ {
			gr := g.Data[i*g.Stride : i*g.Stride+g.Cols]
			br := b.Data[i*b.Stride : i*b.Stride+b.Cols]
			ax, rs := alpha*x[i], 0.0
			for j, gv := range gr {
				v := (gv + ax*y[j]) * s * br[j]
				gr[j] = v
				rs += v
				cs[j] += v
			}
			rows[i] = rs
		}
		mu.Lock()
		partial[lo] = cs
		mu.Unlock()
	})
	cols = make([]float64, g.Cols)
	for _, lo := range slices.Sorted(maps.Keys(partial)) {
		for j, v := range partial[lo] {
			cols[j] += v
		}
	}
	return rows, cols
}

// hadamardScaled sets a = a ∘ (s b) elementwise.
func hadamardScaled(a, b blas64.General, s float64) {
	parallelFor(a.Rows, a.Cols, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			ar := a.Data[i*a.Stride : i*a.Stride+a.Cols]
			br := b.Data[i*b.Stride : i*b.Stride+b.Cols]
			for j := range ar {
				ar[j] *= s * br[j]
			}
		}
	})
}

// rowSums returns the row sums of a, in *buf when it is large enough.
func rowSums(a blas64.General, buf *[]float64) []float64 {
	var out []float64
	if buf != nil {
		*buf = resize(*buf, a.Rows)
		out = *buf
	} else {
		out = make([]float64, a.Rows)
	}
	for i := 0; i < a.Rows; i++ {
		s := 0.0
		for _, v := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
			s += v
		}
		out[i] = s
	}
	return out
}

// colSums returns the column sums of a.
func colSums(a blas64.General) []float64 {
	out := make([]float64, a.Cols)
	for i := 0; i < a.Rows; i++ {
		for j, v := range a.Data[i*a.Stride : i*a.Stride+a.Cols] {
			out[j] += v
		}
	}
	return out
}

// subRowScaled sets dst_i -= w_i x_i for every row i.
func subRowScaled(dst, x blas64.General, w []float64) {
	for i := 0; i < dst.Rows; i++ {
		dr := dst.Data[i*dst.Stride : i*dst.Stride+dst.Cols]
		xr := x.Data[i*x.Stride : i*x.Stride+x.Cols]
		for k := range dr {
			dr[k] -= w[i] * xr[k]
		}
	}
}

// warpRows fills dst with the Kumaraswamy-warped rows of x and, when dx is
// non-nil, the elementwise derivative dw/dx.
func warpRows(x blas64.General, h Hyper, dst blas64.General, dx []float64) {
	d := x.Cols
	for i := 0; i < x.Rows; i++ {
		for k := 0; k < d; k++ {
			wv, dv, _, _ := kumaraswamy(x.Data[i*x.Stride+k], h.WarpA[k], h.WarpB[k])
			dst.Data[i*dst.Stride+k] = wv
			if dx != nil {
				dx[i*d+k] = dv
			}
		}
	}
}

func vec(x []float64) blas64.Vector { return blas64.Vector{N: len(x), Inc: 1, Data: x} }

// resize returns s with length n, reusing its storage when possible.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// toGeneral copies m into a compact row-major matrix.
func toGeneral(m *mat.Dense) blas64.General {
	r, c := m.Dims()
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: append([]float64(nil), denseData(m)...)}
}

func allFinite(s []float64) bool {
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// checkData validates training inputs and targets.
func checkData(x *mat.Dense, y []float64) error {
	if x == nil {
		return fmt.Errorf("gp: no training inputs")
	}
	n, d := x.Dims()
	if n < 2 {
		return fmt.Errorf("gp: %d training points, need at least 2", n)
	}
	if d < 1 {
		return fmt.Errorf("gp: inputs have no columns")
	}
	if len(y) != n {
		return fmt.Errorf("gp: %d inputs but %d targets", n, len(y))
	}
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			if v := raw.Data[i*raw.Stride+k]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("gp: input row %d, column %d is %v", i, k, v)
			}
		}
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("gp: target %d is %v", i, v)
		}
	}
	return nil
}
