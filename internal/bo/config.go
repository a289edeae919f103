package bo

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// Strategy is how a query's latent point is chosen (--strategy).
type Strategy string

// Strategies of the search.
const (
	// StrategyBO is latent-space Bayesian optimisation (LBO, T-LBO, ...).
	StrategyBO Strategy = "bo"
	// StrategyRandom draws uniformly from the box of the encoded training
	// data, redrawing invalid and already-seen objects (the reference's
	// random search).
	StrategyRandom Strategy = "random"
	// StrategyPrior samples the prior N(0, I) of the latent space, with the
	// novelty check of the BO strategy (what "random" meant in runs made
	// before the box search).
	StrategyPrior Strategy = "prior"
)

// ParseStrategy returns the strategy named s; the error names the flag.
func ParseStrategy(s string) (Strategy, error) {
	return parseChoice("strategy", s, StrategyBO, StrategyRandom, StrategyPrior)
}

// parseChoice returns s as a T when it is one of choices; the error names
// the flag and the choices.
func parseChoice[T ~string](flag, s string, choices ...T) (T, error) {
	if slices.Contains(choices, T(s)) {
		return T(s), nil
	}
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = string(c)
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return "", fmt.Errorf("--%s %q: want %s", flag, s, want)
}

// RandomDraws bounds the draws of one random-search query: after this many
// invalid or already-seen decodes the first valid one (else the first) is
// evaluated, so that a query always ends.
const RandomDraws = 100

// Repeats is what the loop does with a decoded object that was already
// evaluated (--repeats).
type Repeats string

// What the loop does with a decoded object that was already evaluated.
const (
	// RepeatsSkip never evaluates a known object of a deterministic
	// objective again: its known score joins the GP's data at the new
	// latent point, the acquisition is maximised again, and after
	// RepeatTries such tries a novel object is searched for around the
	// proposal (see the package doc).
	RepeatsSkip Repeats = "skip"
	// RepeatsAuthors is the authors' novelty check: perturb, redo the
	// acquisition step, then evaluate the duplicate.
	RepeatsAuthors Repeats = "authors"
)

// ParseRepeats returns the policy named s; the error names the flag.
func ParseRepeats(s string) (Repeats, error) {
	return parseChoice("repeats", s, RepeatsSkip, RepeatsAuthors)
}

// ParseAcq returns the acquisition function named s (acq.ParseKind's
// names); the loop maximises EI or log-EI, so the error, naming the flag,
// also refuses UCB.
func ParseAcq(s string) (acq.Kind, error) {
	k, err := acq.ParseKind(s)
	if err != nil || !loopAcq(k) {
		return 0, fmt.Errorf("--acq %q: want ei or logei", s)
	}
	return k, nil
}

// loopAcq reports whether the loop maximises acquisition k.
func loopAcq(k acq.Kind) bool { return k == acq.KindEI || k == acq.KindLogEI }

// ParseKernel returns the GP kernel named s; the error names the flag.
func ParseKernel(s string) (gp.Kernel, error) {
	k, err := gp.ParseKernel(s)
	if err != nil {
		return 0, fmt.Errorf("--kernel %q: want rbf or matern52", s)
	}
	return k, nil
}

// ParseGPObjective returns the sparse GP's training objective named s; the
// error names the flag.
func ParseGPObjective(s string) (gp.Approximation, error) {
	a, err := gp.ParseApproximation(s)
	if err != nil || s == "" {
		return "", fmt.Errorf("--gp-objective %q: want titsias or fitc", s)
	}
	return a, nil
}

// ParseRestartSelection returns the acquisition maximiser's choice of
// restarts named s; the error names the flag.
func ParseRestartSelection(s string) (acq.Selection, error) {
	sel, err := acq.ParseSelection(s)
	if err != nil {
		return "", fmt.Errorf("--restart-selection %q: want boltzmann or best", s)
	}
	return sel, nil
}

