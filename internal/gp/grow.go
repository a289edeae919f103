package gp

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// DefaultGrowTol is the share of a point's prior variance that the inducing
// points may leave unexplained before ConditionGrow makes the point an
// inducing point. The Titsias posterior's variance at a point never falls
// below that share (s - q(x), below), however often the point is observed;
// 1e-4 keeps the predictive standard deviation there under 1% of the
// output scale's, so that expected improvement does not keep returning to
// observed points.
const DefaultGrowTol = 1e-4

// growChunk is the number of training points whose covariances with the
// inducing points growInducing holds at once.
const growChunk = 512

// ConditionGrow is Condition for a Titsias SGPR whose inducing set grows:
// before a point joins, when the inducing points leave more than tol of its
// prior variance unexplained (s - q(x) > tol s, q(x) = k_xu K_uu⁻¹ k_ux, s
// the output scale), it first becomes an inducing point itself. Under fixed
// inducing points the posterior variance at x cannot fall below s - q(x)
// whatever is observed there (the projection loses the rest); a point that
// is an inducing point has none of that floor. The result is the posterior
// that New gives, with the same hyperparameters, on all the points and the
// grown inducing set (Inducing lists the added points after the fit's, in
// order), to rounding; LogLik follows.
//
// Each added inducing point borders the factors of K_uu and P = K_uu +
// K_uf K_fu/σ² with one row: its kernel values at the N0 points the
// posterior was built on (O(N0 d)) and products with their cached
// correlations (O(N0 M); the cache, O(N0 M0 d), is made by the first point
// added to a posterior and shared by every model conditioned from it), its
// covariances with the points conditioned on since (O(n M d) for n of
// them), O(M²) for the rest; an observation that adds none is Condition's
// rank-one update. For an exact GP ConditionGrow is Condition
// (every point is already a centre); a FITC posterior is refused, since a
// new inducing point changes every point's λ.
func (m *Model) ConditionGrow(x [][]float64, y []float64, tol float64) (*Model, error) {
	if !(tol >= 0) || math.IsInf(tol, 0) {
		return nil, fmt.Errorf("gp: condition: growth tolerance %v is not a finite number >= 0", tol)
	}
	return m.condition(x, y, tol)
}

// growInducing makes the scaled input xh (raw: its input-space row) an
// inducing point of m's Titsias posterior when the present ones leave more
// than tol of its prior variance unexplained, in place.
func (m *Model) growInducing(raw, xh []float64, tol float64) error {
	p := &m.post
	cd := p.cond
	s, sig2 := p.s, cd.noise
	mm, d := p.centres.Rows, p.centres.Cols
	ku, xSq := p.crossCov(m.kernel, xh)
	// l = L⁻¹k_u, q = |l|², w = L⁻ᵀl = K_uu⁻¹k_u.
	l, q := cd.explained(ku)
	if s-q <= tol*s {
		return nil
	}
	kzz := s*(1+baseJitter) + cd.jit
	delta2 := kzz - q
	if !(delta2 > 0) {
		return fmt.Errorf("new inducing point's conditional variance %v: %w", delta2, ErrNotPositiveDefinite)
	}
	w := append([]float64(nil), l...)
	blas64.Trmv(blas.Trans, lower(cd.linv), vec(w))

	centres := newGeneral(mm+1, d)
	copy(centres.Data, denseRows(p.centres))
	copy(centres.Data[mm*d:], xh)
	centresSq := append(append(make([]float64, 0, mm+1), p.centresSq...), xSq)
	g, kf, kr, resid2, col := m.growSums(centres, centresSq, w)

	// P's new row is [k_u + K_uf k_f/σ², k_zz + |k_f|²/σ²]; b's new entry
	// k_fᵀr/σ². u_P = P⁻¹p gives P'⁻¹'s border, as w gives K_uu'⁻¹'s.
	pRow := make([]float64, mm+1)
	for j := 0; j < mm; j++ {
		pRow[j] = ku[j] + g[j]/sig2
	}
	pRow[mm] = kzz + kf/sig2
	uP := mat.NewVecDense(mm, nil)
	if err := solveChol(cd.chol, uP, mat.NewVecDense(mm, pRow[:mm])); err != nil {
		return err
	}
	var ch mat.Cholesky
	if !ch.ExtendVecSym(cd.chol, mat.NewVecDense(mm+1, pRow)) {
		return fmt.Errorf("bordered Cholesky factor of P: %w", ErrNotPositiveDefinite)
	}
	ut := ch.RawU().(*mat.TriDense).RawTriangular()
	gammaP := ut.Data[mm*ut.Stride+mm] * ut.Data[mm*ut.Stride+mm]

	b := append(append(make([]float64, 0, mm+1), cd.b...), kr/sig2)
	v := mat.NewVecDense(mm+1, nil)
	if err := solveChol(&ch, v, mat.NewVecDense(mm+1, b)); err != nil {
		return err
	}
	// The bound's change: -½Δlog|B| (log|B| = log|P| - log|K_uu|), ½Δ bᵀP⁻¹b,
	// and the trace term's ½ Σ_i a_i²/σ² for the new row a = (k_f - K_fu w)/δ
	// of L⁻¹K_uf.
	m.logLik += -0.5*(math.Log(gammaP)-math.Log(delta2)) +
		0.5*(blas64.Dot(vec(b), vec(v.RawVector().Data))-blas64.Dot(vec(cd.b), vec(p.v))) +
		0.5*resid2/(delta2*sig2)

	p.c = borderedPredictive(p.c, w, delta2, uP.RawVector().Data, gammaP)
	cd.linv = borderedLowerInverse(cd.linv, w, math.Sqrt(delta2))
	cd.chol, cd.b = &ch, b
	cd.grown = append(slices.Clip(cd.grown), col)
	p.centres, p.centresSq, p.v = centres, centresSq, v.RawVector().Data
	ind := mat.NewDense(mm+1, d, nil)
	ind.Slice(0, mm, 0, d).(*mat.Dense).Copy(m.inducing)
	ind.SetRow(mm, raw)
	m.inducing = ind
	return nil
}

