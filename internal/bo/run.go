package bo

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/rusage"
	"github.com/tlbo-native/tlbo-native/models/weighting"
)

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
}

// Stages reported through Progress.
const (
	StageRetrain = "retrain"
	StageEncode  = "encode"
	StageReplay  = "replay"
	StageQuery   = "query"
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

// runner holds the state of one run.
type runner[O any] struct {
	cfg   Config
	task  Task[O]
	model Model[O]
	opts  Options
	sign  float64 // +1 when the task maximises, -1 when it minimises

	data Data[O]   // retraining data: labelled start plus valid queries
	util []float64 // sign * score of data
	// failed marks the data whose evaluation failed (never the best).
	failed []bool
	// known maps the key of every object in data to its first score.
	known map[string]float64
	// accepted holds the model's verdict (Model.Accept) on the first
	// len(accepted) objects of data; later ones are not asked yet.
	accepted []bool

	queries  []Query
	versions []Version
	resumed  int
	// replayedFits counts the GP fits repeated on resuming (Result).
	replayedFits int
	initBest     int // index of the best initial point that did not fail (-1: none)

	version  int // current model version (-1: none yet)
	inVer    int // queries of the current version that spent budget
	verStart int // index of the current version's first query
	// evaluated counts the queries that spent budget (Config.Budget).
	evaluated int
	// open are the journaled rounds whose evaluations are not all in, by
	// the index of their first query; pending counts those evaluations.
	openRounds map[int]*openRound
	pending    int
	// running counts the evaluations started and not yet applied; results
	// receives them, and slots bounds how many run at once.
	running int
	results chan evalResult
	slots   chan struct{}
	// events are the current version's GP fits and point additions in
	// journal order, which prepareSurrogate replays after a resume.
	events []surEvent
	// tr is the trust region (Config.TrustRegion).
	tr TrustRegion
	// exhausted says why no novel object could be found (the run ends).
	exhausted string
	// clampNoted is 1 + the model version whose fits' clamped targets were
	// noted (noteClamped); 0 for none.
	clampNoted int
	// jobs are the journaled jobs of a Submitter task, in journal order,
	// an intent and its submission merged (by token).
	jobs    []Job
	stopped bool // the current version's inner loop has stopped (tau)
	loaded  bool // the model holds the current version's weights
	// moved says the model no longer holds its starting weights: a
	// version was loaded or retrained in this process.
	moved bool
	// halt is why the run stops (a Halt of the task, Options.Context):
	// nothing more is proposed, and Run returns it once no evaluation runs.
	halt     error
	surReady bool // the surrogate holds the current version's points
	sur      surrogate
	encodeS  float64 // encoding time to charge to the next query
	reported int     // queries reported through Progress (RepeatsSkip)

	journal *journal
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
	r := &runner[O]{cfg: cfg, task: task, model: model, opts: opts, sign: -1, version: -1}
	if task.Maximize() {
		r.sign = 1
	}
	r.sur.cfg = cfg
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
	defer r.journal.close()
	if err := r.loop(); err != nil {
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

func (r *runner[O]) logf(format string, args ...any) {
	if r.opts.Logf != nil {
		r.opts.Logf(format, args...)
	}
}

func (r *runner[O]) progress(stage string, q *Query) {
	if r.opts.Progress == nil {
		return
	}
	b := r.bestSucceeded()
	r.opts.Progress(Progress{Stage: stage, Query: q, Done: r.evaluated, Budget: r.cfg.Budget,
		Version: r.version, Best: b.score, BestObject: b.object})
}

// open prepares the run directory (new or resumed), selects the labelled
// start and replays the journal into the runner's state.
func (r *runner[O]) open(data Data[O]) error {
	cpu0 := rusage.CPUSecondsWithChildren() // the journal's first cpu_s counts from here, the replay included
	dir := r.opts.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bo: run directory: %w", err)
	}
	cfgPath := filepath.Join(dir, ConfigFile)
	jPath := filepath.Join(dir, JournalFile)
	_, cfgErr := os.Stat(cfgPath)
	exists := cfgErr == nil
	if !exists {
		if _, err := os.Stat(jPath); err == nil {
			return fmt.Errorf("bo: %s has a journal but no %s; cannot tell which run it belongs to", dir, ConfigFile)
		}
	}
	var recs []record
	var size int64
	switch {
	case exists && !r.opts.Resume:
		return fmt.Errorf("bo: %s already holds a run; pass --resume to continue it or choose another directory", dir)
	case exists:
		stored, err := ReadConfigFields(dir)
		if err != nil {
			return fmt.Errorf("bo: resume: %w", err)
		}
		if d := diffFields(upgradeFields(stored), r.cfg.Fields()); d != "" {
			return fmt.Errorf("bo: cannot resume %s with a different configuration: %s", dir, d)
		}
		var torn string
		recs, size, torn, err = readJournal(jPath)
		if err != nil {
			return fmt.Errorf("bo: resume: %w", err)
		}
		if torn != "" {
			r.logf("warning: %s", torn)
		}
		if err := writeConfig(dir, r.cfg); err != nil { // the budget may have changed
			return fmt.Errorf("bo: %w", err)
		}
	default:
		if r.opts.Resume {
			// checkResume let it through: the caller started the run
			// (its lock is there) and was stopped before it began.
			r.logf("note: %s holds no journal yet; starting the run's loop", dir)
		}
		if err := writeConfig(dir, r.cfg); err != nil {
			return fmt.Errorf("bo: %w", err)
		}
	}
	if err := writeFlags(dir, r.opts.Flags); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.start(data)
	if err := r.replay(recs); err != nil {
		return fmt.Errorf("bo: resume %s: %w", dir, err)
	}
	j, err := openJournal(jPath, size, cpu0)
	if err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.journal = j
	if err := r.attachJobs(); err != nil {
		j.close()
		return fmt.Errorf("bo: resume %s: %w", dir, err)
	}
	// results.npz may lag the journal by the query a kill interrupted.
	if err := r.writeResults(); err != nil {
		j.close()
		return err
	}
	return nil
}

// addJob records a journaled job: a submission completes the intent
// with its token.
func (r *runner[O]) addJob(j Job) {
	if j.Token != "" {
		for k := range r.jobs {
			if r.jobs[k].Token == j.Token {
				if j.ID != "" {
					r.jobs[k].ID = j.ID
				}
				return
			}
		}
	}
	r.jobs = append(r.jobs, j)
}

// attachJobs lets a Submitter task journal its jobs and re-attaches it to
// the jobs journaled before a resume, whose results it then reads back
// instead of submitting their objects again. A job journaled as an intent
// only is looked up by its token; one that provably never reached the
// scheduler (ErrNotSubmitted) is left, its evaluations submitted anew,
// and one the task cannot tell about stops the resume.
func (r *runner[O]) attachJobs() error {
	s, ok := any(r.task).(Submitter)
	if !ok {
		return nil
	}
	s.OnSubmit(func(j Job) error {
		if err := r.journal.append(record{Job: &j}); err != nil {
			r.logf("warning: job %s: %v", jobName(j), err)
			return err
		}
		return nil
	})
	for _, j := range r.jobs {
		err := s.Attach(j)
		switch {
		case err == nil:
		case errors.Is(err, ErrNotSubmitted):
			r.logf("note: job %s: %v; its evaluations are submitted now", jobName(j), err)
		case j.Token == "":
			// Journaled by its id, after its submission: no intent to
			// resolve (a job from before tokens).
			r.logf("note: job %s: %v; its unfinished evaluations are submitted again", jobName(j), err)
		default:
			return fmt.Errorf("job %s was submitted or about to be when the run stopped, and whether the scheduler "+
				"has it cannot be told (%w); its evaluations are not submitted again: resume once it can", jobName(j), err)
		}
	}
	return nil
}

// jobName names a journaled job in messages.
func jobName(j Job) string {
	switch {
	case j.ID == "":
		return "with token " + j.Token
	case j.Token == "":
		return j.ID
	}
	return j.ID + " (token " + j.Token + ")"
}

// start sets the retraining data to the labelled start.
func (r *runner[O]) start(data Data[O]) {
	idx := make([]int, len(data.Objects))
	for i := range idx {
		idx[i] = i
	}
	if f := r.cfg.LabelledFraction; f > 0 && f < 1 {
		idx = labelledSubset(len(idx), f, newRand(r.cfg.Seed, streamLabelled, 0))
	}
	r.known = make(map[string]float64, len(idx)+r.cfg.Budget)
	r.openRounds = map[int]*openRound{}
	r.tr = newTrustRegion(r.cfg.TR)
	for _, i := range idx {
		r.appendData(data.Objects[i], data.Scores[i], data.failed(i))
	}
	r.initBest = r.bestIndex()
}

// appendData adds a labelled object to the retraining data; failed says
// its evaluation failed.
func (r *runner[O]) appendData(obj O, score float64, failed bool) {
	r.data.Objects = append(r.data.Objects, obj)
	r.data.Scores = append(r.data.Scores, score)
	r.util = append(r.util, r.sign*score)
	r.failed = append(r.failed, failed)
	if key := r.task.Key(obj); !r.seenKey(key) {
		r.known[key] = score
	}
}

// seenKey reports whether the object of key is in the data.
func (r *runner[O]) seenKey(key string) bool {
	_, ok := r.known[key]
	return ok
}

// replay applies the journal's records to the runner's state.
func (r *runner[O]) replay(recs []record) error {
	for _, rec := range recs {
		switch {
		case rec.Version != nil:
			v := *rec.Version
			if v.Version != r.version+1 {
				return fmt.Errorf("journal has version %d after version %d", v.Version, r.version)
			}
			if len(r.openRounds) > 0 {
				return fmt.Errorf("journal has version %d before %d rounds are complete", v.Version, len(r.openRounds))
			}
			r.events = nil
			r.versions = append(r.versions, v)
			r.version, r.inVer, r.stopped, r.verStart = v.Version, 0, false, len(r.queries)
		case rec.Stop != nil:
			if rec.Stop.Version != r.version {
				return fmt.Errorf("journal stops version %d during version %d", rec.Stop.Version, r.version)
			}
			r.stopped = true
		case rec.Round != nil:
			if r.cfg.Repeats != RepeatsSkip {
				return fmt.Errorf("journal has round %d, a run with --repeats %s has none", rec.Round.Start, r.cfg.Repeats)
			}
			if err := r.applyRound(*rec.Round, map[int]any{}); err != nil {
				return err
			}
		case rec.Eval != nil:
			if err := r.applyEval(*rec.Eval); err != nil {
				return err
			}
		case rec.Job != nil:
			r.addJob(*rec.Job)
		case rec.Query != nil:
			q := *rec.Query
			if r.cfg.Repeats == RepeatsSkip {
				return fmt.Errorf("journal has query %d outside a round, a run with --repeats skip has rounds", q.Index)
			}
			if q.Index != len(r.queries) || q.Version != r.version || r.stopped {
				return fmt.Errorf("journal has query %d of version %d after %d queries in version %d",
					q.Index, q.Version, len(r.queries), r.version)
			}
			if len(q.Z) != r.model.LatentDim() {
				return fmt.Errorf("query %d has a %d-dimensional latent point, the model has %d", q.Index, len(q.Z), r.model.LatentDim())
			}
			if err := r.addQuery(q); err != nil {
				return err
			}
		}
	}
	r.resumed = len(r.complete())
	r.reported = r.resumed
	return nil
}

// addQuery appends an evaluated query to the state (not the journal).
func (r *runner[O]) addQuery(q Query) error {
	r.queries = append(r.queries, q)
	r.inVer++
	r.evaluated++
	if q.Valid {
		obj, err := r.task.Parse(q.Object)
		if err != nil {
			return fmt.Errorf("query %d: object %q: %w", q.Index, q.Object, err)
		}
		r.appendData(obj, q.Score, q.Failure != "")
	}
	return nil
}

// stopping returns why the run stops (r.halt, set by a Halt of the task
// or now by a done Options.Context), or nil while it goes on.
func (r *runner[O]) stopping() error {
	if ctx := r.opts.Context; r.halt == nil && ctx != nil && ctx.Err() != nil {
		r.halt = fmt.Errorf("bo: run stopped: %w", context.Cause(ctx))
	}
	return r.halt
}

// loop runs versions and queries until the budget is spent.
func (r *runner[O]) loop() error {
	if r.cfg.Repeats == RepeatsSkip {
		return r.loopRounds()
	}
	for r.evaluated < r.cfg.Budget {
		if err := r.stopping(); err != nil {
			return err
		}
		if r.version < 0 || r.inVer >= r.cfg.RetrainEvery || r.stopped {
			if err := r.newVersion(); err != nil {
				return err
			}
		}
		if !r.loaded {
			if err := r.loadVersion(r.version); err != nil {
				return err
			}
		}
		if r.cfg.Strategy != StrategyPrior && !r.surReady {
			if err := r.prepareSurrogate(); err != nil {
				return err
			}
		}
		q, stop, err := r.query()
		if err != nil {
			return fmt.Errorf("bo: query %d: %w", len(r.queries), err)
		}
		if stop != nil {
			if err := r.stopVersion(stop); err != nil {
				return err
			}
			continue
		}
		if err := r.commit(q); err != nil {
			return err
		}
	}
	return nil
}

// stopVersion journals the early end of the current version's inner loop.
func (r *runner[O]) stopVersion(stop *Stop) error {
	if err := r.journal.append(record{Stop: stop}); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.stopped = true
	r.logf("version %d: max EI %.3g < tau %g after %d queries; retraining early", r.version, stop.EI, r.cfg.Tau, r.inVer)
	return nil
}

// roundDone rewrites results.npz after a round and reports its queries.
func (r *runner[O]) roundDone() error {
	if err := r.writeResults(); err != nil {
		return err
	}
	done := len(r.complete())
	for i := r.reported; i < done; i++ {
		r.progress(StageQuery, &r.queries[i])
	}
	r.reported = done
	return nil
}

// loadVersion loads the weights of version v into the model, rebuilding
// them first when their file is gone.
func (r *runner[O]) loadVersion(v int) error {
	path := filepath.Join(r.opts.Dir, versionFile(v))
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return r.rebuildVersions(v)
	}
	if err := r.model.Load(path); err != nil {
		return fmt.Errorf("bo: load model version %d: %w", v, err)
	}
	r.loaded, r.moved = true, true
	return nil
}

// rebuildVersions remakes the weights of the journaled version v when its
// file is gone, as after a run directory was carried to another machine
// with its journal but without its model versions: from the newest earlier
// version still on disk, or from the starting weights, it replays the
// journaled retrainings in order, each on the data its version was made
// from, with the same seed and length, and saves each version again. With
// the same build and thread count the retraining is deterministic, so the
// weights are the ones the run used; when a retraining's losses differ
// from the journal's, the run goes on with the rebuilt weights, saying so.
func (r *runner[O]) rebuildVersions(v int) error {
	from := v - 1
	for ; from >= 0; from-- {
		if _, err := os.Stat(filepath.Join(r.opts.Dir, versionFile(from))); err == nil {
			break
		}
	}
	if from >= 0 {
		if err := r.loadVersion(from); err != nil {
			return err
		}
	} else if r.moved {
		return fmt.Errorf("bo: model version %d is gone and the model no longer holds its starting weights to rebuild it from", v)
	}
	for u := from + 1; u <= v; u++ {
		if err := r.rebuildVersion(r.versions[u]); err != nil {
			return fmt.Errorf("bo: rebuild model version %d (%s is gone): %w", u, versionFile(u), err)
		}
	}
	r.loaded, r.moved = true, true
	return nil
}

// rebuildVersion replays the retraining of one journaled version on the
// model, which holds the previous version's weights, and saves the result.
func (r *runner[O]) rebuildVersion(rec Version) error {
	r.logf("version %d: weights gone; retraining again on the %d points it was made from", rec.Version, rec.Points)
	if rec.Epochs > 0 {
		idx, err := r.acceptedData(rec.Points)
		if err != nil {
			return err
		}
		losses, err := r.retrain(idx, rec.Epochs, rec.Version)
		r.moved = true
		if err != nil {
			return err
		}
		if got := finiteMap(losses); !maps.Equal(got, rec.Losses) {
			r.logf("warning: version %d rebuilt with losses %v, the journal has %v: the run goes on with the rebuilt weights, "+
				"which differ from those its queries of this version used (another build or thread count?)", rec.Version, got, rec.Losses)
		}
	}
	return r.saveModel(rec.Version)
}

// newVersion retrains the model on the current data (from the current
// version's weights), saves and journals the next version.
func (r *runner[O]) newVersion() error {
	if r.version >= 0 && !r.loaded {
		if err := r.loadVersion(r.version); err != nil {
			return err
		}
	}
	v := r.version + 1
	r.version, r.inVer, r.stopped, r.surReady, r.verStart = v, 0, false, false, len(r.queries)
	r.events = nil
	r.progress(StageRetrain, nil)
	epochs := r.cfg.RetrainEpochs
	if v == 0 {
		epochs = r.cfg.InitialRetrainEpochs
	}
	rec := Version{Version: v, File: versionFile(v), Points: r.data.Len(), Epochs: epochs}
	start := time.Now()
	if epochs > 0 || r.cfg.Strategy != StrategyPrior {
		idx, err := r.acceptedData(r.data.Len())
		if err != nil {
			return fmt.Errorf("bo: retrain version %d: %w", v, err)
		}
		rec.Excluded = r.data.Len() - len(idx)
		if epochs > 0 {
			losses, err := r.retrain(idx, epochs, v)
			r.moved = true
			if err != nil {
				return fmt.Errorf("bo: retrain version %d: %w", v, err)
			}
			rec.Losses = finiteMap(losses)
		}
	}
	rec.RetrainSeconds = time.Since(start).Seconds()
	if err := r.saveModel(v); err != nil {
		return err
	}
	r.loaded = true
	if err := r.samplePrior(&rec); err != nil {
		return err
	}
	if err := r.journal.append(record{Version: &rec}); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.versions = append(r.versions, rec)
	return nil
}

// retrain retrains the model on the data points idx, weighted by rank
// among them, to make version v.
func (r *runner[O]) retrain(idx []int, epochs float64, v int) (map[string]float64, error) {
	req := RetrainRequest[O]{Epochs: epochs, Seed: deriveSeed(r.cfg.Seed, streamRetrain, uint64(v)), Version: v}
	for _, j := range idx {
		req.Objects = append(req.Objects, r.data.Objects[j])
		req.Scores = append(req.Scores, r.data.Scores[j])
	}
	weights, err := weighting.RankWeights(r.utilAt(idx), r.cfg.RankK, true)
	if err != nil {
		return nil, err
	}
	req.Weights = weights
	return r.model.Retrain(req)
}

// utilAt returns the utilities of the data points idx.
func (r *runner[O]) utilAt(idx []int) []float64 {
	u := make([]float64, len(idx))
	for i, j := range idx {
		u[i] = r.util[j]
	}
	return u
}

// acceptedData returns the indices of the first n data objects that the
// model accepts, asking it about those it has not been asked about; each
// newly refused object is logged. It fails when the model accepts none.
func (r *runner[O]) acceptedData(n int) ([]int, error) {
	for i := len(r.accepted); i < n; i++ {
		err := r.model.Accept(r.data.Objects[i])
		if err != nil {
			r.logf("note: %s is left out of retraining and the surrogate's data: %v", r.task.Key(r.data.Objects[i]), err)
		}
		r.accepted = append(r.accepted, err == nil)
	}
	var idx []int
	for i, ok := range r.accepted[:n] {
		if ok {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("the model accepts none of the %d data objects", n)
	}
	return idx, nil
}

// saveModel saves the model as version v: into a temporary directory that
// is then renamed to model-v<v>, so that a kill never leaves a partial
// checkpoint (which may be several files) under the final name.
func (r *runner[O]) saveModel(v int) error {
	final := filepath.Join(r.opts.Dir, versionDir(v))
	tmp := filepath.Join(r.opts.Dir, "."+versionDir(v)+".tmp")
	fail := func(err error) error {
		os.RemoveAll(tmp)
		return fmt.Errorf("bo: save model version %d: %w", v, err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fail(err)
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return fail(err)
	}
	if err := r.model.Save(filepath.Join(tmp, modelFileName)); err != nil {
		return fail(err)
	}
	// A directory left by a kill before the version was journaled is stale.
	if err := os.RemoveAll(final); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fail(err)
	}
	return nil
}

// samplePrior decodes and scores the version's prior samples.
func (r *runner[O]) samplePrior(rec *Version) error {
	n := r.cfg.SamplesPerModel
	if n == 0 {
		return nil
	}
	start := time.Now()
	d := r.model.LatentDim()
	rng := newRand(r.cfg.Seed, streamSamples, uint64(rec.Version))
	z := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < d; k++ {
			z.Set(i, k, rng.NormFloat64())
		}
	}
	objs, valid, err := r.model.Decode(z, deriveSeed(r.cfg.Seed, streamSamples, uint64(rec.Version)))
	if err != nil {
		return fmt.Errorf("bo: decode prior samples of version %d: %w", rec.Version, err)
	}
	if len(objs) != n || len(valid) != n {
		return fmt.Errorf("bo: model decoded %d rows into %d objects", n, len(objs))
	}
	for i := range objs {
		s := Sample{Valid: valid[i]}
		if valid[i] {
			s.Object = r.task.Key(objs[i])
		}
		var h *Halt
		if s.Score, _, h = r.evaluate(SampleTag(rec.Version, i), objs[i], valid[i]); h != nil {
			// The version is journaled with its samples: a resume makes
			// it again.
			r.halt = h.Err
			return h.Err
		}
		rec.Samples = append(rec.Samples, s)
	}
	rec.SampleSeconds = time.Since(start).Seconds()
	return nil
}

// prepareSurrogate encodes the latent points of the current version: the GP
// subset (BO) or all the training data (random search, whose box they
// span). For BO it replays the GP fits of the version's journaled queries,
// so that the warm-start chain is exactly as it was before a resume.
func (r *runner[O]) prepareSurrogate() error {
	r.progress(StageEncode, nil)
	start := time.Now()
	// The points are those of the data as they were when the version was
	// made, also when queries of the version were replayed from the journal.
	// Objects the model does not accept cannot be encoded and are left out.
	accepted, err := r.acceptedData(r.versions[len(r.versions)-1].Points)
	if err != nil {
		return fmt.Errorf("bo: encode the latent points of version %d: %w", r.version, err)
	}
	util := r.utilAt(accepted)
	idx := orderBest(util)
	if r.cfg.Strategy == StrategyBO {
		idx = gpSubset(util, r.cfg.NBest, r.cfg.NRand, newRand(r.cfg.Seed, streamSubset, uint64(r.version)))
	}
	objs := make([]O, len(idx))
	u := make([]float64, len(idx))
	for i, j := range idx {
		objs[i], u[i] = r.data.Objects[accepted[j]], util[j]
	}
	z, err := r.model.Encode(objs)
	if err != nil {
		return fmt.Errorf("bo: encode the latent points of version %d: %w", r.version, err)
	}
	x, err := rows(z, len(objs), r.model.LatentDim())
	if err != nil {
		return fmt.Errorf("bo: encode the latent points of version %d: %w", r.version, err)
	}
	r.sur.reset(x, u)
	r.encodeS = time.Since(start).Seconds()
	refit := r.cfg.Strategy == StrategyBO
	if last, ok := r.lastFit(); ok && refit && r.restoreWarm(last) {
		refit = false
		r.logf("restored the GP warm start of model v%d's fit at query %d from %s", r.version, last+1, GPWarmFile)
	}
	if refit && len(r.queries) > r.verStart {
		r.progress(StageReplay, nil)
	}
	if r.cfg.Repeats == RepeatsSkip {
		r.replayEvents(refit)
		r.surReady = true
		return nil
	}
	for _, q := range r.queries[r.verStart:] {
		switch {
		case q.GPKept: // its point joins the kept GP at the next step
		case refit:
			r.sur.refit(deriveSeed(r.cfg.Seed, streamGPFit, uint64(q.Index)))
			r.replayedFits++
		default:
			r.sur.markFit()
		}
		r.addPoint(q)
	}
	if !refit {
		r.sur.restoreKept()
	}
	r.surReady = true
	return nil
}

// lastFit returns the index that seeds the current version's last journaled
// GP fit (its query's, or under RepeatsSkip its round's first query's), and
// whether the version has one; queries and rounds that kept the GP of an
// earlier fit (GPKept) made none.
func (r *runner[O]) lastFit() (int, bool) {
	if r.cfg.Repeats == RepeatsSkip {
		for i := len(r.events) - 1; i >= 0; i-- {
			if r.events[i].fit && !r.events[i].kept {
				return r.events[i].start, true
			}
		}
		return 0, false
	}
	for i := len(r.queries) - 1; i >= r.verStart; i-- {
		if !r.queries[i].GPKept {
			return r.queries[i].Index, true
		}
	}
	return 0, false
}

// addPoint adds an evaluated query's latent point to the version's points:
// every query for BO (the GP learns from failures too), valid ones for
// random search (whose box, as the reference's, grows with the latents of
// the new objects), none for prior sampling.
func (r *runner[O]) addPoint(q Query) {
	switch {
	case r.cfg.Strategy == StrategyBO, r.cfg.Strategy == StrategyRandom && q.Valid:
		r.sur.add(q.Z, r.sign*q.Score)
		if r.counts(q) {
			r.sur.evaluated++ // for GPRefit's N
		}
	}
}

// rows copies the rows of an n x d matrix, checking its shape and values.
func rows(z *mat.Dense, n, d int) ([][]float64, error) {
	if z == nil {
		return nil, fmt.Errorf("model returned no latent points for %d objects", n)
	}
	if rz, cz := z.Dims(); rz != n || cz != d {
		return nil, fmt.Errorf("model returned %d x %d latent points for %d objects of dimension %d", rz, cz, n, d)
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = mat.Row(nil, i, z)
		for k, v := range out[i] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("latent point %d has %v in dimension %d", i, v, k)
			}
		}
	}
	return out, nil
}

