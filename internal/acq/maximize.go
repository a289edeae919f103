package acq

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/openblas"
)

// Options configures Maximize.
type Options struct {
	// RawSamples is the number of scrambled-Halton points evaluated first
	// (default DefaultRawSamples).
	RawSamples int
	// Restarts is how many raw samples are refined (default DefaultRestarts).
	Restarts int
	// Selection picks the restarts among the raw samples (default
	// SelectBoltzmann, as BoTorch's optimize_acqf).
	Selection Selection
	// BoltzmannEta is the temperature of SelectBoltzmann (default
	// DefaultBoltzmannEta).
	BoltzmannEta float64
	// MaxIter bounds the quasi-Newton iterations per restart (default 100).
	MaxIter int
	// Seed seeds the raw samples; the result is deterministic for a seed.
	Seed uint64
	// Starts are extra starting points (for example the incumbent), refined
	// in addition to the best raw samples; they are clamped to the box.
	Starts [][]float64
	// Tol is the projected-gradient tolerance relative to the box width and
	// the function scale (default 1e-6).
	Tol float64
	// Sequential refines the restarts one after another with f.Eval even
	// when f is a GradBatchFunction, whose restarts are otherwise refined
	// in lockstep (the same iterations; for a GradBatchModel's acquisition,
	// values to the rounding of reordered dot products, far cheaper).
	Sequential bool
	// Workers is the number of goroutines that score the raw samples and
	// refine the restarts, in fixed chunks (0: Workers(), which --threads
	// sets). The result is the same for any number. With more than one,
	// f's EvalBatch and EvalGradBatch are called from several goroutines at
	// once; f.Eval is always called from one (Sequential, or f no
	// GradBatchFunction).
	Workers int
}

// The defaults of Options: BoTorch's usual raw_samples and num_restarts, as the
// authors' code uses them.
const (
	DefaultRawSamples = 1000
	DefaultRestarts   = 100
)

func (o Options) withDefaults() Options {
	if o.RawSamples == 0 {
		o.RawSamples = DefaultRawSamples
	}
	if o.Restarts == 0 {
		o.Restarts = DefaultRestarts
	}
	if o.Selection == "" {
		o.Selection = SelectBoltzmann
	}
	if o.BoltzmannEta == 0 {
		o.BoltzmannEta = DefaultBoltzmannEta
	}
	if o.MaxIter == 0 {
		o.MaxIter = 100
	}
	if o.Tol == 0 {
		o.Tol = 1e-6
	}
	if o.Workers == 0 {
		o.Workers = Workers()
	}
	return o
}

// Result is the outcome of Maximize.
type Result struct {
	// X is the best point found, inside the box.
	X []float64
	// Value is f.Eval at X, on the caller's OpenBLAS threads.
	Value float64
	// Evaluations counts function evaluations (raw samples included).
	Evaluations int
	// Ends are the points every restart reached, those of the raw samples
	// picked first and then those of opts.Starts, and EndValues f there as
	// the refinement computed it: starts for a following maximisation of a
	// posterior that changed little (see Options.Starts).
	Ends      [][]float64
	EndValues []float64
}

// Maximize maximises f over the box [lower, upper]: it evaluates
// opts.RawSamples scrambled-Halton points (in batches of 128 when f is a
// BatchFunction), refines opts.Restarts of them picked by opts.Selection
// (and opts.Starts) with a projected L-BFGS method that respects the bounds
// (in lockstep, chunks of restarts one batch a step, when f is a
// GradBatchFunction), and returns the best point. The point is
// deterministic for a given seed, whatever opts.Workers and OpenBLAS's
// thread count (see parallel.go).
func Maximize(f Function, lower, upper []float64, opts Options) (Result, error) {
	d := len(lower)
	if d == 0 || len(upper) != d {
		return Result{}, fmt.Errorf("acq: box has %d lower and %d upper bounds", len(lower), len(upper))
	}
	for i := range lower {
		if !(lower[i] <= upper[i]) || math.IsInf(lower[i], 0) || math.IsInf(upper[i], 0) {
			return Result{}, fmt.Errorf("acq: bad bounds [%v, %v] in dimension %d", lower[i], upper[i], i)
		}
	}
	opts = opts.withDefaults()
	if opts.RawSamples < 0 || opts.Restarts < 0 || opts.MaxIter < 0 || opts.Workers < 0 {
		return Result{}, fmt.Errorf("acq: negative RawSamples, Restarts, MaxIter or Workers")
	}
	if _, err := ParseSelection(string(opts.Selection)); err != nil {
		return Result{}, err
	}
	if !(opts.BoltzmannEta > 0) || math.IsInf(opts.BoltzmannEta, 0) {
		return Result{}, fmt.Errorf("acq: BoltzmannEta = %v, want a finite value > 0", opts.BoltzmannEta)
	}
	for i, s := range opts.Starts {
		if len(s) != d {
			return Result{}, fmt.Errorf("acq: start %d has %d coordinates, want %d", i, len(s), d)
		}
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Result{}, fmt.Errorf("acq: start %d has NaN or Inf coordinates: %v", i, s)
			}
		}
	}
	ends, vals, evals := search(f, lower, upper, opts)
	x := bestEnd(ends, vals)
	if x == nil {
		return Result{}, fmt.Errorf("acq: nothing to maximise: no raw samples and no starts")
	}
	// The lockstep refinement scores its points in batches, whose sums run in
	// another order than one point's, on one OpenBLAS thread: Value is f at X
	// as f.Eval gives it on the caller's threads, so that it equals what the
	// caller computes there (they differed by 8e-12 relative under OpenBLAS's
	// Sandybridge kernels, issue 49's second pass, and by 3e-12 between one
	// and two OpenBLAS threads).
	best := Result{X: slices.Clone(x), Value: f.Eval(x, nil), Evaluations: evals + 1, Ends: ends, EndValues: vals}
	if math.IsNaN(best.Value) {
		return best, fmt.Errorf("acq: acquisition value is NaN at the optimum")
	}
	return best, nil
}

