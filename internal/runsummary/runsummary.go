// Package runsummary writes the small summary of a finished run that a
// committed results directory keeps once the run's large files go: its
// counts, its best scores, the CPU and wall time of each stage from its
// journal (bo.ReadLoopCost) and of each model version's retraining, and
// where its latent points lay (their mean norm by block of distinct
// evaluations). Compact then drops the latent
// points from results.npz: every curve and table (plot, analyze pmo, the
// experiment scripts) reads the points' keys and scores, none the points.
package runsummary

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// File is the summary's name in a run directory.
const File = "summary.json"

// Format names the summary's layout; Version changes when a field does.
const (
	Format  = "tlbo-native run summary"
	Version = 1
)

// latentsArray is results.npz's array of the queries' latent points.
const latentsArray = "opt_latents"

// NormBlock is the number of distinct evaluations each mean latent norm
// averages over.
const NormBlock = 100

// Checkpoints are the numbers of distinct evaluations after which the
// summary gives the best score (those the run reached).
var Checkpoints = []int{100, 250, 500, 1000, 10000}

// Summary is what summary.json holds. Scores are in the task's direction;
// a best is null while no evaluation succeeded.
type Summary struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Run is the run directory's name; Config the configuration fields
	// that tell runs apart (task, strategy, elbo, objective, seed, budget:
	// those config.json has).
	Run    string            `json:"run"`
	Config map[string]string `json:"config"`
	// Maximize is the task's direction.
	Maximize bool `json:"maximize"`
	// Queries counts the run's queries (results.npz), Known those whose
	// score was known and not evaluated again, Evaluations the distinct
	// evaluations, InitialCalls the labelled start's oracle calls
	// (optimize --initial; 0 without).
	Queries      int `json:"queries"`
	Known        int `json:"known"`
	Evaluations  int `json:"distinct_evaluations"`
	InitialCalls int `json:"initial_calls"`
	// StartBest is the labelled start's best, Best the best after the last
	// distinct evaluation and BestAfter the best after each of Checkpoints
	// the run reached, the start included (bo.Curve.Best, what plot draws).
	StartBest *float64     `json:"start_best"`
	Best      *float64     `json:"best"`
	BestAfter []Checkpoint `json:"best_after"`
	// Versions counts the model versions, JournalLines the journal's lines.
	Versions     int `json:"versions"`
	JournalLines int `json:"journal_lines"`
	// CPU is the run's CPU seconds (the journal's cpu_s summed over
	// resumes; null for a journal written before cpu_s was kept), Wall the
	// wall seconds the journal timed (start-up and data loading left out),
	// CPUBeyondWall as bo.LoopCost's.
	CPU           *float64 `json:"cpu_s"`
	Wall          float64  `json:"wall_s"`
	CPUBeyondWall float64  `json:"cpu_beyond_wall_s"`
	// Stages are bo.LoopCost's stages: wall and CPU seconds, share of the
	// CPU time, CPU seconds per distinct evaluation.
	Stages []bo.StageCost `json:"stages"`
	// VersionCosts are the model versions' retraining costs, in journal
	// order; absent in summaries written before they were kept, and for
	// runs whose results.npz has no opt_model_version.
	VersionCosts []VersionCost `json:"version_costs,omitempty"`
	// LatentNorms are the mean Euclidean norms of the distinct evaluations'
	// latent points, a value per NormBlock of them in order (the last block
	// may be shorter); absent when results.npz held no latent points when
	// the summary was first written.
	LatentNorms []float64 `json:"latent_norms,omitempty"`
}

// Checkpoint is the best score after a number of distinct evaluations.
type Checkpoint struct {
	Evaluations int      `json:"evaluations"`
	Best        *float64 `json:"best"`
}

// VersionCost is what making one model version cost, from its journal line.
type VersionCost struct {
	// Version is the version's number; Evaluations the run's distinct
	// evaluations before it (those of queries of earlier versions), Points
	// the size of its data.
	Version     int `json:"version"`
	Evaluations int `json:"evaluations"`
	Points      int `json:"points"`
	// Retrain and Samples are the wall seconds of its retraining and of
	// its prior samples (bo.Version's retrain_s and sample_s).
	Retrain float64 `json:"retrain_s"`
	Samples float64 `json:"sample_s,omitempty"`
	// CPU is its journal line's cpu_s, all of which bo.ReadLoopCost gives
	// to the retraining and prior-sample stages: with them, the work the
	// process did untimed before the line (its start-up, for a process's
	// first line). Null for a journal written before cpu_s was kept.
	CPU *float64 `json:"cpu_s"`
}

