package expression

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Objective constants of the expression task.
const (
	// FailureScore is the score of an expression that cannot be parsed or evaluated,
	// and the cap of every score.
	FailureScore = 7.0
	// LowerIsBetter is the direction of the score: it is minimised.
	LowerIsBetter = true
	// DefaultTarget is the target the data set was scored with (Kusner et al. 2017 and
	// the reference code); the T-LBO paper's text writes `1/3 * x * sin(x*x)` instead.
	DefaultTarget = "1 / 3 + x + sin( x * x )"
	// NumPoints is the number of evaluation points, evenly spaced on [-10, 10].
	NumPoints = 1000
)

// Points returns the evaluation points, bit-identical to numpy.linspace(-10, 10, 1000).
func Points() []float64 {
	const start, stop = -10.0, 10.0
	step := (stop - start) / (NumPoints - 1)
	xs := make([]float64, NumPoints)
	for i := range xs {
		// The conversion rounds the product, so no fused multiply-add: numpy's y*step + start.
		xs[i] = float64(float64(i)*step) + start
	}
	xs[NumPoints-1] = stop
	return xs
}

// Objective scores expressions against a target: min(7, log(1 + MSE)) over Points().
// It is safe for concurrent use.
type Objective struct {
	target *Expr
	xs, y  []float64
	pool   sync.Pool // *evaluator
}

// NewObjective returns the objective for a target expression of x, parsed by ParseExpr
// (so it may use '-' and decimals, e.g. `1/3 * x * sin(x*x)`); "" means DefaultTarget.
// The target must be finite at every point.
func NewObjective(target string) (*Objective, error) {
	if target == "" {
		target = DefaultTarget
	}
	e, err := ParseExpr(target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	o := &Objective{target: e, xs: Points()}
	if o.y, err = e.Eval(o.xs); err != nil {
		return nil, fmt.Errorf("target %q: %w", target, err)
	}
	o.pool.New = func() any { return &evaluator{xs: o.xs} }
	return o, nil
}

// Target returns the target expression's text.
func (o *Objective) Target() string { return o.target.String() }

// Score returns the score of an expression (lower is better): FailureScore when it
// cannot be parsed or evaluated (see TryScore).
func (o *Objective) Score(text string) float64 {
	s, _ := o.TryScore(text)
	return s
}

// TryScore returns the score of an expression and, when it is FailureScore because the
// expression failed, the reason. Any text ParseExpr accepts is scored, as the reference
// scores any text numpy can evaluate, with numpy's arithmetic (see Expr.Eval).
func (o *Objective) TryScore(text string) (float64, error) {
	e, err := ParseExpr(text)
	if err != nil {
		return FailureScore, err
	}
	ev := o.pool.Get().(*evaluator)
	defer o.pool.Put(ev)
	return o.score(ev, e)
}

func (o *Objective) score(ev *evaluator, e *Expr) (float64, error) {
	y, err := ev.vector(e.root)
	if err != nil {
		return FailureScore, fmt.Errorf("expression %q: %w", e.text, err)
	}
	defer ev.release(y)
	if !allFinite(y) {
		return FailureScore, fmt.Errorf("expression %q: %w", e.text, ErrNonFinite)
	}
	for i, v := range y {
		d := v - o.y[i]
		y[i] = d * d
	}
	mse := pairwiseSum(y) / float64(len(y))
	if math.IsInf(mse, 0) {
		return FailureScore, fmt.Errorf("expression %q: mean squared error overflows", e.text)
	}
	return math.Min(FailureScore, math.Log(1+mse)), nil
}

// ScoreAll scores texts in parallel over GOMAXPROCS goroutines.
func (o *Objective) ScoreAll(texts []string) []float64 {
	scores := make([]float64, len(texts))
	parallelFor(len(texts), func(lo, hi int) {
		ev := &evaluator{xs: o.xs}
		for i := lo; i < hi; i++ {
			scores[i] = FailureScore
			if e, err := ParseExpr(texts[i]); err == nil {
				scores[i], _ = o.score(ev, e)
			}
		}
	})
	return scores
}

// parallelFor runs body over [0, n) split into contiguous chunks, one goroutine each.
func parallelFor(n int, body func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), max(n/256, 1))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	wg.Wait()
}

// pairwiseSum sums a as numpy's add.reduce does for float64 (pairwise summation with
// 8-way unrolled blocks of at most 128), so that means match numpy to the last bit.
func pairwiseSum(a []float64) float64 {
	const block = 128
	n := len(a)
	switch {
	case n < 8:
		var s float64
		for _, v := range a {
			s += v
		}
		return s
	case n <= block:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for k := range r {
				r[k] += a[i+k]
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += a[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}
