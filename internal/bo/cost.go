package bo

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// The stages of LoopCost, in the order it lists them.
const (
	StageCostRetrain   = "retraining"    // a version's retraining (Version.RetrainSeconds)
	StageCostEncode    = "encoding"      // the GP subset's encoding (Timing.Encode)
	StageCostFeaturise = "featurisation" // on demand, on its own threads (Version.FeaturiseCPU, Timing.FeaturiseCPU; see LoopCost)
	StageCostGPFit     = "gp_fit"        // GP fits (Timing.GPFit)
	StageCostGPUpdate  = "gp_update"     // a round's conditioning of its GP between acquisition steps (Round.GPUpdate; see LoopCost)
	StageCostAcq       = "acquisition"   // acquisition maximisations (Timing.Acq)
	StageCostDecode    = "decoding"      // decodes, perturbations included (Timing.Decode)
	StageCostEval      = "evaluation"    // the objective (Timing.Eval, Eval.Seconds)
	StageCostSamples   = "prior_samples" // a version's prior samples (Version.SampleSeconds)
	StageCostOther     = "other"         // untimed work (see LoopCost)
)

// Indices of the stages in costStageNames.
const (
	costStageRetrain = iota
	costStageEncode
	costStageFeaturise
	costStageGPFit
	costStageGPUpdate
	costStageAcq
	costStageDecode
	costStageEval
	costStageSamples
	costStageOther
	numCostStages
)

var costStageNames = [numCostStages]string{StageCostRetrain, StageCostEncode, StageCostFeaturise, StageCostGPFit,
	StageCostGPUpdate, StageCostAcq, StageCostDecode, StageCostEval, StageCostSamples, StageCostOther}

// journalGzSuffix names a gzipped journal (a committed run's).
const journalGzSuffix = ".gz"

// StageCost is the time one stage of a run took.
type StageCost struct {
	// Stage is the stage's name (StageCostRetrain, ...; "total" for the
	// sum over the stages).
	Stage string `json:"stage"`
	// Seconds is the stage's wall time as the journal timed it.
	Seconds float64 `json:"wall_s"`
	// CPU is the CPU time attributed to the stage (see LoopCost), Share its
	// fraction of the run's CPU time and PerEvaluation its CPU seconds per
	// distinct evaluation (absent without one).
	CPU           float64  `json:"cpu_s"`
	Share         float64  `json:"cpu_share"`
	PerEvaluation *float64 `json:"cpu_s_per_evaluation,omitempty"`
}

// LoopCost is where the time of a run, finished or running, went, from its
// journal. The journal times each stage's wall seconds, and each of its
// lines holds the process's CPU seconds since the previous line (cpu_s):
// a line's CPU time is shared among the stages it timed in proportion to
// their wall time. A version's line holds its retraining and prior
// samples, a round's line the encoding, GP fit, acquisition and decoding
// of its queries and the conditioning of its GP between them (listed only
// for runs that time it), an evaluation's line the evaluation, a query's
// line all of these; the part of a query's timed total outside its stages
// (its bookkeeping) and lines that time nothing (stops, jobs) count as
// other.
// Featurisation on demand is measured apart, on its own threads
// (FeaturiseCPU), and taken off its line before the rest is shared; its
// wall time is part of the retraining's or the encoding's, so it has none
// of its own, and it is listed only for a run that featurised something.
// The CPU time of a line is exact per stage when the line times one stage
// (retraining, an evaluation), and otherwise assumes that its stages ran at
// the same CPU rate; CPUBeyondWall says how much of it the rule may have
// misplaced.
type LoopCost struct {
	// Dir is the run directory and Journal the file read (journal.jsonl,
	// or its gzipped copy journal.jsonl.gz when the run directory has no
	// journal.jsonl); Torn, when set, says that a torn last line was left
	// out (a running run's line being written, or a killed run's).
	Dir     string `json:"run_dir"`
	Journal string `json:"journal"`
	Torn    string `json:"torn,omitempty"`
	// Versions counts the model versions, Queries the evaluated queries
	// (known objects, repeats and invalid decodes included; a running
	// round's queries awaiting their evaluation left out), Evaluations the
	// distinct evaluations among them (Queries.Distinct).
	Versions    int `json:"versions"`
	Queries     int `json:"queries"`
	Evaluations int `json:"distinct_evaluations"`
	// Lines counts the journal's lines, CPULines those with CPU time
	// (none in a journal written before cpu_s was kept: then every CPU
	// field is 0).
	Lines    int `json:"lines"`
	CPULines int `json:"cpu_lines"`
	// Stages are the stages in a fixed order, Total their sum (its CPU is
	// the sum of the journal's cpu_s).
	Stages []StageCost `json:"stages"`
	Total  StageCost   `json:"total"`
	// CPUBeyondWall sums, over the lines that timed a stage, the CPU time
	// beyond their timed wall time: work the journal did not time (the
	// process's start-up and a resume's replayed GP fits, which join the
	// next line, bookkeeping), or, with several threads, stages that ran
	// in parallel. On one thread it bounds the CPU time shared among the
	// stages that belongs to none.
	CPUBeyondWall float64 `json:"cpu_beyond_wall_s"`
}