// search scores the raw samples, refines the restarts picked among them
// and opts.Starts, and returns the points reached, f's values there and
// the evaluations spent. OpenBLAS runs on one thread meanwhile, so that the
// points do not depend on its thread count.
func search(f Function, lower, upper []float64, opts Options) ([][]float64, []float64, int) {
	defer openblas.OneThread()()
	starts, evals := rawStarts(f, lower, upper, opts)
	for _, s := range opts.Starts {
		x := slices.Clone(s)
		clampBox(x, lower, upper)
		starts = append(starts, x)
	}
	p := newProjected(f, lower, upper, opts)
	xs, vals := p.refine(starts, opts.Sequential, opts.Workers)
	return xs, vals, evals + p.evals
}

// bestEnd returns the point of largest value (the first of ties; the first
// point when every value is NaN), nil when there is none.
func bestEnd(xs [][]float64, vals []float64) []float64 {
	var best []float64
	bestV := math.Inf(-1)
	for i, x := range xs {
		if vals[i] > bestV || best == nil {
			best, bestV = x, vals[i]
		}
	}
	return best
}

// rawStarts evaluates the raw samples and returns Restarts of them (distinct
// points) picked by the selection heuristic, and the number of evaluations.
func rawStarts(f Function, lower, upper []float64, opts Options) ([][]float64, int) {
	q, d := opts.RawSamples, len(lower)
	if q == 0 || opts.Restarts == 0 {
		return nil, 0
	}
	pts := mat.NewDense(q, d, nil)
	h := NewHalton(d, opts.Seed)
	for i := 0; i < q; i++ {
		row := pts.RawRowView(i)
		h.Next(row)
		for k := range row {
			row[k] = lower[k] + row[k]*(upper[k]-lower[k])
		}
	}
	vals := make([]float64, q)
	if bf, ok := f.(BatchFunction); ok {
		parts := chunks(q, rawChunk)
		forEach(opts.Workers, len(parts), func(c int) {
			lo, hi := parts[c][0], parts[c][1]
			bf.EvalBatch(pts.Slice(lo, hi, 0, d).(*mat.Dense), vals[lo:hi])
		})
	} else {
		for i := range vals {
			vals[i] = f.Eval(pts.RawRowView(i), nil)
		}
	}
	picks := selectStarts(vals, opts.Restarts, opts.Selection, opts.BoltzmannEta, opts.Seed)
	starts := make([][]float64, 0, len(picks))
	for _, i := range picks {
		starts = append(starts, slices.Clone(pts.RawRowView(i)))
	}
	return starts, q
}

// DistinctTol is the coordinate distance in the unit box within which the
// loop's warm starts (and BenchmarkWarmStarts) take two restart ends for
// one optimum (see BestEnds): the restarts' stopping rule leaves their
// ends some 1e-6 apart when they reached the same optimum.
const DistinctTol = 1e-4

// BestEnds returns up to k of the ends of r's restarts, best first (ties
// in the restarts' order), skipping an end within tol in every coordinate
// of one already taken: warm starts for a following maximisation
// (Options.Starts) of a posterior that changed little, such as the loop's
// GP conditioned on one more point. Restarts mostly converge on a few
// optima; refining each once is enough.
func (r Result) BestEnds(k int, tol float64) [][]float64 {
	idx := make([]int, len(r.Ends))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return compareDesc(r.EndValues[a], r.EndValues[b]) })
	var out [][]float64
	for _, i := range idx {
		if len(out) >= k {
			break
		}
		if !slices.ContainsFunc(out, func(x []float64) bool { return within(x, r.Ends[i], tol) }) {
			out = append(out, r.Ends[i])
		}
	}
	return out
}

// within reports whether a and b differ by at most tol in every coordinate.
func within(a, b []float64, tol float64) bool {
	for i := range a {
		if !(math.Abs(a[i]-b[i]) <= tol) {
			return false
		}
	}
	return true
}

func clampBox(x, lower, upper []float64) {
	for i := range x {
		x[i] = math.Min(math.Max(x[i], lower[i]), upper[i])
	}
}