// identity are the configuration fields a summary repeats.
var identity = []string{"task", "strategy", "elbo", "objective", "seed", "budget"}

// Make summarises the run in dir from its config.json, results.npz (and
// initial.npz) and journal. The latent norms come from results.npz, or, once
// its latent points are dropped, from the summary.json already in dir.
func Make(dir string) (Summary, error) {
	curve, err := bo.ReadCurve(dir)
	if err != nil {
		return Summary{}, err
	}
	cost, err := bo.ReadLoopCost(dir)
	if err != nil {
		return Summary{}, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Format: Format, Version: Version, Run: filepath.Base(abs), Config: map[string]string{},
		Maximize: curve.Maximize, Queries: curve.Queries, Known: curve.Known, Evaluations: curve.Distinct(),
		InitialCalls: len(curve.Initial), StartBest: finite(curve.Best[0]), Best: finite(curve.Best[len(curve.Best)-1]),
		Versions: cost.Versions, JournalLines: cost.Lines, Wall: cost.Total.Seconds, CPUBeyondWall: cost.CPUBeyondWall,
		Stages: cost.Stages}
	for _, name := range identity {
		if v, ok := curve.Field(name); ok {
			s.Config[name] = v
		}
	}
	for _, n := range Checkpoints {
		if n < len(curve.Best) {
			s.BestAfter = append(s.BestAfter, Checkpoint{Evaluations: n, Best: finite(curve.Best[n])})
		}
	}
	if cost.CPULines > 0 {
		s.CPU = &cost.Total.CPU
	}
	if cost.Evaluations != s.Evaluations {
		return Summary{}, fmt.Errorf("runsummary: %s: the journal has %d distinct evaluations, %s %d: is the run still going?",
			dir, cost.Evaluations, bo.ResultsFile, s.Evaluations)
	}
	arrays, err := readArrays(dir)
	if err != nil {
		return Summary{}, err
	}
	if s.LatentNorms, err = latentNorms(dir, arrays); err != nil {
		return Summary{}, err
	}
	if s.VersionCosts, err = versionCosts(dir, arrays, cost.CPULines > 0); err != nil {
		return Summary{}, err
	}
	return s, nil
}

