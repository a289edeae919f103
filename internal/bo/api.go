package bo

import "context"

// Options are a run's side settings: they do not change its results.
type Options struct {
	// Dir is the run directory (created when missing).
	Dir string
	// Resume continues the run in Dir; without it, a directory that already
	// holds a run is refused.
	Resume bool
	// Progress, when set, is called at each stage and after each query.
	Progress func(Progress)
	// Logf, when set, receives warnings and notes (torn journal line,
	// random fallbacks).
	Logf func(format string, args ...any)
	// Flags, when set, are the command line's settings as the user gave
	// them (flag name to value), kept in FlagsFile beside the
	// configuration, so that a resume can take them (ReadFlags). The loop
	// does not read them.
	Flags map[string]string
	// Context, when set, stops the run once done: nothing more is
	// proposed, the evaluations still running are awaited and journaled
	// (a task whose evaluations watch the same context gives them up,
	// Halt), and Run returns an error wrapping the context's cause. A
	// retraining in progress is finished first.
	Context context.Context
	// Lock, when set, is the run directory's lock (LockDir), taken by the
	// caller before anything it evaluates for the run (a labelled start
	// scored by the objective): Run holds it instead of taking its own, and
	// the caller releases it. Without it Run takes the lock itself.
	Lock *Lock
	// Proposals, when above 0, bounds the new queries this call proposes
	// (RepeatsSkip): once that many are journaled, Run proposes no more
	// and returns when no evaluation runs (deferred ones stay pending,
	// ErrDeferred).
	Proposals int
}

// Stages reported through Progress.
const (
	StageRetrain = "retrain"
	StageEncode  = "encode"
	StageReplay  = "replay"
	StageQuery   = "query"
	// StageFit is reported before a GP fit from scratch (a version's
	// first), the one that takes long; warm refits are not reported.
	StageFit = "fit"
)

// Progress describes where a run stands.
type Progress struct {
	// Stage is one of the Stage constants; Query is set for StageQuery.
	Stage string
	Query *Query
	// Done counts the queries that spent budget (under RepeatsSkip the
	// distinct evaluations), Budget is the budget.
	Done, Budget int
	// Version is the current model version.
	Version int
	// Points is the GP's training points at StageFit.
	Points int
	// Best and BestObject are the best score so far (initial data
	// included) and its object's key, failed evaluations left out (NaN
	// and "" while none succeeded).
	Best       float64
	BestObject string
}

// Result summarises a run.
type Result struct {
	// Queries are all queries of the run, resumed ones included.
	Queries []Query
	// Versions are the model versions.
	Versions []Version
	// Resumed counts the queries read back from the journal.
	Resumed int
	// ReplayedFits counts the GP fits a resume repeated to rebuild the
	// warm-start chain of the version it resumed in: 0 when GPWarmFile
	// held its last state.
	ReplayedFits int
	// InitialBest is the best score of the initial (labelled) data; Best
	// and BestObject the best after the queries. Failed evaluations (an
	// invalid decode, an objective's failure, a start object whose
	// evaluation failed: Data.Failed) are never the best: each is NaN (and
	// BestObject "") when every candidate failed.
	InitialBest float64
	Best        float64
	BestObject  string
	// Maximize is the task's direction.
	Maximize bool
	// Evaluated counts the queries that spent budget: under RepeatsSkip
	// the distinct objects evaluated.
	Evaluated int
	// Exhausted, when set, says why the run ended before its budget: no
	// novel object was within reach (RepeatsSkip).
	Exhausted string
	// Pending are the queries journaled without their evaluation when Run
	// returned (deferred by the task, ErrDeferred), in index order.
	Pending []Query
}

// Top returns up to n queries with the best scores among valid, distinct
// objects whose evaluation succeeded, best first.
func (r *Result) Top(n int) []Query {
	u := make([]float64, len(r.Queries))
	for i, q := range r.Queries {
		u[i] = q.Score
		if !r.Maximize {
			u[i] = -q.Score
		}
	}
	seen := make(map[string]bool)
	var out []Query
	for _, i := range orderBest(u) {
		q := r.Queries[i]
		if len(out) == n {
			break
		}
		if !q.Valid || q.Known || q.Failure != "" || seen[q.Object] {
			continue
		}
		seen[q.Object] = true
		out = append(out, q)
	}
	return out
}
