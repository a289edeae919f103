package gp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// Options configures Fit.
type Options struct {
	// Inducing is the number M of inducing points; 0, or M >= N, fits the
	// exact GP.
	Inducing int
	// Kernel is the covariance function (RBF by default).
	Kernel Kernel
	// Warp learns a Kumaraswamy input warping per dimension (W-LBO).
	Warp bool
	// Seed seeds the k-means++ initialisation of the inducing points.
	Seed uint64
	// Init warm-starts the fit from a previous model's hyperparameters and
	// inducing points (when it has the same number of them), see
	// Model.WarmStart; nil fits from scratch. Its input dimension must match.
	Init *WarmStart
	// MaxIter bounds the L-BFGS iterations; 0 means DefaultMaxIter from
	// scratch and DefaultWarmIter when warm-started.
	MaxIter int
	// FixInducing keeps the k-means (or warm-start) inducing points fixed.
	FixInducing bool
	// NoPriors fits by maximum likelihood instead of MAP.
	NoPriors bool
	// KMeansIter bounds the Lloyd iterations of the initialisation (0: 25).
	KMeansIter int
	// Approximation is the sparse GP's training objective, Titsias or FITC
	// ("" is DefaultApproximation); predictions follow it.
	Approximation Approximation
	// Stop, when set, is asked between the optimiser's evaluations whether
	// to give the fit up (e.g. a run stopped by SIGINT, whose fit from
	// scratch takes minutes on the paper's GP sizes): a non-nil error ends
	// Fit with an error wrapping ErrStopped and it, and no model.
	Stop func() error
}

// DefaultMaxIter and DefaultWarmIter are the L-BFGS iterations of a fit
// from scratch and of a warm-started refit (the authors'). A warm refit after
// one new point moves the optimum little: at N = 3000, M = 500, d = 25 the
// objective gains about 0.6 nats in 20 iterations, 2 in 60; and a BO step has
// seconds.
const (
	DefaultMaxIter  = 200
	DefaultWarmIter = 20
)

// ErrStopped is wrapped by the error of a fit that Options.Stop ended.
var ErrStopped = errors.New("gp: fit stopped")

// Fit fits a GP to inputs x (N x d, normalised to [0,1]^d, see Normalizer)
// and targets y (standardised, see Standardizer): the SGPR bound when
// 0 < opts.Inducing < N (or FITC's marginal likelihood, see
// opts.Approximation), otherwise the exact log marginal likelihood, plus
// the hyperparameter priors, maximised with L-BFGS over all
// hyperparameters, the inducing points and the warping.
func Fit(x *mat.Dense, y []float64, opts Options) (*Model, error) {
	start := time.Now()
	if err := checkData(x, y); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	if !opts.Kernel.valid() {
		return nil, fmt.Errorf("gp: unknown kernel %v", opts.Kernel)
	}
	if opts.Inducing < 0 {
		return nil, fmt.Errorf("gp: %d inducing points, want >= 0", opts.Inducing)
	}
	if opts.Init != nil {
		if err := opts.Init.Check(d); err != nil {
			return nil, err
		}
	}
	if opts.Warp && opts.Init == nil {
		return fitWarpInStages(x, y, opts, start)
	}
	h := initialHyper(x, y, opts)
	spec := Spec{Kernel: opts.Kernel, Warp: opts.Warp, FixInducing: opts.FixInducing, NoPriors: opts.NoPriors,
		Approximation: opts.Approximation}
	warm := opts.Init != nil
	if m := opts.Inducing; m > 0 && m < n {
		if warm && opts.Init.Inducing != nil && opts.Init.Inducing.RawMatrix().Rows == m {
			spec.Inducing = mat.DenseCopyOf(opts.Init.Inducing)
		} else {
			spec.Inducing = initialInducing(x, m, opts)
		}
	}
	o, err := NewObjective(x, y, spec)
	if err != nil {
		return nil, err
	}
	theta, err := o.Pack(h, nil)
	if err != nil {
		return nil, fmt.Errorf("gp: initial hyperparameters: %w", err)
	}
	maxIter := opts.MaxIter
	if maxIter == 0 {
		maxIter = DefaultMaxIter
		if warm {
			maxIter = DefaultWarmIter
		}
	}
	info := FitInfo{Warm: warm}
	theta, err = o.maximize(theta, maxIter, opts.Stop, &info)
	if err != nil {
		return nil, err
	}
	model, err := o.model(theta, info)
	if err != nil {
		return nil, err
	}
	model.info.Duration = time.Since(start)
	return model, nil
}

// fitWarpInStages fits a warped model from scratch: first without warping,
// then with it, warm-started from the unwarped optimum. A
// joint fit from the identity warping, under the length-scale prior, tends
// to squash irrelevant dimensions through the warping early and stall in a
// much worse optimum.
func fitWarpInStages(x *mat.Dense, y []float64, opts Options, start time.Time) (*Model, error) {
	pre := opts
	pre.Warp = false
	base, err := Fit(x, y, pre)
	if err != nil {
		return nil, err
	}
	opts.Init = base.WarmStart()
	if opts.MaxIter == 0 {
		opts.MaxIter = DefaultMaxIter // a fit from scratch, not a warm refit
	}
	m, err := Fit(x, y, opts)
	if err != nil {
		return nil, err
	}
	m.info.Evaluations += base.info.Evaluations
	m.info.Iterations += base.info.Iterations
	m.info.Warm = false
	m.info.Duration = time.Since(start)
	return m, nil
}

