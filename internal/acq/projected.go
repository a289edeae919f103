package acq

import (
	"math"
	"slices"
)

// projected is a projected L-BFGS method for box-constrained minimisation
// of g = -f (Bertsekas-style active sets): variables at a bound whose
// gradient points out of the box are held fixed, the L-BFGS direction is
// computed on the others, and a backtracking Armijo search runs along the
// projected path P(x + αd).
type projected struct {
	f            Function
	lower, upper []float64
	maxIter      int
	tol          float64
	evals        int
	mem          int
}

func newProjected(f Function, lower, upper []float64, opts Options) *projected {
	return &projected{f: f, lower: lower, upper: upper, maxIter: opts.MaxIter, tol: opts.Tol, mem: 10}
}

// eval returns g = -f and its gradient at x.
func (p *projected) eval(x, grad []float64) float64 {
	p.evals++
	v := -p.f.Eval(x, grad)
	for i := range grad {
		grad[i] = -grad[i]
	}
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}

// run minimises -f from x0 and returns the point and f there.
func (p *projected) run(x0 []float64) ([]float64, float64) {
	d := len(x0)
	x := slices.Clone(x0)
	clampBox(x, p.lower, p.upper)
	g := make([]float64, d)
	fx := p.eval(x, g)
	if math.IsInf(fx, 0) {
		return x, -fx
	}
	var sHist, yHist [][]float64
	var rho []float64
	dir, xn, gn := make([]float64, d), make([]float64, d), make([]float64, d)
	free := make([]bool, d)
	width := 0.0
	for i := range x {
		width = math.Max(width, p.upper[i]-p.lower[i])
	}
	for it := 0; it < p.maxIter; it++ {
		// Free variables and the projected-gradient stopping test.
		pg := 0.0
		for i := range x {
			atLo := x[i] <= p.lower[i] && g[i] > 0
			atHi := x[i] >= p.upper[i] && g[i] < 0
			free[i] = !atLo && !atHi
			step := x[i] - math.Min(math.Max(x[i]-g[i], p.lower[i]), p.upper[i])
			pg = math.Max(pg, math.Abs(step))
		}
		if pg <= p.tol*width*(1+math.Abs(fx)) || pg == 0 {
			break
		}
		twoLoop(dir, g, free, sHist, yHist, rho)
		slope := 0.0
		for i := range dir {
			slope += dir[i] * g[i]
		}
		if !(slope < 0) {
			// Not a descent direction: reset to steepest descent.
			sHist, yHist, rho = nil, nil, nil
			for i := range dir {
				dir[i] = 0
				if free[i] {
					dir[i] = -g[i]
				}
			}
		}
		alpha := 1.0
		if len(sHist) == 0 {
			// First step: move at most a tenth of the box.
			dmax := 0.0
			for _, v := range dir {
				dmax = math.Max(dmax, math.Abs(v))
			}
			if dmax > 0 {
				alpha = math.Min(1, 0.1*width/dmax)
			}
		}
		fn, ok := p.search(x, g, fx, dir, alpha, xn, gn)
		if !ok {
			break
		}
		s, y := make([]float64, d), make([]float64, d)
		sy, yy := 0.0, 0.0
		for i := range s {
			s[i], y[i] = xn[i]-x[i], gn[i]-g[i]
			sy += s[i] * y[i]
			yy += y[i] * y[i]
		}
		if sy > 1e-10*math.Sqrt(yy)*norm(s) {
			sHist, yHist, rho = append(sHist, s), append(yHist, y), append(rho, 1/sy)
			if len(sHist) > p.mem {
				sHist, yHist, rho = sHist[1:], yHist[1:], rho[1:]
			}
		}
		done := math.Abs(fx-fn) <= 1e-12*(1+math.Abs(fx))
		copy(x, xn)
		copy(g, gn)
		fx = fn
		if done {
			break
		}
	}
	return x, -fx
}

// search backtracks along the projected path from x until the Armijo
// condition holds; it writes the new point and gradient into xn and gn.
func (p *projected) search(x, g []float64, fx float64, dir []float64, alpha float64, xn, gn []float64) (float64, bool) {
	const c1 = 1e-4
	for try := 0; try < 40; try++ {
		moved := false
		decrease := 0.0
		for i := range x {
			xn[i] = math.Min(math.Max(x[i]+alpha*dir[i], p.lower[i]), p.upper[i])
			if xn[i] != x[i] {
				moved = true
			}
			decrease += g[i] * (xn[i] - x[i])
		}
		if !moved {
			return fx, false
		}
		fn := p.eval(xn, gn)
		if fn <= fx+c1*decrease && decrease < 0 {
			return fn, true
		}
		alpha /= 2
	}
	return fx, false
}

// twoLoop writes the L-BFGS direction -H g restricted to the free
// variables into dir (zero on the fixed ones).
func twoLoop(dir, g []float64, free []bool, sHist, yHist [][]float64, rho []float64) {
	for i := range dir {
		dir[i] = 0
		if free[i] {
			dir[i] = -g[i]
		}
	}
	k := len(sHist)
	if k == 0 {
		return
	}
	a := make([]float64, k)
	for j := k - 1; j >= 0; j-- {
		a[j] = rho[j] * maskedDot(sHist[j], dir, free)
		for i := range dir {
			if free[i] {
				dir[i] -= a[j] * yHist[j][i]
			}
		}
	}
	// Initial Hessian scaling sᵀy / yᵀy of the newest pair.
	gamma := 1 / (rho[k-1] * dot(yHist[k-1], yHist[k-1]))
	for i := range dir {
		dir[i] *= gamma
	}
	for j := 0; j < k; j++ {
		b := rho[j] * maskedDot(yHist[j], dir, free)
		for i := range dir {
			if free[i] {
				dir[i] += (a[j] - b) * sHist[j][i]
			}
		}
	}
}

func maskedDot(a, b []float64, free []bool) float64 {
	s := 0.0
	for i := range a {
		if free[i] {
			s += a[i] * b[i]
		}
	}
	return s
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }
