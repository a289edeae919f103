package gp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// conditioning is what Condition needs beyond the posterior's v and C.
//
// Sparse GP: the Cholesky factor of P = K_uu + K_uf Λ⁻¹ K_fu (Λ = σ²I for
// Titsias, diag(σ² + max(s - q_ii, 0)) for FITC), b = K_uf Λ⁻¹ r (so that
// v = P⁻¹b) and L⁻¹ with L Lᵀ = K_uu (for q_ii and the Titsias bound's
// trace term). A new point adds k kᵀ/λ to P and k r/λ to b (k = K_u,x):
// a rank-one update, since λ of the other points does not change.
//
// Exact GP: the Cholesky factor of K + σ²I and the residuals r = y - μ; a
// new point borders the factor with one row.
type conditioning struct {
	chol  *mat.Cholesky
	b     []float64      // sparse: K_uf Λ⁻¹ r; exact: r
	linv  blas64.General // sparse: L⁻¹ (lower; shared, never written); exact: empty
	fitc  bool
	noise float64 // σ²
	jit   float64 // exact: the jitter the factorisation added to the diagonal;
	// Titsias: K_uu's beyond baseJitter

	// Titsias only (nil otherwise), for ConditionGrow: the scaled inputs of
	// every point the posterior holds (N x d, row after row), their squared
	// norms and residuals y - μ. Slices shared between a model and those
	// conditioned from it: appends go through slices.Clip, never in place.
	xs, xsSq, r []float64
	// fitCorr holds the correlations of the points the posterior was built
	// on with its inducing points, made when the first inducing point is
	// added and shared by every model conditioned from it; grown holds those
	// points' correlations with each inducing point added since (same
	// sharing as xs).
	fitCorr *fitCorrelations
	grown   [][]float64
}

// fitCorrelations is the N0 x M0 matrix of correlations between the N0
// points a Titsias posterior was built on and its M0 inducing points (the
// first rows of xs and of the centres, which conditioning never changes),
// made once, on first use: adding an inducing point then needs the
// kernel's values at the new point only.
type fitCorrelations struct {
	xs   blas64.General // the N0 points' scaled inputs (conditioning.xs's first rows)
	xsSq []float64
	m    int
	once sync.Once
	kc   blas64.General
}

// get returns the correlations, making them with the first m of centres on
// the first call.
func (f *fitCorrelations) get(k Kernel, centres blas64.General, centresSq []float64) blas64.General {
	f.once.Do(func() {
		z := blas64.General{Rows: f.m, Cols: centres.Cols, Stride: centres.Stride, Data: centres.Data}
		f.kc = newGeneral(f.xs.Rows, f.m)
		crossCorr(k, f.xs, f.xsSq, z, centresSq[:f.m], f.kc, blas64.General{})
	})
	return f.kc
}

// keepData records, for a Titsias posterior with m inducing points, the
// scaled inputs xh (N x d), their squared norms, the residuals r and
// K_uu's extra jitter, which adding an inducing point needs
// (ConditionGrow).
func (cd *conditioning) keepData(xh blas64.General, xhSq, r []float64, kuuJit float64, m int) {
	cd.xs = append([]float64(nil), denseRows(xh)...)
	cd.xsSq = append([]float64(nil), xhSq[:xh.Rows]...)
	cd.r = append([]float64(nil), r[:xh.Rows]...)
	cd.jit = kuuJit
	cd.fitCorr = &fitCorrelations{xs: blas64.General{Rows: xh.Rows, Cols: xh.Cols, Stride: xh.Cols, Data: cd.xs},
		xsSq: cd.xsSq, m: m}
}

