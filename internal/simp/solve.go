package simp

import (
	"context"
	"fmt"
	"math"
)

// Options tune a solve; the zero value is the default.
type Options struct {
	// Chol does the band Cholesky; nil means OpenBLAS's LAPACK.
	Chol BandCholesky
	// Step, when set, is called after each OC step with the iteration
	// (from 0), the compliance of the design the step started from, and
	// the design it produced (element order e = ex*nely + ey; read only).
	Step func(it int, compliance float64, x []float64)
}

// Result is the outcome of a solve.
type Result struct {
	// Densities of the returned design, row-major (nely, nelx), row 0 at the top.
	Densities []float64
	// ComplianceFirst is the compliance of the uniform starting design.
	ComplianceFirst float64
	// Compliance is the compliance of the returned design.
	Compliance float64
	// History holds the compliance at the start of each iteration.
	History []float64
}

// Solve runs p.Iterations SIMP iterations from the uniform design x =
// volfrac and returns the final design and its compliance. It validates p
// first; a problem with a rigid-body mode or without a load is an error,
// and so is a failed factorisation.
func Solve(ctx context.Context, p Problem, opt Options) (Result, error) {
	if err := p.Validate(); err != nil {
		return Result{}, err
	}
	m := newFEM(p, opt.Chol)
	filt := newFilter(p.NelX, p.NelY, p.RMin)
	x := make([]float64, m.nel)
	for i := range x {
		x[i] = p.VolFrac
	}
	ce := make([]float64, m.nel)
	dc := make([]float64, m.nel)
	res := Result{History: make([]float64, 0, p.Iterations)}
	for it := range p.Iterations {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		c, err := m.solve(x, ce)
		if err != nil {
			return Result{}, fmt.Errorf("iteration %d: %w", it, err)
		}
		res.History = append(res.History, c)
		for e, xe := range x {
			dc[e] = -p.Penal * pow(xe, p.Penal-1) * ce[e]
		}
		filt.apply(x, dc)
		oc(p, x, dc)
		if opt.Step != nil {
			opt.Step(it, c, x)
		}
	}
	c, err := m.solve(x, ce)
	if err != nil {
		return Result{}, fmt.Errorf("final design: %w", err)
	}
	res.Compliance = c
	res.ComplianceFirst = c
	if len(res.History) > 0 {
		res.ComplianceFirst = res.History[0]
	}
	res.Densities = Image(p.NelX, p.NelY, x)
	return res, nil
}

// Image turns densities in element order (e = ex*nely + ey) into a
// row-major (nely, nelx) image, row 0 at the top.
func Image(nelx, nely int, x []float64) []float64 {
	img := make([]float64, len(x))
	for ex := range nelx {
		for ey := range nely {
			img[ey*nelx+ex] = x[ex*nely+ey]
		}
	}
	return img
}

// filter is Sigmund's sensitivity filter with weights w_ef = max(0, r - dist(e, f)).
type filter struct {
	start []int32 // CSR rows: neighbours of e are idx[start[e]:start[e+1]]
	idx   []int32
	w     []float64
	wsum  []float64
	tmp   []float64
}

func newFilter(nelx, nely int, rmin float64) *filter {
	f := &filter{start: make([]int32, 1, nelx*nely+1), wsum: make([]float64, nelx*nely), tmp: make([]float64, nelx*nely)}
	r := int(math.Ceil(rmin)) - 1
	for ex := range nelx {
		for ey := range nely {
			e := ex*nely + ey
			for kx := max(ex-r, 0); kx <= min(ex+r, nelx-1); kx++ {
				for ky := max(ey-r, 0); ky <= min(ey+r, nely-1); ky++ {
					w := rmin - math.Hypot(float64(ex-kx), float64(ey-ky))
					if w > 0 {
						f.idx = append(f.idx, int32(kx*nely+ky))
						f.w = append(f.w, w)
						f.wsum[e] += w
					}
				}
			}
			f.start = append(f.start, int32(len(f.idx)))
		}
	}
	return f
}

// apply replaces dc by sum_f w_ef x_f dc_f / (x_e sum_f w_ef).
func (f *filter) apply(x, dc []float64) {
	for e := range dc {
		s := 0.0
		for k := f.start[e]; k < f.start[e+1]; k++ {
			j := f.idx[k]
			s += f.w[k] * x[j] * dc[j]
		}
		f.tmp[e] = s / (x[e] * f.wsum[e])
	}
	copy(dc, f.tmp)
}

// oc replaces x by the optimality-criteria update
// max(xmin, max(x - move, min(1, min(x + move, x (-dc/lambda)^damping))))
// with lambda found by bisection on [0, 1e5] until
// (l2 - l1)/(l1 + l2) <= 1e-8, so that the volume is volfrac*nel.
func oc(p Problem, x, dc []float64) {
	n := len(x)
	b := make([]float64, n) // x (-dc)^damping; divided by lambda^damping below
	for e := range x {
		b[e] = x[e] * math.Pow(math.Max(-dc[e], 0), p.Damping)
	}
	xnew := make([]float64, n)
	target := p.VolFrac * float64(n)
	l1, l2 := 0.0, 1e5
	for (l2-l1)/(l1+l2) > 1e-8 {
		lmid := 0.5 * (l1 + l2)
		scale := math.Pow(lmid, -p.Damping)
		vol := 0.0
		for e, xe := range x {
			v := min(1, xe+p.Move, b[e]*scale)
			v = max(p.XMin, xe-p.Move, v)
			xnew[e] = v
			vol += v
		}
		if vol > target {
			l1 = lmid
		} else {
			l2 = lmid
		}
	}
	copy(x, xnew)
}