// commit journals an evaluated query, then adds it to the state and
// rewrites results.npz.
func (r *runner[O]) commit(q Query) error {
	if err := r.journal.append(record{Query: &q}); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	if !q.GPKept {
		r.saveWarm(q.Index)
	}
	if err := r.addQuery(q); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	r.addPoint(q)
	if err := r.writeResults(); err != nil {
		return err
	}
	r.progress(StageQuery, &r.queries[len(r.queries)-1])
	return nil
}

func (r *runner[O]) writeResults() error {
	if err := writeResults(r.opts.Dir, r.cfg, r.model.LatentDim(), r.initialBest(), r.complete(), r.versions); err != nil {
		return fmt.Errorf("bo: %w", err)
	}
	return nil
}

// best is the best point so far.
type bestPoint struct {
	score  float64
	object string
}

// best is the best point of the data, failed evaluations included (the
// journal's incumbent: the surrogate's view).
func (r *runner[O]) best() bestPoint {
	i := argmax(r.util)
	return bestPoint{score: r.data.Scores[i], object: r.task.Key(r.data.Objects[i])}
}

// bestSucceeded is the best point whose evaluation did not fail, the one
// reported; NaN and "" when every one failed.
func (r *runner[O]) bestSucceeded() bestPoint {
	i := r.bestIndex()
	if i < 0 {
		return bestPoint{score: math.NaN()}
	}
	return bestPoint{score: r.data.Scores[i], object: r.task.Key(r.data.Objects[i])}
}

// bestIndex returns the index of the best data point whose evaluation did
// not fail, -1 when none.
func (r *runner[O]) bestIndex() int {
	best := -1
	for i, u := range r.util {
		if !r.failed[i] && (best < 0 || u > r.util[best]) {
			best = i
		}
	}
	return best
}

// initialBest is the best score of the labelled start that did not fail,
// NaN when none.
func (r *runner[O]) initialBest() float64 {
	if r.initBest < 0 {
		return math.NaN()
	}
	return r.data.Scores[r.initBest]
}

// complete returns the queries before the open round, if any: those with
// their scores.
func (r *runner[O]) complete() []Query {
	end := len(r.queries)
	for start := range r.openRounds {
		end = min(end, start)
	}
	return r.queries[:end]
}

func (r *runner[O]) result() *Result {
	res := &Result{Queries: r.complete(), Versions: r.versions, Resumed: r.resumed, ReplayedFits: r.replayedFits, Maximize: r.sign > 0,
		Evaluated: r.evaluated, Exhausted: r.exhausted}
	if len(r.util) > 0 {
		res.InitialBest = r.initialBest()
		b := r.bestSucceeded()
		res.Best, res.BestObject = b.score, b.object
	}
	return res
}
