package bo

import (
	"errors"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// Task is the black box being optimised. O is the type of its objects (an
// expression's text, a design, a molecule's SMILES).
type Task[O any] interface {
	// Score returns the objective of obj in the task's own direction. An
	// error or a NaN counts as a failure and gets FailureScore. It must be
	// safe for concurrent use: a round of q proposals evaluates them at
	// once.
	Score(obj O) (float64, error)
	// Deterministic reports whether Score always gives an object the same
	// score. Under RepeatsSkip the loop then never evaluates an object
	// whose score it knows; a stochastic objective evaluates repeats again
	// (as replicates).
	Deterministic() bool
	// FailureScore is the score of an invalid decode or a failed evaluation.
	FailureScore() float64
	// Maximize reports whether higher scores are better.
	Maximize() bool
	// Key returns the identity of obj: two objects with the same key are
	// the same object for the novelty check. Parse(Key(o)) must give o back,
	// since the journal stores keys.
	Key(obj O) string
	// Parse returns the object whose key is key.
	Parse(key string) (O, error)
}

// Model is the generative model whose latent space is searched.
type Model[O any] interface {
	// LatentDim returns the dimension of the latent space.
	LatentDim() int
	// Accept returns nil when the model can take obj as a training example
	// and encode it, and otherwise why not (a molecule whose junction tree
	// cannot be built). The loop leaves an object it does not accept out of
	// retraining and of the surrogate's data; a query that decoded to it
	// stays among the results with its score. The verdict on an object must
	// not change with retraining.
	Accept(obj O) error
	// Encode returns the encoder means of objs (len(objs) x LatentDim).
	Encode(objs []O) (*mat.Dense, error)
	// Decode decodes the rows of z; valid[i] is false when row i decodes to
	// no valid object. Stochastic decoding must depend only on seed.
	Decode(z *mat.Dense, seed uint64) (objs []O, valid []bool, err error)
	// Retrain trains the model further on req's data with its ELBO and
	// returns its mean losses by name (e.g. rec, kl, metric, pred; nil when
	// it has none to report), which the journal records per version.
	Retrain(req RetrainRequest[O]) (map[string]float64, error)
	// Save writes the model's weights to path; Load reads them back.
	Save(path string) error
	// Load replaces the model's weights by those saved at path.
	Load(path string) error
}

// FeaturiseCPU is implemented by a Model that makes its examples on demand
// on threads of its own, often beside the retraining (the molecule task's
// featurisation): FeaturiseCPU returns the CPU seconds that work has taken
// so far. The journal records it apart from the retraining and encoding
// it served (Version.FeaturiseCPU, Timing.FeaturiseCPU), and LoopCost
// reports it as a stage of its own, so that a run's first versions, which
// featurise what a full featurisation would have made beforehand, are not
// read as the retraining's cost.
type FeaturiseCPU interface {
	FeaturiseCPU() float64
}

// PointwiseDecoder is implemented by a Model whose decoding costs about the
// same per point however many points share a call, and whose objects depend
// neither on the seed nor on the other points of the call (the molecule
// task's greedy JT-VAE decoding: a tree search and an assembly per
// molecule). DecodeWidth returns how many points it decodes at the cost of
// one (its parallel workers; 0: it is not such a model now). The loop then
// decodes perturbations and random draws that many at a time instead of
// ten, so that it stops paying at the first new object; it finds the same
// objects either way.
type PointwiseDecoder interface {
	DecodeWidth() int
}

// RetrainRequest is the data and schedule of one retraining.
type RetrainRequest[O any] struct {
	// Objects are the training objects, Scores their task scores (in the
	// task's direction, for metric losses and target prediction).
	Objects []O
	Scores  []float64
	// Weights are the rank weights, proportional to each object's
	// probability of being sampled into a mini-batch.
	Weights []float64
	// Epochs is the number of passes (fractions allowed).
	Epochs float64
	// Seed determines every random choice of the retraining.
	Seed uint64
	// Version is the model version this retraining produces.
	Version int
}

// Data is a labelled set of objects.
type Data[O any] struct {
	Objects []O
	Scores  []float64
	// Failed marks the objects whose evaluation failed (a start scored by
	// the objective for the run), whose scores are the failure score: they
	// are never reported as the best (nil: none failed).
	Failed []bool
}

// failed reports whether object i's evaluation failed.
func (d Data[O]) failed(i int) bool { return d.Failed != nil && d.Failed[i] }

// Len returns the number of points.
func (d Data[O]) Len() int { return len(d.Objects) }

// Submitter is implemented by a Task whose evaluations run as jobs that
// outlive the process (Slurm job arrays) and cost money each time they
// are submitted: the loop journals every job the task reports through the
// callback it sets with OnSubmit, and on resume hands each journaled job
// to Attach before evaluating, so that jobs submitted before a kill are
// awaited (or their results read back) instead of submitted again.
//
// The task reports a job twice: its intent, Job{Token}, before submitting
// it, and Job{ID, Token} once the scheduler took it. The callback returns
// once the record is on disk; an error from it on an intent means the job
// must not be submitted (nothing would find it after a kill). Attach of a
// job journaled as an intent only looks it up by its token; it returns an
// error wrapping ErrNotSubmitted only when the job provably never reached
// the scheduler and never will (its evaluations are then submitted anew),
// and another error when it cannot tell, which stops the run rather than
// risk paying for the evaluations twice.
type Submitter interface {
	OnSubmit(func(Job) error)
	Attach(Job) error
}

// TaggedScorer is implemented by a Task that ties each evaluation to what
// it is for: the loop calls ScoreTagged(tag, obj) instead of Score, with a
// tag unique to the evaluation within the run and the same when a resume
// evaluates it again (QueryTag for a query, SampleTag for a version's prior
// sample). A Submitter does so, so that after a resume a journaled job's
// result goes to the evaluation it was submitted for and to no other:
// under a stochastic objective a later evaluation of the same object is a
// new one, not an earlier one's result.
type TaggedScorer[O any] interface {
	ScoreTagged(tag string, obj O) (float64, error)
}

// QueryTag is the TaggedScorer tag of query index's evaluation.
func QueryTag(index int) string { return "query-" + strconv.Itoa(index) }

// SampleTag is the TaggedScorer tag of the evaluation of prior sample i of
// model version v.
func SampleTag(v, i int) string { return "version-" + strconv.Itoa(v) + "-sample-" + strconv.Itoa(i) }

// Halt is a Score error that stops the run: the objective cannot go on (a
// program found broken: one that cannot be started, or whose first
// evaluations all failed), or a stop was asked for (Options.Context). Run
// then proposes nothing more, awaits the evaluations still running
// (journaling them) and returns Err. When Failure is set the evaluation was
// made and failed: it is journaled with the failure score and that reason,
// as any failure, and counts against the budget. Otherwise it was not made
// (the program never ran, or was killed for the stop) and is not
// journaled: a resumed run evaluates the object.
type Halt struct {
	Err     error
	Failure string
}

func (h *Halt) Error() string { return h.Err.Error() }
func (h *Halt) Unwrap() error { return h.Err }

// ErrDeferred is wrapped by a Score (or ScoreTagged) error for an
// evaluation the task does not make in this process: its result will come
// from elsewhere (a person who measures the object and tells the run). The
// query stays pending, journaled as proposed and without an evaluation, as
// after a kill; it conditions the later proposals as a fantasy and is not
// proposed again, and a resume asks the task again. Once nothing can be
// proposed without the deferred results (the version's or the budget's
// evaluations are all proposed, or Options.Proposals are made) and no
// evaluation runs, Run returns them in Result.Pending, without an error.
// Only the rounds of RepeatsSkip defer; the authors' loop takes it as a
// failure.
var ErrDeferred = errors.New("evaluation deferred")

// ErrNotSubmitted is wrapped by a Submitter's Attach error for a job that
// never reached its scheduler (killed between its intent and its
// submission): its evaluations are submitted anew.
var ErrNotSubmitted = errors.New("the job never reached its scheduler")