// Config is everything that determines a run's results. Two runs with equal
// configurations, data and model produce the same queries.
type Config struct {
	// Strategy is StrategyBO, StrategyRandom or StrategyPrior.
	Strategy Strategy
	// Budget is the number of queries B.
	Budget int
	// RetrainEvery is r, the number of queries between retrainings.
	RetrainEvery int
	// RankK is k of the rank weights 1/(kN + rank); +Inf gives uniform weights.
	RankK float64
	// InitialRetrainEpochs is the retraining before the first query (0: none).
	InitialRetrainEpochs float64
	// RetrainEpochs is the retraining every r queries (0: none).
	RetrainEpochs float64
	// NBest and NRand are the best and random points the GP is fitted on.
	NBest, NRand int
	// Inducing is the number of inducing points (0 or >= N: exact GP).
	Inducing int
	// Kernel is the GP kernel (gp.RBF or gp.Matern52).
	Kernel gp.Kernel
	// GPObjective is the sparse GP's training objective, gp.Titsias (the
	// paper's) or gp.FITC (the authors' pinned GPyTorch).
	GPObjective gp.Approximation
	// GPRefit is when the GP's hyperparameters and inducing points are
	// fitted: GPRefitEvery (every query or round, the authors'), or after
	// each retraining and then every N evaluations (a decimal N) or when the fit
	// goes stale (GPRefitAuto), the posterior conditioned exactly on the
	// points in between (see GPRefit).
	GPRefit GPRefit
	// GPIters bounds the L-BFGS iterations of a GP fit from scratch (each
	// model version's first; gp.DefaultMaxIter, the authors', in
	// DefaultConfig and in a run whose config.json has no gp-iters); the
	// warm refits after it take gp.DefaultWarmIter. A new run of optimize
	// takes DefaultGPIters.
	GPIters int
	// GPInducing says whether, between fits (a GPRefit other than every),
	// points that the inducing points leave unexplained become inducing
	// points as they join the posterior (GPInducingGrow) or not
	// (GPInducingFixed: DefaultConfig's, and that of a run whose
	// config.json has no gp-inducing); a new run of optimize takes
	// DefaultGPInducing.
	GPInducing GPInducing
	// Warp learns a Kumaraswamy input warping with the GP (--warp; W-LBO is
	// LBO's objective with it).
	Warp bool
	// Acq is acq.KindEI or acq.KindLogEI; config.json records its name.
	Acq acq.Kind
	// BestQuantile sets EI's incumbent to this quantile of the standardised
	// targets (the reference's 0.9; 1 is the maximum).
	BestQuantile float64
	// Tau stops an inner loop early when the maximal EI is below it (0: never).
	Tau float64
	// RawSamples and Restarts configure the acquisition maximiser: random
	// points scored, and Restarts of them, picked by RestartSelection
	// (acq.SelectBoltzmann or acq.SelectBest), refined by L-BFGS-B.
	RawSamples, Restarts int
	RestartSelection     acq.Selection
	// WarmStarts, when positive, makes every later acquisition step of a
	// round refine Restarts - WarmStarts fresh restarts and up to
	// WarmStarts of the previous step's restart ends, the best distinct
	// ones (acq.BestEnds; RepeatsSkip only): after a known object or an
	// invalid decode the GP changed by one point, so those ends are near
	// its acquisition's optima and converge in a few iterations. 0: every
	// step refines Restarts fresh ones (DefaultConfig's, and that of a run
	// whose config.json has no warm-starts); a new run of optimize takes
	// DefaultWarmStarts. A round is journaled whole, so a resumed run
	// repeats its steps.
	WarmStarts int
	// PerturbSigma, PerturbGrowth and PerturbTries drive the novelty check:
	// a decoded object already seen is retried from z + N(0, σ_t²) with
	// σ_t = PerturbSigma · PerturbGrowth^t, at most PerturbTries times.
	PerturbSigma, PerturbGrowth float64
	PerturbTries                int
	// NoveltyRedo is how many times the acquisition step is redone, away
	// from the points tried, when no perturbation found a new object; the
	// duplicate is evaluated after the last.
	NoveltyRedo int
	// Repeats is RepeatsSkip or RepeatsAuthors.
	Repeats Repeats
	// Q is the number of proposals per round (RepeatsSkip only), chosen
	// jointly by the kriging believer and evaluated concurrently.
	Q int
	// Evaluators is how many evaluations run at once (0: Q; Workers says
	// it). Async makes the next round as soon as a worker is free instead
	// of when the round's evaluations are all in.
	Evaluators int
	Async      bool
	// RepeatTries bounds the acquisition steps of one proposal that may
	// end in a known object or an invalid decode before the fallback
	// searches around the proposal (RepeatsSkip only).
	RepeatTries int
	// TrustRegion restricts the acquisition to a TuRBO trust region
	// around the incumbent (RepeatsSkip and StrategyBO only).
	TrustRegion bool
	// TR is the trust region's schedule (read when TrustRegion is set).
	TR TrustRegionConfig
	// SamplesPerModel decodes and scores this many prior samples after each
	// retraining (the reference's sample_points; 0: none).
	SamplesPerModel int
	// LabelledFraction, in (0, 1), starts from a random fraction of the
	// labelled data (the semi-supervised setting); 0 or 1 uses all of it.
	LabelledFraction float64
	// Seed determines every random choice of the run.
	Seed uint64
	// Extra is the run's identity that its caller owns: settings the loop
	// does not read but that change the results (internal/task records
	// the task, ELBO, checkpoint, data source, device, ...). Run adds its
	// own (the direction, the data's digest); config.json records them
	// all beside the loop's settings, and resume compares them.
	Extra map[string]string
}

