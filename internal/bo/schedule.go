package bo

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// GPRefit is when the GP's hyperparameters and inducing points are fitted
// (--gp-refit): GPRefitEvery, GPRefitAuto, or a positive number N of
// evaluations written in decimal.
//
// Under every schedule a model version's first query (or round) fits the
// GP from scratch: retraining moves every latent coordinate. GPRefitEvery
// then refits, warm-started, at every query or round, as the authors do.
// The other schedules keep the last fit's hyperparameters and inducing
// points and condition its posterior on each new point exactly
// (gp.Model.Condition: rank-one updates, O(M²) a point against a fit's
// tens of O(N M²) evaluations), with the fit's input box and target
// scaling, and fit again, warm-started, once N evaluations (queries that
// spent budget: under RepeatsSkip known objects and invalid decodes join
// the GP but do not count) were made since the last fit (N), or when the
// fit has gone stale (GPRefitAuto, see stale). The kriging believer's fantasies and known scores condition the
// kept GP the same way; under GPRefitEvery the believer rebuilds the
// posterior from scratch, as runs made before the setting did.
type GPRefit string

const (
	// GPRefitEvery fits at every query or round (the authors' schedule).
	GPRefitEvery GPRefit = "every"
	// GPRefitAuto fits when the points conditioned on since the last fit
	// are not predicted as the fit says they should be (see stale).
	GPRefitAuto GPRefit = "auto"
)

// ParseGPRefit returns the schedule named s; the error names the flag.
func ParseGPRefit(s string) (GPRefit, error) {
	g := GPRefit(s)
	if _, err := g.interval(); err != nil {
		return "", fmt.Errorf("--gp-refit %q: want every, auto or a positive number of evaluations", s)
	}
	return g, nil
}

// validGPRefit reports whether g names a schedule.
func validGPRefit(g GPRefit) bool {
	_, err := g.interval()
	return err == nil
}

// interval returns N of a numeric schedule, 0 for every and auto.
func (g GPRefit) interval() (int, error) {
	switch g {
	case GPRefitEvery, GPRefitAuto:
		return 0, nil
	}
	n, err := strconv.Atoi(string(g))
	if err != nil || n < 1 || strconv.Itoa(n) != string(g) {
		return 0, fmt.Errorf("gp-refit %q is not every, auto or a positive integer", string(g))
	}
	return n, nil
}

// describe says when the GP is fitted under g, in words, for a run's log:
// the schedule is a run's setting whose default changed, and the log is
// where a user reads what the run does.
func (g GPRefit) describe(iters int, inducing GPInducing) string {
	start := fmt.Sprintf("the GP is fitted from scratch (up to %d iterations) when a model version starts", iters)
	switch g {
	case GPRefitEvery:
		return start + ", then again, warm, at every query or round (--gp-refit every, the authors' schedule)"
	case GPRefitAuto:
		return start + ", then again, warm, only when the points added since its fit are not predicted as it says " +
			"(--gp-refit auto); between fits each point joins its posterior exactly" + inducing.describe()
	}
	return start + fmt.Sprintf(", then again, warm, every %s evaluations (--gp-refit %s); between fits each point "+
		"joins its posterior exactly", g, g) + inducing.describe()
}

// describe completes GPRefit.describe for a schedule other than every.
func (g GPInducing) describe() string {
	if g == GPInducingGrow {
		return ", and becomes an inducing point if the fit's leave it unexplained (--gp-inducing grow)"
	}
	return ""
}

// GPInducing says what happens to the inducing points between two fits
// of a schedule other than GPRefitEvery (--gp-inducing).
//
// Under GPInducingFixed they stay the fit's, and the Titsias posterior's
// variance at a point cannot fall below the share of its prior variance
// that they leave unexplained (s - q(x)), however often the point is
// observed: the acquisition can keep returning to observed points far
// from every inducing point (under every, each warm refit moves the
// inducing points toward the data instead). Under GPInducingGrow such a
// point becomes an inducing point as it joins the posterior
// (gp.Model.ConditionGrow with gp.DefaultGrowTol), for the points of the
// loop and the believer's known scores and fantasies alike; the next fit
// starts again from the fit's inducing points (its warm start).
type GPInducing string

const (
	// GPInducingFixed keeps the fit's inducing points between fits.
	GPInducingFixed GPInducing = "fixed"
	// GPInducingGrow adds the points they leave unexplained.
	GPInducingGrow GPInducing = "grow"
)

// ParseGPInducing returns the setting named s; the error names the flag.
func ParseGPInducing(s string) (GPInducing, error) {
	return parseChoice("gp-inducing", s, GPInducingFixed, GPInducingGrow)
}

// condition returns m conditioned on the points as g says.
func (g GPInducing) condition(m *gp.Model, x [][]float64, y []float64) (*gp.Model, error) {
	if g == GPInducingGrow {
		return m.ConditionGrow(x, y, gp.DefaultGrowTol)
	}
	return m.Condition(x, y)
}

// Staleness check of GPRefitAuto: refit once at least autoMinPoints points
// were conditioned on since the last fit and the sum of their squared
// standardised predictive residuals exceeds the 1 - autoP quantile of
// χ² with as many degrees of freedom.
const (
	autoMinPoints = 5
	autoP         = 0.01
)

