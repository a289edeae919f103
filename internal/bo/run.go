package bo

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"strconv"
)

// runner holds the state of one run, in groups: the retraining data, what
// the journal holds, the current model version, and the rounds in flight.
// The loop policy (the authors' loop or rounds, Config.Repeats) drives it.
type runner[O any] struct {
	cfg  Config
	task Task[O]
	// vae is the task's model (the VAE): it encodes, decodes and retrains.
	// The GP is the surrogate's.
	vae  Model[O]
	opts Options
	sign float64 // +1 when the task maximises, -1 when it minimises
	// policy spends the budget: authorsLoop or roundsLoop.
	policy loopPolicy

	data    runData[O]
	journal journalState
	version versionState
	round   roundState
	// surrogate is the GP side: the version's latent points and fits.
	surrogate surrogate

	// evaluated counts the queries that spent budget (Config.Budget).
	evaluated int
	// exhausted says why no novel object could be found (the run ends).
	exhausted string
	// halt is why the run stops (a Halt of the task, Options.Context):
	// nothing more is proposed, and Run returns it once no evaluation runs.
	halt error
}

// journalState is what the run has journaled, and the journal file that
// takes the next records.
type journalState struct {
	file     *journal
	queries  []Query
	versions []Version
	// jobs are the journaled jobs of a Submitter task, in journal order,
	// an intent and its submission merged (by token).
	jobs []Job
	// resumed counts the queries read back from the journal, replayedFits
	// the GP fits repeated on resuming (Result).
	resumed, replayedFits int
	// reported counts the queries reported through Progress (rounds).
	reported int
}

// loopPolicy is how a run spends its budget between retrainings:
// authorsLoop (RepeatsAuthors: one query at a time through the authors'
// novelty check) or roundsLoop (RepeatsSkip: rounds of up to q novel
// proposals, evaluated concurrently). The runner does the rest: the data,
// the journal, the model versions and the surrogate's points.
type loopPolicy interface {
	// loop proposes, evaluates and journals until the budget is spent,
	// no novel object is within reach, or the run stops.
	loop() error
	// replay applies a journaled query, round or evaluation to the state;
	// a record of the other policy is an error.
	replay(rec record) error
	// counts reports whether q spent budget.
	counts(q Query) bool
	// lastFit returns the index that seeds the current version's last
	// journaled GP fit, and whether the version has one.
	lastFit() (int, bool)
	// replayFits adds the points of the current version's journaled steps
	// to the surrogate, each GP fit replayed where it was (replayFit).
	replayFits(refit bool)
}

// Run runs (or, with opts.Resume, continues) the optimisation of task in
// model's latent space, starting from the labelled data, and returns its
// summary. Everything it does is recorded in opts.Dir.
func Run[O any](cfg Config, task Task[O], model Model[O], data Data[O], opts Options) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("bo: no run directory")
	}
	if model.LatentDim() < 1 {
		return nil, fmt.Errorf("bo: model has latent dimension %d", model.LatentDim())
	}
	if err := checkData(data); err != nil {
		return nil, err
	}
	if err := checkResume(opts); err != nil {
		return nil, err
	}
	cfg.Extra = maps.Clone(cfg.Extra)
	if cfg.Extra == nil {
		cfg.Extra = map[string]string{}
	}
	cfg.Extra["maximize"] = strconv.FormatBool(task.Maximize())
	cfg.Extra["data-sha256"] = dataDigest(task, data)
	r := &runner[O]{cfg: cfg, task: task, vae: model, opts: opts, sign: -1, version: versionState{current: -1},
		round: roundState{open: map[int]*openRound{}, trustRegion: newTrustRegion(cfg.TR)}}
	if task.Maximize() {
		r.sign = 1
	}
	r.policy = &roundsLoop[O]{r}
	if cfg.Repeats == RepeatsAuthors {
		r.policy = &authorsLoop[O]{r}
	}
	r.surrogate.cfg = cfg
	r.surrogate.stop = r.contextDone
	if opts.Lock == nil {
		lock, err := LockDir(opts.Dir) // makes the directory
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
	} else if !opts.Lock.Holds(opts.Dir) {
		return nil, fmt.Errorf("bo: Options.Lock is the lock of %s, not of the run directory %s", opts.Lock.dir, opts.Dir)
	}
	if err := r.open(data); err != nil {
		return nil, err
	}
	defer r.journal.file.close()
	if cfg.Strategy == StrategyBO && len(r.journal.versions) == 0 {
		// Once, when the run starts (not at every resume or ask).
		r.logf("%s", cfg.GPRefit.describe(cfg.GPIters, cfg.GPInducing))
	}
	if err := r.policy.loop(); err != nil {
		return r.result(), err
	}
	return r.result(), nil
}