// DefaultConfig returns the loop's own defaults, the same for every task:
// BO with EI (incumbent at the 0.9 quantile of the targets, as the
// reference) over an ARD RBF sparse GP trained on the Titsias bound, 1000
// raw samples and 100 restarts chosen by Boltzmann sampling (BoTorch's and
// the reference's), repeats skipped with 5 tries before the ball fallback,
// one proposal per round, the authors' perturbation schedule for
// --repeats authors (sigma 0.01, growth 1.1, 10 tries, 3 redos), LOL-BO's
// trust-region schedule, and the GP fitted when a model version starts and
// when its fit goes stale (GPRefitAuto; not the authors' GPRefitEvery: on
// the paper's expression and topology protocols, five seeds a method, it
// was not worse at 0.3-0.7 times the CPU, docs/experiment section 2e).
//
// The settings that differ between tasks (Budget, RetrainEvery, RankK,
// InitialRetrainEpochs, RetrainEpochs, NBest, NRand, Inducing) are left
// zero, so that the configuration does not validate until they are set:
// a task's defaults (internal/task's Defaults.Config) are their only source.
func DefaultConfig() Config {
	return Config{
		Strategy:         StrategyBO,
		Kernel:           gp.RBF,
		GPObjective:      gp.Titsias,
		GPRefit:          GPRefitAuto,
		GPIters:          gp.DefaultMaxIter,
		GPInducing:       GPInducingFixed,
		Acq:              acq.KindEI,
		BestQuantile:     0.9,
		RawSamples:       acq.DefaultRawSamples,
		Restarts:         acq.DefaultRestarts,
		RestartSelection: acq.SelectBoltzmann,
		PerturbSigma:     0.01,
		PerturbGrowth:    1.1,
		PerturbTries:     10,
		NoveltyRedo:      3,
		Repeats:          RepeatsSkip,
		Q:                1,
		RepeatTries:      DefaultRepeatTries,
		TR:               DefaultTrustRegion(),
	}
}