// sparseConditioning returns the sparse GP's conditioning state from the
// factors an objective evaluation leaves: L (K_uu = L Lᵀ) and L_B (B = L_B
// L_Bᵀ, P = L B Lᵀ) in the lower triangles of l and lb, c = (L L_B)⁻¹ b and
// L⁻¹ in the lower triangle of linv.
func sparseConditioning(l, lb blas64.General, c []float64, linv blas64.General, fitc bool, sig2 float64) *conditioning {
	m := l.Rows
	// The factor of P is L L_B (lower times lower); gonum keeps Uᵀ U, U = (L L_B)ᵀ.
	x := newGeneral(m, m)
	for i := 0; i < m; i++ {
		copy(x.Data[i*m:i*m+i+1], lb.Data[i*lb.Stride:i*lb.Stride+i+1])
	}
	blas64.Trmm(blas.Left, blas.NoTrans, 1, lower(l), x)
	b := append([]float64(nil), c...)
	blas64.Trmv(blas.NoTrans, lower(x), vec(b))
	li := newGeneral(m, m)
	for i := 0; i < m; i++ {
		copy(li.Data[i*m:i*m+i+1], linv.Data[i*linv.Stride:i*linv.Stride+i+1])
	}
	return &conditioning{chol: cholFromLower(x), b: b, linv: li, fitc: fitc, noise: sig2}
}

// exactConditioning returns the exact GP's conditioning state: the factor
// of K + σ²I (+ jit I) in the lower triangle of l and the residuals r.
func exactConditioning(l blas64.General, r []float64, sig2, jit float64) *conditioning {
	return &conditioning{chol: cholFromLower(l), b: append([]float64(nil), r...), noise: sig2, jit: jit}
}

// cholFromLower returns the gonum Cholesky decomposition whose factor is
// the lower triangle of l (row-major).
func cholFromLower(l blas64.General) *mat.Cholesky {
	n := l.Rows
	u := mat.NewTriDense(n, mat.Upper, nil)
	raw := u.RawTriangular()
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			raw.Data[j*raw.Stride+i] = l.Data[i*l.Stride+j]
		}
	}
	var ch mat.Cholesky
	ch.SetFromU(u)
	return &ch
}

// Condition returns the model conditioned on further observations: targets
// y (on the scale of the model's training targets: standardised by the
// caller as they were) at the inputs x (rows of length Dim in the unit box,
// which the model warps and scales as it did its training inputs), with
// its hyperparameters and inducing points kept. The result is the posterior
// that New gives on all the points with the same hyperparameters and
// inducing points, to rounding; LogLik follows (the bound or marginal
// likelihood of all the points), Info and LogPrior stay the fit's. m is
// unchanged, so that a caller can branch from it.
//
// The points join one at a time, in order. For a sparse GP each is a
// rank-one update of the Cholesky factor of P = K_uu + K_uf Λ⁻¹ K_fu (Λ =
// σ²I for Titsias; for FITC the point's own σ² + k_xx - q_xx, which the
// other points' do not depend on) and of the M x M predictive matrix: O(M²)
// a point, against O(N M²) for New on all N points. For the exact GP the
// Cholesky factor of K + σ²I is bordered with the point's row: O(N²) a
// point, against O(N³).
func (m *Model) Condition(x [][]float64, y []float64) (*Model, error) {
	return m.condition(x, y, -1)
}

// condition is Condition, and ConditionGrow when tol >= 0.
func (m *Model) condition(x [][]float64, y []float64, tol float64) (*Model, error) {
	if len(x) != len(y) {
		return nil, fmt.Errorf("gp: condition on %d inputs and %d targets", len(x), len(y))
	}
	d := m.Dim()
	for i, row := range x {
		if len(row) != d {
			return nil, fmt.Errorf("gp: condition: input %d has %d values for a %d-dimensional model", i, len(row), d)
		}
		if !allFinite(row) {
			return nil, fmt.Errorf("gp: condition: input %d has NaN or Inf values: %v", i, row)
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return nil, fmt.Errorf("gp: condition: target %d is %v", i, y[i])
		}
	}
	if m.post.cond == nil {
		return nil, errors.New("gp: condition: the model holds no factors to condition (not made by New or Fit)")
	}
	grow := tol >= 0 && m.inducing != nil
	if grow && (m.approx != Titsias || m.post.cond.xs == nil) {
		return nil, fmt.Errorf("gp: growing the inducing points needs the Titsias posterior, not %s", m.approx)
	}
	if len(x) == 0 {
		return m, nil
	}
	out := m.cloneForCondition()
	xh := make([]float64, d)
	for i, row := range x {
		m.scale(row, xh, nil)
		var err error
		if grow {
			err = out.growInducing(row, xh, tol)
		}
		if err == nil && out.inducing != nil {
			err = out.addSparse(xh, y[i])
		} else if err == nil {
			err = out.addExact(xh, y[i])
		}
		if err != nil {
			return nil, fmt.Errorf("gp: condition on input %d: %w", i, err)
		}
		out.n++
	}
	return out, nil
}