// VersionLine is a model version's journal record with the CPU seconds of
// its line (the process's work since its previous line: the retraining and
// prior samples, and a process's start-up on its first line).
type VersionLine struct {
	Version
	CPU float64
}

// ReadVersionLines reads the model versions' lines of the run's journal in
// order, as ReadLoopCost reads the journal (gzipped or not, a torn last line
// left out).
func ReadVersionLines(dir string) ([]VersionLine, error) {
	path, b, err := ReadJournalFile(dir)
	if err != nil {
		return nil, fmt.Errorf("bo: read journal %s: %w", path, err)
	}
	recs, _, _, err := parseJournal(path, b)
	if err != nil {
		return nil, fmt.Errorf("bo: %w", err)
	}
	var lines []VersionLine
	for _, rec := range recs {
		if rec.Version != nil {
			lines = append(lines, VersionLine{Version: *rec.Version, CPU: rec.CPU})
		}
	}
	return lines, nil
}

// ReadLoopCost reads where the time of the run in dir went from its
// journal, which may be gzipped (journal.jsonl.gz) and may end in a torn
// line.
func ReadLoopCost(dir string) (LoopCost, error) {
	path, b, err := ReadJournalFile(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return LoopCost{}, fmt.Errorf("bo: %s has no %s nor %s", dir, JournalFile, JournalFile+journalGzSuffix)
	}
	if err != nil {
		return LoopCost{}, fmt.Errorf("bo: read journal %s: %w", path, err)
	}
	recs, _, torn, err := parseJournal(path, b)
	if err != nil {
		return LoopCost{}, fmt.Errorf("bo: %w", err)
	}
	c := LoopCost{Dir: dir, Journal: path, Torn: torn, Lines: len(recs)}
	if err := c.add(recs); err != nil {
		return LoopCost{}, fmt.Errorf("bo: journal %s: %w", path, err)
	}
	return c, nil
}

// ReadJournalFile returns the journal text of the run in dir and its path:
// journal.jsonl, else a committed run's gzipped journal.jsonl.gz (an error
// matching fs.ErrNotExist when there is neither).
func ReadJournalFile(dir string) (path string, b []byte, err error) {
	path = filepath.Join(dir, JournalFile)
	b, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		path += journalGzSuffix
		b, err = readGzip(path)
	}
	return path, b, err
}

// readGzip returns the decompressed content of the gzip file path.
func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, zr); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return buf.Bytes(), nil
}