// DefaultGPInducing returns the inducing points' setting of a new run with
// c's schedule and GP objective: GPInducingGrow where a GP is kept between
// fits (a GPRefit other than every) and trained on the Titsias bound, else
// GPInducingFixed (the only setting those allow). Growing was not worse than
// fixed inducing points on the paper's expression and topology protocols,
// five seeds a method (docs/experiment section 2f). It is not
// DefaultConfig's, whose schedule and objective a caller may still change.
func (c Config) DefaultGPInducing() GPInducing {
	if c.GPRefit == GPRefitEvery || c.GPObjective != gp.Titsias {
		return GPInducingFixed
	}
	return GPInducingGrow
}

// CappedGPIters is DefaultGPIters' cap on a fit from scratch where a GP is
// kept between fits: 50 L-BFGS iterations gave the held-out log-likelihood
// of 200 (docs/performance.md, "GP: iterations of a fit from scratch") and
// were not worse on the paper's expression and topology protocols, five
// seeds a method (docs/experiment section 2g).
const CappedGPIters = 50

// DefaultGPIters returns the iterations of a fit from scratch of a new run
// with c's schedule: CappedGPIters where a GP is kept between fits (a
// GPRefit other than every), else gp.DefaultMaxIter (the authors'
// schedule, kept whole for fidelity runs). Like DefaultGPInducing it is not
// DefaultConfig's, whose schedule a caller may still change.
func (c Config) DefaultGPIters() int {
	if c.GPRefit == GPRefitEvery {
		return gp.DefaultMaxIter
	}
	return CappedGPIters
}

// DefaultRepeatTries is the default of Config.RepeatTries.
const DefaultRepeatTries = 5

// DefaultWarmStarts returns the warm starts of a new run with c's strategy,
// repeats and restarts: Restarts - max(1, Restarts/10) (90 of the default
// 100 restarts) under StrategyBO and RepeatsSkip, else 0. It is not
// DefaultConfig's, so that a configuration built field by field, and a run
// whose config.json predates the setting, keep every step cold.
func (c Config) DefaultWarmStarts() int {
	if c.Strategy != StrategyBO || c.Repeats != RepeatsSkip || c.Restarts < 2 {
		return 0
	}
	return c.Restarts - max(1, c.Restarts/10)
}