// cloneForCondition returns a copy of m whose posterior quantities that
// conditioning writes (v, C, the factor and b) are its own; the rest (the
// centres, L⁻¹, the hyperparameters) is shared and never written.
func (m *Model) cloneForCondition() *Model {
	out := *m
	p := &out.post
	p.v = append([]float64(nil), m.post.v...)
	p.c.Data = append([]float64(nil), m.post.c.Data...)
	cd := *m.post.cond
	cd.chol = new(mat.Cholesky)
	cd.chol.Clone(m.post.cond.chol)
	cd.b = append([]float64(nil), cd.b...)
	p.cond = &cd
	return &out
}

// crossCov returns s k(x̂, centres) for the scaled input xh and its squared
// norm, as the objective computes K_fu (and the exact GP's K).
func (p *posterior) crossCov(k Kernel, xh []float64) ([]float64, float64) {
	kc := make([]float64, p.centres.Rows)
	blas64.Gemv(blas.NoTrans, 1, p.centres, vec(xh), 0, vec(kc))
	xSq := 0.0
	for _, v := range xh {
		xSq += v * v
	}
	for j := range kc {
		c, _ := k.corr(xSq + p.centresSq[j] - 2*kc[j])
		kc[j] = p.s * c
	}
	return kc, xSq
}

// explained returns l = L⁻¹k and q = kᵀ K_uu⁻¹ k = |l|² for the covariances
// k of a point with the inducing points, as the objectives compute q: the
// part of the point's prior variance s that the inducing points explain.
func (cd *conditioning) explained(k []float64) (l []float64, q float64) {
	l = append([]float64(nil), k...)
	blas64.Trmv(blas.NoTrans, lower(cd.linv), vec(l))
	return l, blas64.Dot(vec(l), vec(l))
}

// addSparse conditions the sparse posterior on target y at the scaled
// input xh, in place.
func (m *Model) addSparse(xh []float64, y float64) error {
	p := &m.post
	cd := p.cond
	s, sig2 := p.s, cd.noise
	k, _ := p.crossCov(m.kernel, xh)
	_, q := cd.explained(k)
	lam := sig2
	if cd.fitc {
		lam += math.Max(s-q, 0)
	}
	// u = P⁻¹k; the point's predictive variance under the (DTC or FITC)
	// prior, γ = λ + kᵀu, and residual e give the likelihood's new factor.
	u := mat.NewVecDense(len(k), nil)
	kv := mat.NewVecDense(len(k), k)
	if err := solveChol(cd.chol, u, kv); err != nil {
		return err
	}
	gamma := lam + blas64.Dot(vec(k), vec(u.RawVector().Data))
	r := y - p.mean
	e := r - blas64.Dot(vec(k), vec(p.v))
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return fmt.Errorf("predictive variance %v: %w", gamma, ErrNotPositiveDefinite)
	}
	m.logLik += -0.5 * (math.Log(2*math.Pi*gamma) + e*e/gamma)
	if !cd.fitc {
		m.logLik -= 0.5 * (s - q) / sig2 // the bound's trace term
	}
	// P += k kᵀ/λ, b += k r/λ, v = P⁻¹b; C = K_uu⁻¹ - P⁻¹ gains u uᵀ/γ
	// (Sherman-Morrison on P⁻¹).
	if !cd.chol.SymRankOne(cd.chol, 1/lam, kv) {
		return fmt.Errorf("rank-one update of P: %w", ErrNotPositiveDefinite)
	}
	blas64.Axpy(r/lam, vec(k), vec(cd.b))
	v := mat.NewVecDense(len(p.v), p.v)
	if err := solveChol(cd.chol, v, mat.NewVecDense(len(cd.b), cd.b)); err != nil {
		return err
	}
	mm := p.c.Rows
	blas64.Syr(1/gamma, vec(u.RawVector().Data), blas64.Symmetric{Uplo: blas.Upper, N: mm, Stride: p.c.Stride, Data: p.c.Data})
	symmetrizeFromUpper(p.c)
	if cd.xs != nil {
		cd.xs = append(slices.Clip(cd.xs), xh...)
		cd.xsSq = append(slices.Clip(cd.xsSq), blas64.Dot(vec(xh), vec(xh)))
		cd.r = append(slices.Clip(cd.r), r)
	}
	return nil
}