// finite returns a pointer to v, nil for NaN (no best yet).
func finite(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// runArrays are the arrays of results.npz that the summary reads beyond
// the curve.
type runArrays struct {
	path string
	// queries holds the queries' keys and known flags, versions each
	// query's model version (nil without opt_model_version) and latents
	// their latent points (nil once dropped).
	queries  bo.Queries
	versions []float64
	latents  *numpy.Array
}

// readArrays reads results.npz of the run in dir.
func readArrays(dir string) (runArrays, error) {
	r := runArrays{path: filepath.Join(dir, bo.ResultsFile)}
	arrays, err := numpy.ReadNPZ(r.path)
	if err != nil {
		return runArrays{}, err
	}
	for i, a := range arrays {
		switch a.Name {
		case "opt_points":
			r.queries.Points, _ = a.Data.([]string) // bo.ReadCurve checked it
		case "opt_known":
			v, err := a.Float64s()
			if err != nil {
				return runArrays{}, fmt.Errorf("%s: %s: %w", r.path, a.Name, err)
			}
			for _, k := range v {
				r.queries.Known = append(r.queries.Known, k != 0)
			}
		case "opt_model_version":
			if r.versions, err = a.Float64s(); err != nil {
				return runArrays{}, fmt.Errorf("%s: %s: %w", r.path, a.Name, err)
			}
		case latentsArray:
			r.latents = &arrays[i]
		}
	}
	if r.versions != nil && len(r.versions) != len(r.queries.Points) {
		return runArrays{}, fmt.Errorf("%s: opt_model_version has %d values for %d queries", r.path, len(r.versions),
			len(r.queries.Points))
	}
	return r, nil
}

// latentNorms returns the mean latent norms of the run's distinct
// evaluations by block, from results.npz, or from the summary already
// written when results.npz holds no latent points (nil when neither has
// them).
func latentNorms(dir string, r runArrays) ([]float64, error) {
	if r.latents == nil {
		old, err := Read(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return old.LatentNorms, err
	}
	z, err := r.latents.Float64s()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", r.path, latentsArray, err)
	}
	if len(r.latents.Shape) != 2 || r.latents.Shape[0] != len(r.queries.Points) {
		return nil, fmt.Errorf("%s: %s has shape %v, want (%d, d)", r.path, latentsArray, r.latents.Shape,
			len(r.queries.Points))
	}
	d := r.latents.Shape[1]
	var norms, sums []float64
	n := 0
	for i, distinct := range r.queries.Distinct() {
		if !distinct {
			continue
		}
		if n%NormBlock == 0 {
			sums = append(sums, 0)
		}
		var ss float64
		for _, x := range z[i*d : (i+1)*d] {
			ss += x * x
		}
		sums[len(sums)-1] += math.Sqrt(ss)
		n++
	}
	for b, sum := range sums {
		norms = append(norms, sum/float64(min(NormBlock, n-b*NormBlock)))
	}
	return norms, nil
}

// versionCosts returns the cost of each model version from its journal
// line (bo.ReadVersionLines), and the distinct evaluations before it from
// results.npz (nil when results.npz has no opt_model_version); withCPU says
// whether the journal kept cpu_s (bo.LoopCost.CPULines).
func versionCosts(dir string, r runArrays, withCPU bool) ([]VersionCost, error) {
	if r.versions == nil {
		return nil, nil
	}
	lines, err := bo.ReadVersionLines(dir)
	if err != nil {
		return nil, fmt.Errorf("runsummary: %w", err)
	}
	// evals[v]: the distinct evaluations by queries of version v.
	evals := map[int]int{}
	for i, distinct := range r.queries.Distinct() {
		if distinct {
			evals[int(r.versions[i])]++
		}
	}
	var out []VersionCost
	for _, line := range lines {
		v := VersionCost{Version: line.Version.Version, Points: line.Points, Retrain: line.RetrainSeconds,
			Samples: line.SampleSeconds}
		for u, e := range evals {
			if u < v.Version {
				v.Evaluations += e
			}
		}
		if withCPU {
			cpu := line.CPU
			v.CPU = &cpu
		}
		out = append(out, v)
	}
	return out, nil
}

// Read reads the summary.json of the run in dir.
func Read(dir string) (Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		return Summary{}, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return Summary{}, fmt.Errorf("runsummary: %s: %w", filepath.Join(dir, File), err)
	}
	if s.Format != Format || s.Version != Version {
		return Summary{}, fmt.Errorf("runsummary: %s: format %q version %d, want %q version %d",
			filepath.Join(dir, File), s.Format, s.Version, Format, Version)
	}
	return s, nil
}

// Write writes s to dir's summary.json, atomically.
func Write(dir string, s Summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return numpy.AtomicWriteFile(filepath.Join(dir, File), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// DropLatents rewrites dir's results.npz without its latent points,
// keeping the other arrays and their order; it reports whether there were
// any.
func DropLatents(dir string) (bool, error) {
	path := filepath.Join(dir, bo.ResultsFile)
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return false, err
	}
	i := slices.IndexFunc(arrays, func(a numpy.Array) bool { return a.Name == latentsArray })
	if i < 0 {
		return false, nil
	}
	return true, numpy.WriteNPZ(path, slices.Delete(arrays, i, i+1))
}

// String returns the summary's one-line description: the run, its
// distinct evaluations, best and CPU time.
func (s Summary) String() string {
	best, cpu := "none", "not kept"
	if s.Best != nil {
		best = strconv.FormatFloat(*s.Best, 'g', 6, 64)
	}
	if s.CPU != nil {
		cpu = fmt.Sprintf("%.0f s", *s.CPU)
	}
	return fmt.Sprintf("%s: %d distinct evaluations (%d queries), best %s, CPU %s", s.Run, s.Evaluations, s.Queries, best, cpu)
}