// Validate reports the first setting that is out of range.
func (c Config) Validate() error {
	bad := func(name string, v any, want string) error {
		return fmt.Errorf("bo: config: %s is %v, want %s", name, v, want)
	}
	switch {
	case c.Strategy != StrategyBO && c.Strategy != StrategyRandom && c.Strategy != StrategyPrior:
		return bad("strategy", strconv.Quote(string(c.Strategy)), `"bo", "random" or "prior"`)
	case c.Budget < 1:
		return bad("budget", c.Budget, "at least 1")
	case c.RetrainEvery < 1:
		return bad("retrain-every", c.RetrainEvery, "at least 1")
	case !(c.RankK > 0):
		return bad("k", c.RankK, "a positive number or inf")
	case !(c.InitialRetrainEpochs >= 0) || math.IsInf(c.InitialRetrainEpochs, 0):
		return bad("initial-retrain-epochs", c.InitialRetrainEpochs, "a finite number >= 0")
	case !(c.RetrainEpochs >= 0) || math.IsInf(c.RetrainEpochs, 0):
		return bad("retrain-epochs", c.RetrainEpochs, "a finite number >= 0")
	case c.NBest < 0 || c.NRand < 0 || c.NBest+c.NRand < 1:
		return bad("n-best + n-rand", fmt.Sprintf("%d + %d", c.NBest, c.NRand), "non-negative with a positive sum")
	case c.Inducing < 0:
		return bad("inducing", c.Inducing, "at least 0")
	case c.Kernel != gp.RBF && c.Kernel != gp.Matern52:
		return bad("kernel", c.Kernel, `"rbf" or "matern52"`)
	case c.GPObjective != gp.Titsias && c.GPObjective != gp.FITC:
		return bad("gp-objective", strconv.Quote(string(c.GPObjective)), `"titsias" or "fitc"`)
	case !validGPRefit(c.GPRefit):
		return bad("gp-refit", strconv.Quote(string(c.GPRefit)), `"every", "auto" or a positive integer`)
	case c.GPIters < 1:
		return bad("gp-iters", c.GPIters, ">= 1")
	case c.GPInducing != GPInducingFixed && c.GPInducing != GPInducingGrow:
		return bad("gp-inducing", strconv.Quote(string(c.GPInducing)), `"fixed" or "grow"`)
	case c.GPInducing == GPInducingGrow && c.GPRefit == GPRefitEvery:
		return bad("gp-inducing", `"grow"`, `"fixed" under gp-refit "every", which fits at every query and so keeps no GP between fits`)
	case c.GPInducing == GPInducingGrow && c.GPObjective != gp.Titsias:
		return bad("gp-inducing", `"grow"`, `"fixed" under gp-objective "fitc" (a new inducing point changes every point's FITC variance)`)
	case !loopAcq(c.Acq):
		return bad("acq", strconv.Quote(c.Acq.String()), `"ei" or "logei"`)
	case !(c.BestQuantile >= 0 && c.BestQuantile <= 1):
		return bad("best-quantile", c.BestQuantile, "in [0, 1]")
	case !(c.Tau >= 0) || math.IsInf(c.Tau, 0):
		return bad("tau", c.Tau, "a finite number >= 0")
	case c.RawSamples < 1 || c.Restarts < 1:
		return bad("raw-samples/restarts", fmt.Sprintf("%d/%d", c.RawSamples, c.Restarts), "at least 1 each")
	case c.RestartSelection != acq.SelectBoltzmann && c.RestartSelection != acq.SelectBest:
		return bad("restart-selection", strconv.Quote(string(c.RestartSelection)), `"boltzmann" or "best"`)
	case c.WarmStarts < 0 || (c.WarmStarts > 0 && c.WarmStarts >= c.Restarts):
		return bad("warm-starts", c.WarmStarts, fmt.Sprintf("in [0, restarts) = [0, %d)", c.Restarts))
	case c.WarmStarts > 0 && c.Repeats != RepeatsSkip:
		return bad("warm-starts", c.WarmStarts, "0 with --repeats authors")
	case c.NoveltyRedo < 0:
		return bad("novelty-redo", c.NoveltyRedo, "at least 0")
	case !(c.PerturbSigma > 0) || !(c.PerturbGrowth >= 1) || c.PerturbTries < 0:
		return bad("perturbation", fmt.Sprintf("sigma %v growth %v tries %d", c.PerturbSigma, c.PerturbGrowth, c.PerturbTries),
			"sigma > 0, growth >= 1, tries >= 0")
	case c.Repeats != RepeatsSkip && c.Repeats != RepeatsAuthors:
		return bad("repeats", strconv.Quote(string(c.Repeats)), `"skip" or "authors"`)
	case c.Q < 1:
		return bad("q", c.Q, "at least 1")
	case c.Q > 1 && c.Repeats != RepeatsSkip:
		return bad("q", c.Q, `1 with --repeats authors (the authors' loop proposes one point at a time)`)
	case c.Evaluators < 0:
		return bad("evaluators", c.Evaluators, "at least 0 (0: q)")
	case c.Async && c.Repeats != RepeatsSkip:
		return bad("async", true, "false with --repeats authors")
	case c.RepeatTries < 1 && c.Repeats == RepeatsSkip:
		return bad("repeat-tries", c.RepeatTries, "at least 1")
	case c.TrustRegion && (c.Repeats != RepeatsSkip || c.Strategy != StrategyBO):
		return bad("trust-region", true, `false unless --strategy bo --repeats skip`)
	case c.SamplesPerModel < 0:
		return bad("samples-per-model", c.SamplesPerModel, "at least 0")
	case !(c.LabelledFraction >= 0 && c.LabelledFraction <= 1):
		return bad("labelled-fraction", c.LabelledFraction, "in [0, 1]")
	}
	if c.TrustRegion {
		return c.TR.validate()
	}
	return nil
}

