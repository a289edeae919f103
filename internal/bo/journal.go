package bo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/rusage"
)

// Query is the journal record of one evaluated query.
type Query struct {
	// Index is the query's position in the run (0-based).
	Index int `json:"i"`
	// Version is the model version that proposed and decoded it.
	Version int `json:"version"`
	// Z is the latent point that was decoded (after perturbation).
	Z []float64 `json:"z"`
	// Proposed is the proposal of the last acquisition step before the
	// novelty check perturbed it (absent when Z was not perturbed).
	Proposed []float64 `json:"z_proposed,omitempty"`
	// Object is the task's key of the decoded object ("" when invalid).
	Object string `json:"object"`
	// Valid is false when z decoded to no valid object.
	Valid bool `json:"valid"`
	// Score is the task's score (FailureScore on failure).
	Score float64 `json:"score"`
	// Failure says why the query scored FailureScore ("" when it did not).
	Failure string `json:"failure,omitempty"`
	// Random is set when the GP fit or the acquisition failed and z is a
	// uniform draw from the latent box (the reference's
	// rand_point_due_bo_fail).
	Random bool `json:"random,omitempty"`
	// RandomReason says why a Random query's point is random: the GP fit's
	// or the acquisition's error.
	RandomReason string `json:"random_reason,omitempty"`
	// Perturbations counts the perturbed decodes of the novelty check.
	Perturbations int `json:"perturbations,omitempty"`
	// Redos counts the acquisition steps redone away from the points tried
	// because no perturbation found a new object.
	Redos int `json:"redos,omitempty"`
	// Draws counts the draws of a random-search query (1: the first was
	// valid and new).
	Draws int `json:"draws,omitempty"`
	// Duplicate is set when the query evaluated an object already seen:
	// the novelty check and its redos, or the random draws, found no new one.
	Duplicate bool `json:"duplicate,omitempty"`
	// Known is set when the object had been evaluated before (it is in the
	// labelled data or an earlier query) and its known score was reused
	// instead of evaluating it again (RepeatsSkip): a repeat avoided, which
	// costs no budget.
	Known bool `json:"known,omitempty"`
	// Round is the index of the first query of the query's round
	// (RepeatsSkip; a round fits the GP once).
	Round int `json:"round,omitempty"`
	// Tries counts the acquisition steps of this proposal that ended in a
	// known object or an invalid decode before it (RepeatsSkip).
	Tries int `json:"tries,omitempty"`
	// Fallback says how an evaluated object was found once the tries were
	// spent (RepeatsSkip): FallbackBall, or FallbackBallOutsideTR when
	// the trust region held no novel object; FallbackRadius is the radius
	// of the ball, in the normalised latent box.
	Fallback       string  `json:"fallback,omitempty"`
	FallbackRadius float64 `json:"fallback_radius,omitempty"`
	// Incumbent is the best score after this query (labelled start
	// included), in the task's direction.
	Incumbent float64 `json:"incumbent"`
	// GP describes the query's GP fit (BO only; under RepeatsSkip on the
	// first query of its round).
	GP *GPFit `json:"gp,omitempty"`
	// GPKept is set instead when the query (or round) fitted no GP but kept
	// that of the version's last fit, conditioned on the points added since
	// (Config.GPRefit other than every); Timing.GPFit is then the time of
	// that conditioning.
	GPKept bool `json:"gp_kept,omitempty"`
	// Acq is the acquisition value (EI or log-EI) at the proposal and EI
	// the expected improvement there (both 0 for random search).
	Acq float64 `json:"acq"`
	EI  float64 `json:"ei"`
	// Mean and SD are the GP's posterior mean and standard deviation of
	// the score at the proposal, in the task's scale, with the round's
	// earlier proposals and the evaluations still pending as fantasies
	// (BO only; absent for a random point).
	Mean *float64 `json:"mean,omitempty"`
	SD   *float64 `json:"sd,omitempty"`
	// Timing is where the query's time went.
	Timing Timing `json:"timing"`
}

