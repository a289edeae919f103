package bo

import (
	"fmt"
	"math"
	"strconv"
)

// TrustRegionConfig is the schedule of a TuRBO trust region (Eriksson et
// al. 2019) in the GP's normalised latent box, as LOL-BO (Maus et al. 2022)
// uses it: a box of side Length around the incumbent, stretched along the
// GP's length-scales, doubled after Successes rounds in a row that improve
// the best score, halved after Failures rounds in a row that do not, and
// restarted at Init when it falls below Min.
type TrustRegionConfig struct {
	// Init, Min and Max are the initial, minimal and maximal side lengths
	// (LOL-BO: 0.8, 0.5^7, 1.6).
	Init, Min, Max float64
	// Successes is the success tolerance (LOL-BO: 10).
	Successes int
	// Failures is the failure tolerance; 0 means LOL-BO's
	// ceil(max(4, d) / q) for latent dimension d and q proposals a round.
	Failures int
}

// DefaultTrustRegion returns LOL-BO's schedule.
func DefaultTrustRegion() TrustRegionConfig {
	return TrustRegionConfig{Init: 0.8, Min: math.Pow(0.5, 7), Max: 1.6, Successes: 10}
}

func (c TrustRegionConfig) validate() error {
	if !(c.Min > 0 && c.Min <= c.Init && c.Init <= c.Max) || math.IsInf(c.Max, 0) {
		return fmt.Errorf("bo: config: trust region lengths min %v, init %v, max %v, want 0 < min <= init <= max < inf", c.Min, c.Init, c.Max)
	}
	if c.Successes < 1 || c.Failures < 0 {
		return fmt.Errorf("bo: config: trust region tolerances successes %d, failures %d, want >= 1 and >= 0 (0: ceil(max(4, d)/q))",
			c.Successes, c.Failures)
	}
	return nil
}

func (c TrustRegionConfig) fields() []Field {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return []Field{{"tr-init", f(c.Init)}, {"tr-min", f(c.Min)}, {"tr-max", f(c.Max)},
		{"tr-successes", strconv.Itoa(c.Successes)}, {"tr-failures", strconv.Itoa(c.Failures)}}
}

// failureTolerance returns Failures, or LOL-BO's ceil(max(4, d) / q).
func (c TrustRegionConfig) failureTolerance(d, q int) int {
	if c.Failures > 0 {
		return c.Failures
	}
	return int(math.Ceil(float64(max(4, d)) / float64(q)))
}

// TrustRegion is the state of the trust region at the start of a round, as
// the journal records it.
type TrustRegion struct {
	// Length is the side length in the normalised latent box.
	Length float64 `json:"length"`
	// Successes and Failures count the rounds in a row that did and did
	// not improve the best score.
	Successes int `json:"successes"`
	Failures  int `json:"failures"`
	// Restarts counts the restarts so far (the length fell below Min).
	Restarts int `json:"restarts,omitempty"`
}

// newTrustRegion returns the state before the first round.
func newTrustRegion(c TrustRegionConfig) TrustRegion { return TrustRegion{Length: c.Init} }

// improves reports whether a new best utility improves on the old one in
// TuRBO's sense: by more than 1e-3 |best|.
func improves(newBest, oldBest float64) bool {
	return newBest > oldBest+1e-3*math.Abs(oldBest)
}

// update returns the state after a round whose evaluations did or did not
// improve the best score, for latent dimension d and q proposals a round.
func (t TrustRegion) update(c TrustRegionConfig, success bool, d, q int) TrustRegion {
	if success {
		t.Successes, t.Failures = t.Successes+1, 0
	} else {
		t.Successes, t.Failures = 0, t.Failures+1
	}
	switch {
	case t.Successes >= c.Successes:
		t.Length, t.Successes = math.Min(2*t.Length, c.Max), 0
	case t.Failures >= c.failureTolerance(d, q):
		t.Length, t.Failures = t.Length/2, 0
	}
	if t.Length < c.Min {
		t.Length, t.Successes, t.Failures = c.Init, 0, 0
		t.Restarts++
	}
	return t
}

// box returns the trust region around centre (in the unit box) for ARD
// length-scales ls: TuRBO's side lengths Length · w_k with w = ls / mean(ls)
// rescaled to a geometric mean of 1, so that the region's volume is
// Length^d, clipped to [0, 1]^d.
func (t TrustRegion) box(centre, ls []float64) (lower, upper []float64) {
	d := len(centre)
	mean := 0.0
	for _, l := range ls {
		mean += l / float64(d)
	}
	logSum := 0.0
	w := make([]float64, d)
	for k, l := range ls {
		w[k] = l / mean
		logSum += math.Log(w[k])
	}
	geo := math.Exp(logSum / float64(d))
	lower, upper = make([]float64, d), make([]float64, d)
	for k := range centre {
		half := t.Length * w[k] / geo / 2
		lower[k] = math.Max(0, centre[k]-half)
		upper[k] = math.Min(1, centre[k]+half)
	}
	return lower, upper
}