// Field is one named setting of a configuration, rendered as text.
type Field struct{ Name, Value string }

// Fields returns the configuration as named text values, in a fixed order
// (Extra last, sorted by name): what config.json stores and resume compares.
func (c Config) Fields() []Field {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	i := strconv.Itoa
	fs := []Field{}
	fs = append(fs, []Field{
		{"strategy", string(c.Strategy)},
		{"budget", i(c.Budget)},
		{"retrain-every", i(c.RetrainEvery)},
		{"k", f(c.RankK)},
		{"initial-retrain-epochs", f(c.InitialRetrainEpochs)},
		{"retrain-epochs", f(c.RetrainEpochs)},
		{"n-best", i(c.NBest)},
		{"n-rand", i(c.NRand)},
		{"inducing", i(c.Inducing)},
		{"kernel", c.Kernel.String()},
		{"gp-objective", string(c.GPObjective)},
		{"gp-refit", string(c.GPRefit)},
		{"gp-iters", i(c.GPIters)},
		{"gp-inducing", string(c.GPInducing)},
		{"warp", strconv.FormatBool(c.Warp)},
		{"acq", c.Acq.String()},
		{"best-quantile", f(c.BestQuantile)},
		{"tau", f(c.Tau)},
		{"raw-samples", i(c.RawSamples)},
		{"restarts", i(c.Restarts)},
		{"restart-selection", string(c.RestartSelection)},
		{"perturb-sigma", f(c.PerturbSigma)},
		{"perturb-growth", f(c.PerturbGrowth)},
		{"perturb-tries", i(c.PerturbTries)},
		{"novelty-redo", i(c.NoveltyRedo)},
		{"repeats", string(c.Repeats)},
		{"q", i(c.Q)},
	}...)
	if c.Repeats == RepeatsSkip {
		fs = append(fs, Field{"repeat-tries", i(c.RepeatTries)})
		if c.WarmStarts > 0 {
			// Recorded only when set: runs made before it had none,
			// and so read as 0.
			fs = append(fs, Field{"warm-starts", i(c.WarmStarts)})
		}
		if c.Async {
			// The asynchronous policy's rounds depend on the number of
			// workers; the synchronous policy's do not.
			fs = append(fs, Field{"async", "true"}, Field{"evaluators", i(c.Evaluators)})
		}
	}
	fs = append(fs, Field{"trust-region", strconv.FormatBool(c.TrustRegion)})
	if c.TrustRegion {
		fs = append(fs, c.TR.fields()...)
	}
	fs = append(fs, []Field{
		{"samples-per-model", i(c.SamplesPerModel)},
		{"labelled-fraction", f(c.LabelledFraction)},
		{"seed", strconv.FormatUint(c.Seed, 10)},
	}...)
	keys := make([]string, 0, len(c.Extra))
	for k := range c.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fs = append(fs, Field{k, c.Extra[k]})
	}
	return fs
}

// resumable lists the settings that may change when a run is resumed: a
// larger or smaller budget extends or ends a run without changing the
// queries made so far.
var resumable = map[string]bool{"budget": true}

// legacyFields are the settings added after runs were first made, with the
// value those runs used: the best raw samples as restarts, no redo of the
// acquisition step, the Titsias bound, the authors' novelty check with one
// proposal per round, no trust region, a GP fit at every query and
// gp.DefaultMaxIter iterations of a fit from scratch, inducing points fixed
// between fits.
var legacyFields = []Field{{"restart-selection", string(acq.SelectBest)}, {"novelty-redo", "0"}, {"gp-objective", string(gp.Titsias)},
	{"repeats", string(RepeatsAuthors)}, {"q", "1"}, {"trust-region", "false"}, {"gp-refit", string(GPRefitEvery)},
	{"gp-iters", strconv.Itoa(gp.DefaultMaxIter)}, {"gp-inducing", string(GPInducingFixed)}}