// GPFit summarises a GP fit: on a version's first query it is fitted from
// scratch, on the others warm-started from the previous fit (at every query
// or round under GPRefitEvery; under the other schedules only where they
// fit, Query.GPKept marking the others).
type GPFit struct {
	// LogLik is the log marginal likelihood of the standardised targets
	// (for a sparse GP its training objective, the Titsias bound or FITC),
	// without the priors.
	LogLik float64 `json:"loglik"`
	// Noise is the noise variance, Outputscale the kernel variance (both of
	// the standardised targets); LengthscaleMin and LengthscaleMax the range
	// of the ARD length-scales (in the unit box).
	Noise          float64 `json:"noise"`
	Outputscale    float64 `json:"outputscale"`
	LengthscaleMin float64 `json:"ls_min"`
	LengthscaleMax float64 `json:"ls_max"`
	// Points is the number of training points, Iterations the L-BFGS
	// iterations, Warm whether the fit was warm-started.
	Points     int  `json:"points"`
	Iterations int  `json:"iters"`
	Warm       bool `json:"warm,omitempty"`
	// WarpMin and WarpMax are the range of the Kumaraswamy input warping's
	// parameters a and b over the dimensions of a warped GP (W-LBO; a = b =
	// 1 leaves the inputs as they are); both 0 for an unwarped GP.
	WarpMin float64 `json:"warp_min,omitempty"`
	WarpMax float64 `json:"warp_max,omitempty"`
	// Clamped counts the targets the standardiser clamped to its fence
	// (gp.NewStandardizer: farther than gp.FenceSDs robust standard
	// deviations from their median, such as a program's -1e308).
	Clamped int `json:"clamped,omitempty"`
}

// Timing splits a query's wall time, in seconds.
type Timing struct {
	// Encode is the encoding of the GP subset (first query of a version).
	Encode float64 `json:"encode,omitempty"`
	// GPFit is the GP fit (with its preprocessing).
	GPFit float64 `json:"gp_fit,omitempty"`
	// Acq is the acquisition maximisation (or the prior draw).
	Acq float64 `json:"acq,omitempty"`
	// Decode is decoding, perturbations included.
	Decode float64 `json:"decode,omitempty"`
	// Eval is the black-box evaluation.
	Eval float64 `json:"eval,omitempty"`
	// FeaturiseCPU is the CPU seconds of the examples made on demand for
	// the encoding (FeaturiseCPU; part of Encode's wall time).
	FeaturiseCPU float64 `json:"featurise_cpu,omitempty"`
	// Total is the query's wall time, bookkeeping included.
	Total float64 `json:"total"`
}

// Version is the journal record of a model version, written once its
// weights file is in place.
type Version struct {
	// Version is the version number (0: before the first query).
	Version int `json:"version"`
	// File is the weights file, relative to the run directory.
	File string `json:"file"`
	// Points is the size of the data when the version was made; Excluded
	// counts the objects among them the model does not accept (Model.Accept),
	// which were left out of its retraining and surrogate data.
	Points   int `json:"points"`
	Excluded int `json:"excluded,omitempty"`
	// Epochs is the retraining's length (0: no retraining).
	Epochs float64 `json:"epochs"`
	// RetrainSeconds is the retraining's wall time; SampleSeconds that of
	// the prior samples.
	RetrainSeconds float64 `json:"retrain_s"`
	SampleSeconds  float64 `json:"sample_s,omitempty"`
	// FeaturiseCPU is the CPU seconds of the examples made on demand for
	// the retraining, on threads of their own (FeaturiseCPU).
	FeaturiseCPU float64 `json:"featurise_cpu_s,omitempty"`
	// Losses are the retraining's mean losses by name, as the model
	// reports them (absent without retraining).
	Losses map[string]float64 `json:"losses,omitempty"`
	// Samples are the decoded prior samples (Config.SamplesPerModel).
	Samples []Sample `json:"samples,omitempty"`
}

// Sample is a decoded prior sample of a model version.
type Sample struct {
	Object string  `json:"object"`
	Valid  bool    `json:"valid"`
	Score  float64 `json:"score"`
}