// keptGP is the GP between two fits of a schedule other than every: the
// last fit's scales (input box, target standardisation) and data, and its
// posterior conditioned on the points added since.
type keptGP struct {
	// f holds the fit's normaliser, standardiser and inputs (xn, the
	// first fitN points); f.model is the posterior on the first n points
	// and f.yStd their standardised utilities.
	f fitResult
	// fitN counts the points the fit saw, n those f.model holds;
	// fitEvaluated the evaluations among the fit's points.
	fitN, n, fitEvaluated int
	// rebuild says that f.model must first be built anew from the fit's
	// hyperparameters and inducing points (gp.New on the fit's data): the
	// fitted model itself (or, after a resume, nothing) is there, and
	// conditioning starts from the rebuilt one in both cases, so that a
	// resumed run conditions exactly what the uninterrupted one did.
	rebuild bool
	// z2 sums the squared standardised predictive residuals of the points
	// conditioned on since the fit (GPRefitAuto).
	z2 float64
}

// next returns the GP for the next query or round: a fit (fitted true), or
// under a schedule other than every the kept GP conditioned on the points
// added since the last fit, when no fit is due.
func (s *surrogate) next(seed uint64) (f fitResult, fitted bool) {
	if s.cfg.GPRefit != GPRefitEvery && s.kept != nil && !s.due() {
		start := time.Now()
		if err := s.catchUp(); err == nil && !s.stale() {
			f = s.kept.f
			f.yStd = f.yStd[:len(f.yStd):len(f.yStd)] // callers' appends copy
			f.dur = time.Since(start)
			return f, false
		}
	}
	return s.refit(seed), true
}

// refit fits the GP and starts the kept GP from the fit.
func (s *surrogate) refit(seed uint64) fitResult {
	f := s.fit(seed)
	s.lastFailed = f.model == nil
	s.kept = nil
	if f.model != nil {
		s.kept = &keptGP{f: f, fitN: len(s.x), n: len(s.x), fitEvaluated: s.evaluated, rebuild: true}
	}
	return f
}

// due reports whether a numeric schedule's N evaluations were made since
// the fit.
func (s *surrogate) due() bool {
	n, _ := s.cfg.GPRefit.interval()
	return n > 0 && s.evaluated-s.kept.fitEvaluated >= n
}

// stale is GPRefitAuto's check that the fit no longer describes the data.
// Each point conditioned on since the fit was first predicted by the GP of
// the points before it: z = (y - μ)/sqrt(σ² + noise), its standardised
// predictive residual. When the hyperparameters are right these one-step-
// ahead residuals are independent standard normals (the sequential
// decomposition of the model's joint distribution), so Σ z² over the k
// points is χ²_k, and a sum beyond its 99% quantile (k >= 5, so that one
// outlier alone does not decide) says the fit predicts worse than it
// claims: its length-scales, output scale or noise no longer fit the data.
// The log predictive density of the points carries the same information
// (it is -Σ z²/2 plus terms fixed by the predictive variances), but Σ z²
// has a known distribution, so its bound needs no tuning; the points being
// chosen by EI rather than at random biases z, which only makes refits
// come sooner.
func (s *surrogate) stale() bool {
	k := s.kept.n - s.kept.fitN
	if s.cfg.GPRefit != GPRefitAuto || k < autoMinPoints {
		return false
	}
	return s.kept.z2 > distuv.ChiSquared{K: float64(k)}.Quantile(1-autoP)
}

// catchUp conditions the kept GP on the points added since it was last
// brought up to date, one at a time, each predicted first (for stale).
func (s *surrogate) catchUp() error {
	k := s.kept
	if k.rebuild {
		if s.last == nil {
			return fmt.Errorf("no warm start to rebuild the kept GP from")
		}
		h := s.last.Hyper
		spec := gp.Spec{Kernel: s.cfg.Kernel, Inducing: s.last.Inducing, Warp: h.Warped(), Approximation: s.cfg.GPObjective}
		m, err := gp.New(k.f.xn, k.f.yStd[:k.fitN], spec, h)
		if err != nil {
			return fmt.Errorf("rebuild the GP of the last fit: %w", err)
		}
		k.f.model, k.n, k.rebuild = m, k.fitN, false
	}
	noise := k.f.model.Hyper().Noise
	d := len(s.x[0])
	for ; k.n < len(s.x); k.n++ {
		u := make([]float64, d)
		k.f.nz.TransformVec(u, s.x[k.n])
		y := k.f.st.Transform([]float64{s.u[k.n]})[0]
		mean, variance := k.f.model.Predict(u)
		m, err := s.cfg.GPInducing.condition(k.f.model, [][]float64{u}, []float64{y})
		if err != nil {
			return err
		}
		z := (y - mean) / math.Sqrt(variance+noise)
		k.f.model, k.f.yStd, k.z2 = m, append(k.f.yStd, y), k.z2+z*z
	}
	return nil
}

// markFit records, while a resume replays the version's journal without
// refitting (the warm start restored from GPWarmFile), that a fit was made
// on the points added so far; restoreKept completes the last one.
func (s *surrogate) markFit() {
	s.kept = &keptGP{fitN: len(s.x), n: len(s.x), fitEvaluated: s.evaluated, rebuild: true}
}

// restoreKept completes the kept GP after a replay without refits: the
// last fit's scales and data from its points, its model from the restored
// warm start (rebuilt by the next catchUp, as in the uninterrupted run).
// A failed last fit leaves none, so that the next step fits.
func (s *surrogate) restoreKept() {
	if s.kept == nil {
		return
	}
	if s.cfg.GPRefit == GPRefitEvery || s.cfg.Strategy != StrategyBO || s.lastFailed || s.last == nil {
		s.kept = nil
		return
	}
	f := s.data(s.kept.fitN)
	if f.err != nil {
		s.kept = nil
		return
	}
	f.model = nil
	s.kept.f = f
}
