package runsummary

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// toyRun runs BO on the toy problem for 110 distinct evaluations in a new
// directory, so that the summary has a checkpoint and two latent blocks.
func toyRun(t *testing.T) string {
	t.Helper()
	p, err := botest.New(3, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := bo.DefaultConfig()
	cfg.Budget, cfg.RetrainEvery = 110, 55
	cfg.RankK, cfg.InitialRetrainEpochs, cfg.RetrainEpochs = 1e-3, 1, 1
	cfg.NBest, cfg.NRand, cfg.Inducing = 20, 20, 10
	cfg.RawSamples, cfg.Restarts = 64, 2
	cfg.Seed = 3
	dir := filepath.Join(t.TempDir(), "bo-seed3")
	if _, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), p.Data(100, 2), bo.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantNorms computes the mean latent norm of each block of 100 distinct
// evaluations from results.npz directly: a query counts the first time its
// valid, not known object appears.
func wantNorms(t *testing.T, dir string) []float64 {
	t.Helper()
	arrays, err := numpy.ReadNPZ(filepath.Join(dir, bo.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) numpy.Array {
		i := slices.IndexFunc(arrays, func(a numpy.Array) bool { return a.Name == name })
		if i < 0 {
			t.Fatalf("results.npz has no %s", name)
		}
		return arrays[i]
	}
	points := get("opt_points").Data.([]string)
	known, _ := get("opt_known").Float64s()
	lat := get("opt_latents")
	z, _ := lat.Float64s()
	d := lat.Shape[1]
	seen := map[string]bool{}
	var norms []float64
	var sum float64
	n := 0
	for i, p := range points {
		if p == "" || known[i] != 0 || seen[p] {
			continue
		}
		seen[p] = true
		sum += math.Hypot(math.Hypot(z[i*d], z[i*d+1]), z[i*d+2]) // d is 3
		n++
		if n%NormBlock == 0 {
			norms, sum = append(norms, sum/NormBlock), 0
		}
	}
	if n%NormBlock != 0 {
		norms = append(norms, sum/float64(n%NormBlock))
	}
	return norms
}

// TestMakeDropLatents: a finished run's summary repeats its curve (counts,
// bests) and its journal's cost (bo.ReadLoopCost), its latent norms are
// those of results.npz; summary.json reads back the same; dropping the
// latent points leaves every other array and the curve unchanged, a second
// drop finds none, and summarising again keeps the latent norms. Without a
// journal the summary is refused.
func TestMakeDropLatents(t *testing.T) {
	dir := toyRun(t)
	curve, err := bo.ReadCurve(dir)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := bo.ReadLoopCost(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Make(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Run != "bo-seed3" || s.Evaluations != 110 || s.Queries != curve.Queries || s.Known != curve.Known ||
		s.Evaluations != cost.Evaluations || s.Versions != cost.Versions || s.JournalLines != cost.Lines {
		t.Errorf("counts: %+v\nwant the curve's %d queries, %d known, 110 distinct and the journal's %d versions, %d lines",
			s, curve.Queries, curve.Known, cost.Versions, cost.Lines)
	}
	if s.Config["seed"] != "3" || s.Config["strategy"] != "bo" || s.Config["budget"] != "110" {
		t.Errorf("config %v, want seed 3, strategy bo, budget 110", s.Config)
	}
	if s.Best == nil || *s.Best != curve.Best[110] || s.StartBest == nil || *s.StartBest != curve.Best[0] {
		t.Errorf("best %v, start %v; want %v and %v", s.Best, s.StartBest, curve.Best[110], curve.Best[0])
	}
	if len(s.BestAfter) != 1 || s.BestAfter[0].Evaluations != 100 || *s.BestAfter[0].Best != curve.Best[100] {
		t.Errorf("best after %+v, want only 100: %v", s.BestAfter, curve.Best[100])
	}
	if s.CPU == nil || *s.CPU != cost.Total.CPU || *s.CPU <= 0 || s.Wall != cost.Total.Seconds ||
		!reflect.DeepEqual(s.Stages, cost.Stages) {
		t.Errorf("cost: cpu %v wall %v stages %+v\nwant %+v", s.CPU, s.Wall, s.Stages, cost)
	}
	checkVersionCosts(t, dir, s.VersionCosts, cost)
	want := wantNorms(t, dir)
	if len(want) != 2 || len(s.LatentNorms) != 2 {
		t.Fatalf("latent norms %v, want two blocks: %v", s.LatentNorms, want)
	}
	for i := range want {
		if math.Abs(s.LatentNorms[i]-want[i]) > 1e-12*want[i] { // summed in another order
			t.Errorf("latent norms %v, want %v", s.LatentNorms, want)
		}
	}

	if err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	back, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("read back %+v\nwant %+v", back, s)
	}

	before, err := numpy.ReadNPZ(filepath.Join(dir, bo.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if dropped, err := DropLatents(dir); err != nil || !dropped {
		t.Fatalf("DropLatents: %v, %v; want the latents dropped", dropped, err)
	}
	after, err := numpy.ReadNPZ(filepath.Join(dir, bo.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	kept := slices.DeleteFunc(slices.Clone(before), func(a numpy.Array) bool { return a.Name == "opt_latents" })
	if len(kept) != len(before)-1 || !reflect.DeepEqual(after, kept) {
		t.Errorf("after the drop %d arrays, want the %d others unchanged", len(after), len(kept))
	}
	curveAfter, err := bo.ReadCurve(dir)
	if err != nil {
		t.Fatal(err)
	}
	byName := func(a, b bo.Field) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(curve.Fields, byName) // ReadConfigFields keeps no order
	slices.SortFunc(curveAfter.Fields, byName)
	if !reflect.DeepEqual(curveAfter, curve) {
		t.Errorf("the curve changed with the drop")
	}
	if dropped, err := DropLatents(dir); err != nil || dropped {
		t.Errorf("second DropLatents: %v, %v; want nothing to drop", dropped, err)
	}
	again, err := Make(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, s) {
		t.Errorf("summarised again after the drop: %+v\nwant %+v", again, s)
	}

	if err := os.Remove(filepath.Join(dir, bo.JournalFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Make(dir); err == nil || !strings.Contains(err.Error(), bo.JournalFile) {
		t.Errorf("without a journal: %v, want an error naming %s", err, bo.JournalFile)
	}
}

// checkVersionCosts checks a toy run's version costs against its journal
// read directly: one per version line, with its retrain_s, points and
// cpu_s; versions made every 55 distinct evaluations; together they hold
// bo.ReadLoopCost's retraining and prior-sample time.
func checkVersionCosts(t *testing.T, dir string, got []VersionCost, cost bo.LoopCost) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, bo.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	var want []VersionCost
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Version *struct {
				Version int     `json:"version"`
				Points  int     `json:"points"`
				Retrain float64 `json:"retrain_s"`
			} `json:"version"`
			CPU float64 `json:"cpu_s"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if v := rec.Version; v != nil {
			cpu := rec.CPU
			want = append(want, VersionCost{Version: v.Version, Evaluations: 55 * v.Version, Points: v.Points,
				Retrain: v.Retrain, CPU: &cpu})
		}
	}
	if len(want) != cost.Versions || len(want) < 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("version costs %s\nwant %s", costsString(got), costsString(want))
	}
	var wall, cpu float64
	for _, v := range got {
		wall += v.Retrain + v.Samples
		cpu += *v.CPU
	}
	stage := func(name string) bo.StageCost {
		return cost.Stages[slices.IndexFunc(cost.Stages, func(s bo.StageCost) bool { return s.Stage == name })]
	}
	r, p := stage(bo.StageCostRetrain), stage(bo.StageCostSamples)
	if math.Abs(wall-(r.Seconds+p.Seconds)) > 1e-9*wall || math.Abs(cpu-(r.CPU+p.CPU)) > 1e-9*cpu {
		t.Errorf("versions' wall %v CPU %v s, want the retraining and prior-sample stages' %v and %v",
			wall, cpu, r.Seconds+p.Seconds, r.CPU+p.CPU)
	}
}

// costsString formats version costs for a failure message.
func costsString(vs []VersionCost) string {
	var b strings.Builder
	for _, v := range vs {
		cpu := "null"
		if v.CPU != nil {
			cpu = strconv.FormatFloat(*v.CPU, 'g', -1, 64)
		}
		fmt.Fprintf(&b, "{v%d at %d, %d points, %gs, CPU %s} ", v.Version, v.Evaluations, v.Points, v.Retrain, cpu)
	}
	return b.String()
}

// TestReadRefuses: a missing summary.json is fs.ErrNotExist, a malformed
// one or one of another format is an error naming the file.
func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no summary: %v, want fs.ErrNotExist", err)
	}
	for _, text := range []string{"{", `{"format": "something else", "version": 1}`, `{"format": "` + Format + `", "version": 2}`} {
		if err := os.WriteFile(filepath.Join(dir, File), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), File) {
			t.Errorf("summary %q: %v, want an error naming %s", text, err, File)
		}
	}
}

// TestCommittedSummaries: every committed run (a directory under
// docs/experiment/results with results.npz) has a summary.json that agrees
// with its results.npz (counts, best, best after each checkpoint), so that
// the tables set from summaries and from curves tell the same story; a run
// that kept its journal agrees with it too.
func TestCommittedSummaries(t *testing.T) {
	root := filepath.Join("..", "..", "docs", "experiment", "results")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != bo.ResultsFile {
			return err
		}
		dir := filepath.Dir(path)
		n++
		s, err := Read(dir)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			return nil
		}
		curve, err := bo.ReadCurve(dir)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			return nil
		}
		if s.Run != filepath.Base(dir) || s.Queries != curve.Queries || s.Known != curve.Known ||
			s.Evaluations != curve.Distinct() || s.InitialCalls != len(curve.Initial) ||
			!sameBest(s.Best, curve.Best[len(curve.Best)-1]) || !sameBest(s.StartBest, curve.Best[0]) {
			t.Errorf("%s: summary %s (start %v) disagrees with results.npz: %d queries, %d known, %d distinct, best %v (start %v)",
				dir, s, s.StartBest, curve.Queries, curve.Known, curve.Distinct(), curve.Best[len(curve.Best)-1], curve.Best[0])
		}
		for _, c := range s.BestAfter {
			if c.Evaluations >= len(curve.Best) || !sameBest(c.Best, curve.Best[c.Evaluations]) {
				t.Errorf("%s: best after %d: %v, the curve disagrees", dir, c.Evaluations, c.Best)
			}
		}
		if cost, err := bo.ReadLoopCost(dir); err == nil {
			if s.CPU != nil && *s.CPU != cost.Total.CPU || !reflect.DeepEqual(s.Stages, cost.Stages) {
				t.Errorf("%s: summary's cost disagrees with the journal's", dir)
			}
			m, err := Make(dir)
			if err != nil {
				t.Errorf("%s: %v", dir, err)
			} else if !reflect.DeepEqual(s.VersionCosts, m.VersionCosts) {
				t.Errorf("%s: summary's version costs %s disagree with the journal's %s", dir,
					costsString(s.VersionCosts), costsString(m.VersionCosts))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("%d committed runs under %s, want the experiments' 150 or so", n, root)
	}
}

// sameBest says whether a summary's best is the curve's (null for NaN).
func sameBest(p *float64, v float64) bool {
	if p == nil {
		return math.IsNaN(v)
	}
	return *p == v
}