// Stop is the journal record of an inner loop stopped because the maximal
// EI fell below tau.
type Stop struct {
	Version int     `json:"version"`
	After   int     `json:"after"` // queries evaluated in the run before the stop
	EI      float64 `json:"ei"`
}

// Round is the journal record of one round of RepeatsSkip, written after
// its proposals are chosen and before any is evaluated: its queries in
// index order, the known objects and invalid decodes complete, the others
// (Pending) awaiting an Eval record each. A run killed during the round's
// evaluations evaluates on resume only the pending queries without one.
type Round struct {
	// Start is the index of the round's first query, Version its model
	// version.
	Start   int `json:"start"`
	Version int `json:"version"`
	// Queries are the round's queries; the pending ones have no score yet.
	Queries []Query `json:"queries"`
	// Pending are the indices of the queries to evaluate.
	Pending []int `json:"pending"`
	// TR is the trust region of the round (at its start), when one is used.
	TR *TrustRegion `json:"tr,omitempty"`
	// GPKept is set when the round fitted no GP but kept that of the
	// version's last fit (Query.GPKept), which a resume must know.
	GPKept bool `json:"gp_kept,omitempty"`
	// GPUpdate is the wall time, in seconds, that the round spent
	// conditioning its GP on fantasies, known scores and failures between
	// its acquisition steps (absent in runs made before it was timed).
	GPUpdate float64 `json:"gp_update,omitempty"`
}

// Eval is the journal record of one finished evaluation of a round.
type Eval struct {
	// Index is the query's index.
	Index int `json:"i"`
	// Score is the task's score (FailureScore on failure) and Failure why.
	Score   float64 `json:"score"`
	Failure string  `json:"failure,omitempty"`
	// Seconds is the evaluation's wall time and At when it finished (Unix
	// seconds): together they give the workers' busy time.
	Seconds float64 `json:"eval_s"`
	At      float64 `json:"t,omitempty"`
}

// Job is the journal record of a job that evaluates queries outside the
// process (a Slurm job array of a Submitter task). A Submitter reports each
// job twice: its intent, before submitting it (Token set, ID empty), and
// its submission (ID and Token), so that a kill between the two leaves the
// token in the journal for the resumed run to look the job up by
// (Submitter.Attach) instead of submitting its evaluations again. A job
// journaled before tokens has an ID only.
type Job struct {
	// ID is the scheduler's id of the job ("" in an intent).
	ID string `json:"id,omitempty"`
	// Token names the job before it has an id, unique to it: the
	// Submitter submits the job under it (a Slurm job name).
	Token string `json:"token,omitempty"`
}

// record is one journal line: exactly one of its records is set.
type record struct {
	Query   *Query   `json:"query,omitempty"`
	Version *Version `json:"version,omitempty"`
	Stop    *Stop    `json:"stop,omitempty"`
	Round   *Round   `json:"round,omitempty"`
	Eval    *Eval    `json:"eval,omitempty"`
	Job     *Job     `json:"job,omitempty"`
	// CPU is the CPU time in seconds that the process used since its
	// previous line (since the run started, for the first line it writes),
	// evaluation programs it ran and waited for included: the journal's sum
	// is the run's CPU time across resumes, but for what a kill cut off
	// after the last line. Absent in journals written before it was kept.
	CPU float64 `json:"cpu_s,omitempty"`
}

// journal appends records to a JSON-lines file, each flushed to disk before
// append returns.
type journal struct {
	path string
	f    *os.File
	mu   sync.Mutex // a Submitter's jobs are journaled from its goroutines
	cpu  float64    // the process's CPU seconds at the previous line
}

// openJournal opens path for appending, truncated to size bytes (dropping
// a torn last line), creating it when missing; cpu is the process's CPU
// time (rusage.CPUSecondsWithChildren) when the run started.
func openJournal(path string, size int64, cpu float64) (*journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("truncate journal %s: %w", path, err)
	}
	if _, err := f.Seek(size, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek journal %s: %w", path, err)
	}
	return &journal{path: path, f: f, cpu: cpu}, nil
}

