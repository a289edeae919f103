package bo

import (
	"errors"
	"fmt"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/gp"
	"gonum.org/v1/gonum/mat"
)

// fitGP fits a GP; tests replace it to exercise the random fallback.
var fitGP = gp.Fit

// surrogate is the GP side of the inner loop: the latent training points of
// the current version (the encoded subset, then each query's z) and the last
// fitted GP, from which the next fit is warm-started.
type surrogate struct {
	cfg  Config
	x    [][]float64   // latent points
	u    []float64     // their utilities (maximised)
	last *gp.WarmStart // of the last successful fit of this version; nil: fit from scratch
	// lastFailed says the version's last fit failed (kept in GPWarmFile).
	lastFailed bool
	// kept is the GP between fits (Config.GPRefit other than every; see
	// next); nil: the next query or round fits.
	kept *keptGP
	// evaluated counts the points that spent budget (loopPolicy.counts).
	evaluated int
	// stop, when set, gives up a fit under way (gp.Options.Stop): the run
	// has been stopped.
	stop func() error
}

// fitResult is one GP fit on the current points.
type fitResult struct {
	model *gp.Model
	nz    gp.Normalizer
	st    gp.Standardizer
	xn    *mat.Dense // normalised inputs
	yStd  []float64  // standardised utilities
	err   error      // why the fit failed (model nil)
	dur   time.Duration
}

// reset starts a new version with the encoded subset.
func (s *surrogate) reset(x [][]float64, u []float64) {
	s.x, s.u, s.last, s.lastFailed, s.kept, s.evaluated = x, u, nil, false, nil, 0
}

// add appends an evaluated query to the training points.
func (s *surrogate) add(z []float64, u float64) {
	s.x = append(s.x, append([]float64(nil), z...))
	s.u = append(s.u, u)
}

// fit fits the GP to the current points, warm-started from the previous fit
// of the version when there is one; a failed warm fit is retried from
// scratch (as the reference does). The normaliser's box is returned even
// when both fits fail, for the random fallback.
func (s *surrogate) fit(seed uint64) fitResult {
	start := time.Now()
	res := s.data(len(s.x))
	if res.err != nil {
		res.dur = time.Since(start)
		return res
	}
	opts := gp.Options{Inducing: s.cfg.Inducing, Kernel: s.cfg.Kernel, Warp: s.cfg.Warp, Seed: seed, Init: s.last,
		Approximation: s.cfg.GPObjective, Stop: s.stop}
	if s.last == nil {
		opts.MaxIter = s.cfg.GPIters
	}
	m, err := fitGP(res.xn, res.yStd, opts)
	if err != nil && s.last != nil && !errors.Is(err, gp.ErrStopped) {
		opts.Init, opts.MaxIter = nil, s.cfg.GPIters
		m, err = fitGP(res.xn, res.yStd, opts)
	}
	res.dur = time.Since(start)
	if err != nil {
		res.err = err
		return res
	}
	res.model = m
	s.last = m.WarmStart()
	return res
}

// data returns the GP's data of the first n points: the normaliser of
// their box, the standardiser of their utilities and both applied (err
// set when either cannot be made; nz is then set when it could be).
func (s *surrogate) data(n int) fitResult {
	res := fitResult{}
	x := mat.NewDense(n, len(s.x[0]), nil)
	for i, row := range s.x[:n] {
		x.SetRow(i, row)
	}
	best := s.x[argmax(s.u[:n])]
	var err error
	if res.nz, err = gp.NewNormalizer(x, best); err != nil {
		res.err = err
		return res
	}
	st, err := gp.NewStandardizer(s.u[:n])
	if err != nil {
		res.err = err
		return res
	}
	res.st, res.yStd = st, st.Transform(s.u[:n])
	res.xn = res.nz.Transform(x)
	return res
}

// proposal is the acquisition's choice of the next latent point.
type proposal struct {
	z        []float64 // latent point (original space)
	u        []float64 // the same point in the unit box
	acqValue float64   // EI or log-EI at the point
	ei       float64   // EI at the point (for the stopping rule)
	dur      time.Duration
	search   acq.Result // the maximisation (its restarts' ends for warm starts)
}

// propose maximises EI or log-EI of the fitted GP over the unit box and maps
// the maximiser back to the latent space. Latent points tried by earlier
// attempts of the query are excluded: the acquisition is penalised within
// the radius of each (see exclusion).
func (s *surrogate) propose(f fitResult, seed uint64, tried []triedPoint) (proposal, error) {
	start := time.Now()
	d := f.model.Dim()
	bestF := acq.QuantileBest(f.yStd, s.cfg.BestQuantile)
	fn := s.acquisition(f.model, bestF)
	lower, upper := unitBox(d)
	var target acq.Function = fn
	if len(tried) > 0 {
		target = newExclusion(fn, s.cfg.Acq == acq.KindLogEI, f.nz, tried)
	}
	p, err := s.maximize(f.model, fn, target, bestF, lower, upper, seed, s.cfg.Restarts, nil)
	if err != nil {
		return proposal{}, err
	}
	p.z = make([]float64, d)
	f.nz.InverseVec(p.z, p.u)
	p.dur = time.Since(start)
	return p, nil
}

// acquisition returns the configured acquisition function of model m with
// incumbent bestF.
func (s *surrogate) acquisition(m *gp.Model, bestF float64) acq.Acquisition {
	if s.cfg.Acq == acq.KindLogEI {
		return acq.NewLogEI(m, bestF)
	}
	return acq.NewEI(m, bestF)
}

// maximize maximises target (fn, or fn penalised) over the box [lower,
// upper] of the unit box from the given number of restarts picked among
// the raw samples and the warm starts, and returns the maximiser u with
// fn's value and EI there; z is left to the caller.
func (s *surrogate) maximize(m *gp.Model, fn acq.Acquisition, target acq.Function, bestF float64, lower, upper []float64, seed uint64, restarts int, warm [][]float64) (proposal, error) {
	res, err := acq.Maximize(target, lower, upper, acq.Options{
		RawSamples: s.cfg.RawSamples, Restarts: restarts, Selection: s.cfg.RestartSelection, Seed: seed,
		Starts: warm,
	})
	if err != nil {
		return proposal{}, fmt.Errorf("maximise %s: %w", s.cfg.Acq, err)
	}
	mean, variance := m.Predict(res.X)
	ei, _, _ := acq.EI(mean, variance, bestF)
	return proposal{u: res.X, acqValue: fn.Eval(res.X, nil), ei: ei, search: res}, nil
}

// unitBox returns the bounds of [0, 1]^d.
func unitBox(d int) (lower, upper []float64) {
	lower, upper = make([]float64, d), make([]float64, d)
	for k := range upper {
		upper[k] = 1
	}
	return lower, upper
}

// argmax returns the index of the largest value (the first of ties).
func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