// addExact conditions the exact posterior on target y at the scaled input
// xh: the point becomes a centre.
func (m *Model) addExact(xh []float64, y float64) error {
	p := &m.post
	cd := p.cond
	n, d := p.centres.Rows, p.centres.Cols
	k, xSq := p.crossCov(m.kernel, xh)
	// Border the factor of K + σ²I with [k; s + σ² (+ the jitter)].
	ext := mat.NewVecDense(n+1, append(k, (p.s+cd.noise)+cd.jit))
	var ch mat.Cholesky
	if !ch.ExtendVecSym(cd.chol, ext) {
		return fmt.Errorf("bordered Cholesky factor of K + σ²I: %w", ErrNotPositiveDefinite)
	}
	// The new column of the factor is t = U⁻ᵀk with U the old one, and its
	// corner δ; u = K⁻¹k = U⁻¹t and γ = δ² the point's predictive variance.
	nu := ch.RawU().(*mat.TriDense).RawTriangular()
	u := make([]float64, n)
	for i := range u {
		u[i] = nu.Data[i*nu.Stride+n]
	}
	delta := nu.Data[n*nu.Stride+n]
	blas64.Trsv(blas.NoTrans, cd.chol.RawU().(*mat.TriDense).RawTriangular(), vec(u))
	gamma := delta * delta
	r := y - p.mean
	e := r - blas64.Dot(vec(k), vec(p.v))
	m.logLik += -0.5 * (math.Log(2*math.Pi*gamma) + e*e/gamma)

	// K'⁻¹ = [[K⁻¹ + u uᵀ/γ, -u/γ], [-uᵀ/γ, 1/γ]].
	c := newGeneral(n+1, n+1)
	for i := 0; i < n; i++ {
		copy(c.Data[i*(n+1):i*(n+1)+n], p.c.Data[i*p.c.Stride:i*p.c.Stride+n])
		c.Data[i*(n+1)+n] = -u[i] / gamma
	}
	c.Data[n*(n+1)+n] = 1 / gamma
	blas64.Syr(1/gamma, vec(u), blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n + 1, Data: c.Data})
	symmetrizeFromUpper(c)

	res := append(append(make([]float64, 0, n+1), cd.b...), r)
	v := mat.NewVecDense(n+1, nil)
	if err := solveChol(&ch, v, mat.NewVecDense(n+1, res)); err != nil {
		return err
	}
	centres := newGeneral(n+1, d)
	copy(centres.Data, denseRows(p.centres))
	copy(centres.Data[n*d:], xh)
	p.centres, p.centresSq = centres, append(append(make([]float64, 0, n+1), p.centresSq...), xSq)
	p.v, p.c = v.RawVector().Data, c
	cd.chol, cd.b = &ch, res
	return nil
}

// solveChol solves A x = b with the factor of A into dst. A condition
// number beyond gonum's tolerance is no error here: the posterior the
// factor came from was computed from it all the same.
func solveChol(ch *mat.Cholesky, dst *mat.VecDense, b *mat.VecDense) error {
	err := ch.SolveVecTo(dst, b)
	var cond mat.Condition
	if err != nil && !errors.As(err, &cond) {
		return err
	}
	return nil
}