// append writes rec as one line, with the CPU time used since the
// previous one, and syncs the file.
func (j *journal) append(rec record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if now := rusage.CPUSecondsWithChildren(); !math.IsNaN(now) && !math.IsNaN(j.cpu) {
		rec.CPU = math.Round(max(now-j.cpu, 0)*1e6) / 1e6 // getrusage counts microseconds
		j.cpu = now
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("journal %s: encode record: %w", j.path, err)
	}
	b = append(b, '\n')
	if _, err := j.f.Write(b); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: sync: %w", j.path, err)
	}
	return nil
}

// close closes the file.
func (j *journal) close() error { return j.f.Close() }

// readJournal reads the records of path. A last line without its newline
// (a write cut short by a kill) is dropped and reported in torn; size is the
// length of the valid prefix. A missing file has no records.
func readJournal(path string) (recs []record, size int64, torn string, err error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, 0, "", nil
	}
	if err != nil {
		return nil, 0, "", fmt.Errorf("read journal: %w", err)
	}
	return parseJournal(path, b)
}

// parseJournal parses the journal text b, read from path, as readJournal
// does.
func parseJournal(path string, b []byte) (recs []record, size int64, torn string, err error) {
	lineNo := 0
	for len(b[size:]) > 0 {
		rest := b[size:]
		lineNo++
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			torn = fmt.Sprintf("%s: dropped a torn last line (line %d, %d bytes without a newline)", path, lineNo, len(rest))
			break
		}
		var rec record
		if err := json.Unmarshal(rest[:nl], &rec); err != nil {
			return nil, 0, "", fmt.Errorf("journal %s, line %d: %w", path, lineNo, err)
		}
		if err := rec.check(); err != nil {
			return nil, 0, "", fmt.Errorf("journal %s, line %d: %w", path, lineNo, err)
		}
		recs = append(recs, rec)
		size += int64(nl + 1)
	}
	return recs, size, torn, nil
}

// check verifies that exactly one field is set and that numbers are sane.
func (r record) check() error {
	n := 0
	for _, set := range []bool{r.Query != nil, r.Version != nil, r.Stop != nil, r.Round != nil, r.Eval != nil, r.Job != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("record has %d of query/version/stop/round/eval, want exactly one of query/version/stop/round/eval/job", n)
	}
	if rd := r.Round; rd != nil {
		if len(rd.Queries) == 0 || len(rd.Pending) == 0 {
			return fmt.Errorf("round %d has %d queries and %d pending, want at least one of each", rd.Start, len(rd.Queries), len(rd.Pending))
		}
		for k, q := range rd.Queries {
			if q.Index != rd.Start+k || q.Round != rd.Start {
				return fmt.Errorf("round %d: query %d of round %d at position %d", rd.Start, q.Index, q.Round, k)
			}
		}
		for _, i := range rd.Pending {
			if i < rd.Start || i >= rd.Start+len(rd.Queries) {
				return fmt.Errorf("round %d: pending query %d is not in the round", rd.Start, i)
			}
		}
	}
	if j := r.Job; j != nil && j.ID == "" && j.Token == "" {
		return errors.New("job record with neither id nor token")
	}
	if e := r.Eval; e != nil && math.IsNaN(e.Score) {
		return fmt.Errorf("evaluation of query %d: score is NaN", e.Index)
	}
	if q := r.Query; q != nil {
		if q.Index < 0 || q.Version < 0 {
			return fmt.Errorf("query %d of version %d: negative index", q.Index, q.Version)
		}
		if math.IsNaN(q.Score) {
			return fmt.Errorf("query %d: score is NaN", q.Index)
		}
	}
	if v := r.Version; v != nil && (v.Version < 0 || v.File == "") {
		return fmt.Errorf("version record %d with file %q", v.Version, v.File)
	}
	return nil
}

// finiteMap returns m with non-finite values replaced by 0, or nil when m is
// empty.
func finiteMap(m map[string]float64) map[string]float64 {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = finite(v)
	}
	return out
}

// finite returns v, or 0 when v is NaN or infinite (JSON has no such numbers).
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