// add accumulates the journal's records: the stages' seconds and CPU time
// and the evaluated queries.
func (c *LoopCost) add(recs []record) error {
	var wall, cpu [numCostStages]float64
	queries := map[int]Query{}
	pending := map[int]bool{}
	for _, rec := range recs {
		var line [numCostStages]float64
		var featurise float64 // CPU seconds measured apart
		switch {
		case rec.Version != nil:
			c.Versions++
			line[costStageRetrain], line[costStageSamples] = rec.Version.RetrainSeconds, rec.Version.SampleSeconds
			featurise = rec.Version.FeaturiseCPU
		case rec.Query != nil:
			if _, dup := queries[rec.Query.Index]; dup {
				return fmt.Errorf("query %d recorded twice", rec.Query.Index)
			}
			queries[rec.Query.Index] = *rec.Query
			addTiming(&line, rec.Query.Timing, true)
			featurise = rec.Query.Timing.FeaturiseCPU
		case rec.Round != nil:
			for _, q := range rec.Round.Queries {
				if _, dup := queries[q.Index]; dup {
					return fmt.Errorf("query %d recorded twice", q.Index)
				}
				queries[q.Index] = q
				addTiming(&line, q.Timing, false)
				featurise += q.Timing.FeaturiseCPU
			}
			line[costStageGPUpdate] += rec.Round.GPUpdate
			for _, i := range rec.Round.Pending {
				pending[i] = true
			}
		case rec.Eval != nil:
			if !pending[rec.Eval.Index] {
				return fmt.Errorf("evaluation of query %d, which is not pending", rec.Eval.Index)
			}
			delete(pending, rec.Eval.Index)
			line[costStageEval] = rec.Eval.Seconds
		}
		if rec.CPU > 0 {
			c.CPULines++
		}
		// The featurisation's CPU is its own threads' (at most the line's,
		// which it is part of); the rest is shared by wall time.
		featurise = min(max(featurise, 0), rec.CPU)
		cpu[costStageFeaturise] += featurise
		c.CPUBeyondWall += shareCPU(&wall, &cpu, line, rec.CPU-featurise)
	}
	c.countQueries(queries, pending)
	c.Total = StageCost{Stage: "total"}
	for k, name := range costStageNames {
		if (k == costStageFeaturise || k == costStageGPUpdate) && cpu[k] == 0 && wall[k] == 0 {
			continue // a run that featurised nothing on demand or conditioned no round's GP, or from before it was timed
		}
		s := StageCost{Stage: name, Seconds: wall[k], CPU: cpu[k]}
		c.Total.Seconds += s.Seconds
		c.Total.CPU += s.CPU
		c.Stages = append(c.Stages, s)
	}
	for k := range c.Stages {
		c.finish(&c.Stages[k])
	}
	c.finish(&c.Total)
	return nil
}

// addTiming adds a query's stage times to line; withTotal counts the part
// of its total outside the stages as other (a query record's total holds
// its bookkeeping; a round's queries have no total yet).
func addTiming(line *[numCostStages]float64, t Timing, withTotal bool) {
	line[costStageEncode] += t.Encode
	line[costStageGPFit] += t.GPFit
	line[costStageAcq] += t.Acq
	line[costStageDecode] += t.Decode
	line[costStageEval] += t.Eval
	if rest := t.Total - (t.Encode + t.GPFit + t.Acq + t.Decode + t.Eval); withTotal && rest > 0 {
		line[costStageOther] += rest
	}
}

// shareCPU adds a line's stage times to wall and shares its CPU time among
// them in proportion (all of it to other when the line timed nothing); it
// returns the line's CPU time beyond its timed wall time, if it timed any.
func shareCPU(wall, cpu *[numCostStages]float64, line [numCostStages]float64, lineCPU float64) float64 {
	var sum float64
	for k, s := range line {
		wall[k] += s
		sum += s
	}
	if sum <= 0 {
		cpu[costStageOther] += lineCPU
		return 0
	}
	for k, s := range line {
		cpu[k] += lineCPU * s / sum
	}
	return max(lineCPU-sum, 0)
}

// countQueries counts the evaluated queries (those of a round awaiting
// their evaluation left out) and the distinct evaluations among them.
func (c *LoopCost) countQueries(queries map[int]Query, pending map[int]bool) {
	n := 0
	for i := range queries {
		n = max(n, i+1)
	}
	var qs Queries
	for i := 0; i < n; i++ {
		q, ok := queries[i]
		if !ok || pending[i] {
			continue
		}
		qs.Points = append(qs.Points, q.Object)
		qs.Known = append(qs.Known, q.Known)
	}
	c.Queries = len(qs.Points)
	for _, d := range qs.Distinct() {
		if d {
			c.Evaluations++
		}
	}
}

// finish sets a stage's share of the run's CPU time and its CPU time per
// distinct evaluation.
func (c *LoopCost) finish(s *StageCost) {
	if c.Total.CPU > 0 {
		s.Share = s.CPU / c.Total.CPU
	}
	if c.Evaluations > 0 {
		v := s.CPU / float64(c.Evaluations)
		s.PerEvaluation = &v
	}
}