// growSums returns, for the new inducing point (the last of centres) and
// the posterior's training points, g = K_uf k_f (over the old inducing
// points), |k_f|², k_fᵀr and |k_f - K_fu w|², and the new point's
// correlations with the points the posterior was built on (to keep in
// grown). Those points' correlations with the old inducing points are the
// posterior's cached ones (fitCorrelations and grown), so only the new
// point's N0 kernel values are made for them; the points conditioned on
// since take the chunked products with every centre.
func (m *Model) growSums(centres blas64.General, centresSq, w []float64) (g []float64, kf, kr, resid2 float64, col []float64) {
	p := &m.post
	cd := p.cond
	mm, d := centres.Rows-1, centres.Cols
	fit := cd.fitCorr
	n0, m0 := fit.xs.Rows, fit.m
	kc := fit.get(m.kernel, centres, centresSq)
	newCentre := blas64.General{Rows: 1, Cols: d, Stride: d, Data: centres.Data[mm*centres.Stride : mm*centres.Stride+d]}
	col = make([]float64, n0)
	crossCorr(m.kernel, fit.xs, fit.xsSq, newCentre, centresSq[mm:], blas64.General{Rows: n0, Cols: 1, Stride: 1, Data: col},
		blas64.General{})

	// kfv = s col; g = s K_corrᵀ kfv; kw = s K_corr w, K_corr = [kc, grown...].
	kfv := make([]float64, n0)
	blas64.Axpy(p.s, vec(col), vec(kfv))
	g = make([]float64, mm)
	blas64.Gemv(blas.Trans, p.s, kc, vec(kfv), 0, vec(g[:m0]))
	kw := make([]float64, n0)
	blas64.Gemv(blas.NoTrans, p.s, kc, vec(w[:m0]), 0, vec(kw))
	for j, gc := range cd.grown {
		g[m0+j] = p.s * blas64.Dot(vec(gc), vec(kfv))
		blas64.Axpy(p.s*w[m0+j], vec(gc), vec(kw))
	}
	for i, kfi := range kfv {
		kf += kfi * kfi
		kr += kfi * cd.r[i]
		resid2 += (kfi - kw[i]) * (kfi - kw[i])
	}

	n := len(cd.r)
	if n == n0 {
		return g, kf, kr, resid2, col
	}
	buf := newGeneral(min(growChunk, n-n0), mm+1)
	for lo := n0; lo < n; lo += growChunk {
		hi := min(lo+growChunk, n)
		xs := blas64.General{Rows: hi - lo, Cols: d, Stride: d, Data: cd.xs[lo*d : hi*d]}
		c := reshape(buf, hi-lo, mm+1)
		crossCorr(m.kernel, xs, cd.xsSq[lo:hi], centres, centresSq, c, blas64.General{})
		for i := 0; i < hi-lo; i++ {
			row := c.Data[i*c.Stride : i*c.Stride+mm+1]
			kfi := p.s * row[mm]
			kwi := p.s * blas64.Dot(vec(row[:mm]), vec(w))
			blas64.Axpy(p.s*kfi, vec(row[:mm]), vec(g))
			kf += kfi * kfi
			kr += kfi * cd.r[lo+i]
			resid2 += (kfi - kwi) * (kfi - kwi)
		}
	}
	return g, kf, kr, resid2, col
}

// borderedPredictive returns C' = K_uu'⁻¹ - P'⁻¹ for the bordered K_uu' and
// P' from C = K_uu⁻¹ - P⁻¹ (M x M, symmetric) and the borders' solves: w =
// K_uu⁻¹k_u and uP = P⁻¹p with Schur complements gK and gP. Each inverse
// gains [[u uᵀ/γ, -u/γ], [-uᵀ/γ, 1/γ]].
func borderedPredictive(c blas64.General, w []float64, gK float64, uP []float64, gP float64) blas64.General {
	mm := c.Rows
	out := newGeneral(mm+1, mm+1)
	for i := 0; i < mm; i++ {
		copy(out.Data[i*(mm+1):i*(mm+1)+mm], c.Data[i*c.Stride:i*c.Stride+mm])
		out.Data[i*(mm+1)+mm] = -w[i]/gK + uP[i]/gP
	}
	out.Data[mm*(mm+1)+mm] = 1/gK - 1/gP
	up := blas64.Symmetric{Uplo: blas.Upper, N: mm, Stride: mm + 1, Data: out.Data}
	blas64.Syr(1/gK, vec(w), up)
	blas64.Syr(-1/gP, vec(uP), up)
	symmetrizeFromUpper(out)
	return out
}

// borderedLowerInverse returns L'⁻¹ for L' = [[L, 0], [lᵀ, δ]] from L⁻¹
// (lower, M x M) and w = L⁻ᵀl: [[L⁻¹, 0], [-wᵀ/δ, 1/δ]].
func borderedLowerInverse(linv blas64.General, w []float64, delta float64) blas64.General {
	mm := linv.Rows
	out := newGeneral(mm+1, mm+1)
	for i := 0; i < mm; i++ {
		copy(out.Data[i*(mm+1):i*(mm+1)+i+1], linv.Data[i*linv.Stride:i*linv.Stride+i+1])
	}
	for j := 0; j < mm; j++ {
		out.Data[mm*(mm+1)+j] = -w[j] / delta
	}
	out.Data[mm*(mm+1)+mm] = 1 / delta
	return out
}