// initialHyper returns the starting hyperparameters: the warm-start model's,
// or length-scales from the median-distance heuristic, output scale the
// variance of y, noise a tenth of it, mean the mean of y, identity warping.
func initialHyper(x *mat.Dense, y []float64, opts Options) Hyper {
	_, d := x.Dims()
	if opts.Init != nil {
		h := opts.Init.Hyper.Clone()
		switch {
		case opts.Warp && !h.Warped():
			h.WarpA, h.WarpB = ones(d), ones(d)
		case !opts.Warp:
			h.WarpA, h.WarpB = nil, nil
		}
		return h
	}
	mu, vy := meanVar(y)
	if !(vy > 1e-12) {
		vy = 1
	}
	ell := math.Min(math.Max(medianDistance(x), 0.05), 10)
	h := Hyper{Lengthscales: make([]float64, d), Outputscale: vy, Mean: mu, Noise: math.Max(0.1*vy, 2*NoiseFloor)}
	for k := range h.Lengthscales {
		h.Lengthscales[k] = ell
	}
	if opts.Warp {
		h.WarpA, h.WarpB = ones(d), ones(d)
	}
	return h
}

// initialInducing runs k-means on the inputs.
func initialInducing(x *mat.Dense, m int, opts Options) *mat.Dense {
	g := toGeneral(x)
	iters := opts.KMeansIter
	if iters == 0 {
		iters = 25
	}
	c := kmeans(g, m, iters, rand.New(rand.NewPCG(opts.Seed, 0x696e647563)))
	return mat.NewDense(c.Rows, c.Cols, c.Data)
}

// medianDistance returns the median Euclidean distance between pairs of
// (at most 256 evenly spaced) rows of x.
func medianDistance(x *mat.Dense) float64 {
	n, _ := x.Dims()
	step := max(1, n/256)
	var rows [][]float64
	for i := 0; i < n; i += step {
		rows = append(rows, x.RawRowView(i))
	}
	var ds []float64
	for i := range rows {
		for j := 0; j < i; j++ {
			ds = append(ds, math.Sqrt(sqDist(rows[i], rows[j])))
		}
	}
	if len(ds) == 0 {
		return 1
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func meanVar(y []float64) (mean, variance float64) {
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	for _, v := range y {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(y))
}

func ones(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// maximize runs L-BFGS on -objective/N from theta and returns the best
// parameters found. A failed evaluation (a covariance that cannot be
// factorised) stops the search at the best point so far; an error of stop
// (nil: never asked) abandons it.
func (o *Objective) maximize(theta []float64, maxIter int, stop func() error, info *FitInfo) ([]float64, error) {
	scale := 1 / float64(o.x.Rows)
	g := make([]float64, len(theta))
	var (
		lastX   []float64
		lastF   float64
		evalErr error
		stopErr error
		best    = math.Inf(1)
		bestX   []float64
	)
	compute := func(x []float64) {
		if lastX != nil && slices.Equal(x, lastX) {
			return
		}
		lastX = append(lastX[:0], x...)
		f, err := o.eval(x, g, nil)
		info.Evaluations++
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			if err == nil {
				err = fmt.Errorf("gp: objective is %v", f)
			}
			evalErr = err
			lastF = math.Inf(1)
			clear(g)
			return
		}
		lastF = -f * scale
		for i := range g {
			g[i] *= -scale
		}
		if lastF < best {
			best = lastF
			bestX = append(bestX[:0], x...)
		}
	}
	p := optimize.Problem{
		Func: func(x []float64) float64 { compute(x); return lastF },
		Grad: func(grad, x []float64) { compute(x); copy(grad, g) },
		Status: func() (optimize.Status, error) {
			if evalErr != nil {
				return optimize.Failure, evalErr
			}
			if stop != nil {
				if stopErr = stop(); stopErr != nil {
					return optimize.Failure, stopErr
				}
			}
			return optimize.NotTerminated, nil
		},
	}
	settings := &optimize.Settings{
		MajorIterations:   maxIter,
		FuncEvaluations:   maxIter + maxIter/2 + 5, // line-search retries
		GradientThreshold: 1e-6,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-7, Iterations: 10},
	}
	res, err := optimize.Minimize(p, theta, settings, &optimize.LBFGS{Store: 20})
	if stopErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrStopped, stopErr)
	}
	if res != nil {
		info.Iterations = res.Stats.MajorIterations
		info.Status = res.Status.String()
	}
	if bestX == nil {
		if evalErr != nil {
			return nil, fmt.Errorf("gp: fit failed at the initial hyperparameters: %w", evalErr)
		}
		return nil, fmt.Errorf("gp: fit failed: %w", err)
	}
	if err != nil && !errors.Is(err, evalErr) {
		info.Status += " (" + err.Error() + ")"
	}
	return bestX, nil
}