// RecordedDefaults returns the values that the run in dir was made with of
// the settings whose default for a new run has changed since runs were
// first made (legacyFields' names, and warm-starts): its config.json's,
// completed with legacyFields' for a run made before a setting existed and
// with warm-starts 0 where config.json has none (it records warm starts
// only when there are some). A resume that is not given one of these
// settings takes the run's value, not today's default, so that a run made
// under an older default resumes as it was made. The error wraps
// fs.ErrNotExist when dir holds no config.json.
func RecordedDefaults(dir string) (map[string]string, error) {
	stored, err := ReadConfigFields(dir)
	if err != nil {
		return nil, err
	}
	// The values of a run that config.json does not record, overwritten
	// by those it does.
	out := map[string]string{"warm-starts": "0"}
	for _, f := range legacyFields {
		out[f.Name] = f.Value
	}
	for _, f := range stored {
		if _, changed := out[f.Name]; changed {
			out[f.Name] = f.Value
		}
	}
	return out, nil
}

// upgradeFields completes the stored fields of a run made before some
// settings existed with the values that run used; a run from before
// restart-selection also has its strategy "random" renamed "prior" (it
// sampled the prior).
func upgradeFields(stored []Field) []Field {
	have := make(map[string]bool, len(stored))
	for _, f := range stored {
		have[f.Name] = true
	}
	out := make([]Field, 0, len(stored)+len(legacyFields))
	for _, f := range stored {
		if f.Name == "strategy" && f.Value == string(StrategyRandom) && !have["restart-selection"] {
			f.Value = string(StrategyPrior)
		}
		out = append(out, f)
	}
	for _, f := range legacyFields {
		if !have[f.Name] {
			out = append(out, f)
		}
	}
	return out
}

// locatedBy maps the fields that say where an input was read from (paths)
// to the field that identifies its content: a run resumes with its inputs
// read from elsewhere, another directory or machine, when their content is
// the same.
var locatedBy = map[string]string{"data-source": "data-sha256", "target": "target-key"}

// diffFields describes how the stored configuration differs from the
// current one, ignoring the resumable settings and the inputs' locations
// where their content is the same; "" means no difference.
func diffFields(stored, current []Field) string {
	sm := make(map[string]string, len(stored))
	for _, f := range stored {
		sm[f.Name] = f.Value
	}
	cm := make(map[string]string, len(current))
	for _, f := range current {
		cm[f.Name] = f.Value
	}
	sameContent := func(name string) bool {
		id, ok := locatedBy[name]
		return ok && sm[id] != "" && sm[id] == cm[id]
	}
	var diffs []string
	seen := make(map[string]bool, len(current))
	for _, f := range current {
		seen[f.Name] = true
		if resumable[f.Name] || sameContent(f.Name) {
			continue
		}
		v, ok := sm[f.Name]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: the run has none, now %q", f.Name, f.Value))
		case v != f.Value:
			diffs = append(diffs, fmt.Sprintf("%s: the run has %q, now %q", f.Name, v, f.Value))
		}
	}
	for _, f := range stored {
		if !seen[f.Name] && !resumable[f.Name] {
			diffs = append(diffs, fmt.Sprintf("%s: the run has %q, now none", f.Name, f.Value))
		}
	}
	return strings.Join(diffs, "; ")
}

// Workers is how many evaluations run at once: Evaluators, else Q (at
// least 1). The loop and whatever runs its evaluations (a program's
// executor, the labelled start's scoring) take it from here alone.
func (c Config) Workers() int {
	if c.Evaluators > 0 {
		return c.Evaluators
	}
	return max(c.Q, 1)
}