// checkData verifies the labelled start.
func checkData[O any](d Data[O]) error {
	if len(d.Objects) == 0 {
		return errors.New("bo: no labelled data to start from")
	}
	if len(d.Scores) != len(d.Objects) {
		return fmt.Errorf("bo: %d objects but %d scores", len(d.Objects), len(d.Scores))
	}
	if d.Failed != nil && len(d.Failed) != len(d.Objects) {
		return fmt.Errorf("bo: %d objects but %d failure flags", len(d.Objects), len(d.Failed))
	}
	for i, s := range d.Scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("bo: score %d of the labelled data is %v", i, s)
		}
	}
	return nil
}

// dataDigest identifies the labelled start by content (keys and scores), so
// that resume refuses other data wherever they are read from.
func dataDigest[O any](task Task[O], d Data[O]) string {
	h := sha256.New()
	var buf [8]byte
	for i, obj := range d.Objects {
		io.WriteString(h, task.Key(obj))
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(d.Scores[i]))
		h.Write([]byte{0})
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// logf passes a warning or note to Options.Logf.
func (r *runner[O]) logf(format string, args ...any) {
	if r.opts.Logf != nil {
		r.opts.Logf(format, args...)
	}
}

// progress reports a stage (and a query) to Options.Progress.
func (r *runner[O]) progress(stage string, q *Query) {
	if r.opts.Progress == nil {
		return
	}
	b := r.bestSucceeded()
	r.opts.Progress(Progress{Stage: stage, Query: q, Done: r.evaluated, Budget: r.cfg.Budget,
		Version: r.version.current, Best: b.score, BestObject: b.object, Points: len(r.surrogate.x)})
}

// nextGP is surrogate.next, reporting StageFit first when it will fit
// from scratch (no earlier fit of the version to start from: a fit of
// tens of seconds on the paper's GP sizes, which would otherwise show
// nothing).
func (r *runner[O]) nextGP(seed uint64) (fitResult, bool) {
	if r.surrogate.last == nil {
		r.progress(StageFit, nil)
	}
	return r.surrogate.next(seed)
}

// contextDone returns the cause of a done Options.Context, else nil: the
// GP fit asks it between its evaluations (gp.Options.Stop).
func (r *runner[O]) contextDone() error {
	if ctx := r.opts.Context; ctx != nil && ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// stopping returns why the run stops (r.halt, set by a Halt of the task
// or now by a done Options.Context), or nil while it goes on.
func (r *runner[O]) stopping() error {
	if r.halt == nil {
		if cause := r.contextDone(); cause != nil {
			r.halt = fmt.Errorf("bo: run stopped: %w", cause)
		}
	}
	return r.halt
}

// writeResults rewrites results.npz from the complete queries.
func (r *runner[O]) writeResults() error {
	if err := writeResults(r.opts.Dir, r.cfg, r.vae.LatentDim(), r.data.initialBest(), r.complete(), r.journal.versions); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	return nil
}

// complete returns the queries before the open round, if any: those with
// their scores.
func (r *runner[O]) complete() []Query {
	end := len(r.journal.queries)
	for start := range r.round.open {
		end = min(end, start)
	}
	return r.journal.queries[:end]
}

// result summarises the run so far.
func (r *runner[O]) result() *Result {
	res := &Result{Queries: r.complete(), Versions: r.journal.versions, Resumed: r.journal.resumed,
		ReplayedFits: r.journal.replayedFits, Maximize: r.sign > 0, Evaluated: r.evaluated, Exhausted: r.exhausted}
	if len(r.data.util) > 0 {
		res.InitialBest = r.data.initialBest()
		b := r.bestSucceeded()
		res.Best, res.BestObject = b.score, b.object
	}
	for _, start := range r.round.starts() {
		o := r.round.open[start]
		for i := o.start; i < o.end; i++ {
			if o.pending[i] {
				res.Pending = append(res.Pending, r.journal.queries[i])
			}
		}
	}
	return res
}
