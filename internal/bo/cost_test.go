package bo_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// costStage returns the stage named name of c.
func costStage(t *testing.T, c bo.LoopCost, name string) bo.StageCost {
	t.Helper()
	for _, s := range c.Stages {
		if s.Stage == name {
			return s
		}
	}
	t.Fatalf("no stage %s in %+v", name, c.Stages)
	return bo.StageCost{}
}

// closeTo reports whether got is within rel of want, relative to the
// larger magnitude (sums of the same terms in another order).
func closeTo(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(1, math.Max(math.Abs(got), math.Abs(want)))
}

// journalSums sums a journal's fields as plain JSON: its cpu_s, the
// versions' retrain_s and sample_s and the queries' (or rounds' queries')
// timing fields, and the evaluations' eval_s, by field name.
func journalSums(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	sums := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var line map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		var cpu float64
		json.Unmarshal(line["cpu_s"], &cpu)
		sums["cpu_s"] += cpu
		var rec struct {
			Version *struct {
				Retrain float64 `json:"retrain_s"`
				Sample  float64 `json:"sample_s"`
			} `json:"version"`
			Query *struct {
				Timing map[string]float64 `json:"timing"`
			} `json:"query"`
			Round *struct {
				Queries []struct {
					Timing map[string]float64 `json:"timing"`
				} `json:"queries"`
				GPUpdate float64 `json:"gp_update"`
			} `json:"round"`
			Eval *struct {
				Seconds float64 `json:"eval_s"`
			} `json:"eval"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		var timings []map[string]float64
		switch {
		case rec.Version != nil:
			sums["retrain_s"] += rec.Version.Retrain
			sums["sample_s"] += rec.Version.Sample
		case rec.Query != nil:
			timings = append(timings, rec.Query.Timing)
		case rec.Round != nil:
			for _, q := range rec.Round.Queries {
				timings = append(timings, q.Timing)
			}
			sums["gp_update"] += rec.Round.GPUpdate
		case rec.Eval != nil:
			sums["eval"] += rec.Eval.Seconds
		}
		for _, tm := range timings {
			for k, v := range tm {
				sums[k] += v
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

// checkCostSums compares c with the journal's sums: each stage's wall time
// is the sum of its field, the total CPU time that of cpu_s, and the
// stages' CPU times add up to it.
func checkCostSums(t *testing.T, c bo.LoopCost, sums map[string]float64) {
	t.Helper()
	const rel = 1e-12 // the same numbers summed in another order (at most a few thousand terms)
	for stage, field := range map[string]string{bo.StageCostRetrain: "retrain_s", bo.StageCostSamples: "sample_s",
		bo.StageCostEncode: "encode", bo.StageCostGPFit: "gp_fit", bo.StageCostAcq: "acq", bo.StageCostDecode: "decode"} {
		if got := costStage(t, c, stage).Seconds; !closeTo(got, sums[field], rel) {
			t.Errorf("%s: %v wall seconds, the journal's %s sum to %v", stage, got, field, sums[field])
		}
	}
	hasUpdate := slices.ContainsFunc(c.Stages, func(s bo.StageCost) bool { return s.Stage == bo.StageCostGPUpdate })
	if hasUpdate != (sums["gp_update"] > 0) {
		t.Errorf("GP conditioning listed %v, the journal's rounds time %v s of it", hasUpdate, sums["gp_update"])
	} else if hasUpdate && !closeTo(costStage(t, c, bo.StageCostGPUpdate).Seconds, sums["gp_update"], rel) {
		t.Errorf("%s: %v wall seconds, the journal's rounds sum to %v", bo.StageCostGPUpdate,
			costStage(t, c, bo.StageCostGPUpdate).Seconds, sums["gp_update"])
	}
	if got, want := costStage(t, c, bo.StageCostEval).Seconds, sums["eval"]+sums["eval_s"]; !closeTo(got, want, rel) {
		t.Errorf("evaluation: %v wall seconds, the journal's evaluations sum to %v", got, want)
	}
	if !closeTo(c.Total.CPU, sums["cpu_s"], rel) || !(c.Total.CPU > 0) {
		t.Errorf("total CPU %v s, the journal's cpu_s sum to %v", c.Total.CPU, sums["cpu_s"])
	}
	var cpu, share float64
	for _, s := range c.Stages {
		cpu += s.CPU
		share += s.Share
	}
	if !closeTo(cpu, c.Total.CPU, rel) || !closeTo(share, 1, rel) {
		t.Errorf("the stages' CPU times sum to %v s (shares to %v), the total is %v s", cpu, share, c.Total.CPU)
	}
	if c.Evaluations > 0 && !closeTo(*c.Total.PerEvaluation*float64(c.Evaluations), c.Total.CPU, rel) {
		t.Errorf("%v CPU s an evaluation x %d evaluations, want %v", *c.Total.PerEvaluation, c.Evaluations, c.Total.CPU)
	}
}

// TestLoopCostToyRun: the cost of a toy run, round by round (RepeatsSkip)
// and query by query (RepeatsAuthors), counts its queries, versions and
// distinct evaluations as its results do, and its stages sum the journal's
// fields; the same journal gzipped and with a torn last line gives the
// same cost.
func TestLoopCostToyRun(t *testing.T) {
	for _, repeats := range []bo.Repeats{bo.RepeatsSkip, bo.RepeatsAuthors} {
		t.Run(string(repeats), func(t *testing.T) {
			cfg := toyConfig()
			cfg.Repeats = repeats
			dir := t.TempDir()
			res, err := runToy(t, cfg, dir, false, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			sums := checkToyCost(t, dir, res)
			if repeats == bo.RepeatsSkip && !(sums["gp_update"] > 0) {
				t.Errorf("the rounds time no conditioning of their GP (gp_update %v)", sums["gp_update"])
			}
		})
	}
}

// checkToyCost checks the cost of the toy run res in dir and returns its
// journal's sums (journalSums).
func checkToyCost(t *testing.T, dir string, res *bo.Result) map[string]float64 {
	t.Helper()
	c, err := bo.ReadLoopCost(dir)
	if err != nil {
		t.Fatal(err)
	}
	var qs bo.Queries
	for _, q := range res.Queries {
		qs.Points, qs.Known = append(qs.Points, q.Object), append(qs.Known, q.Known)
	}
	distinct := 0
	for _, d := range qs.Distinct() {
		if d {
			distinct++
		}
	}
	if c.Queries != len(res.Queries) || c.Versions != len(res.Versions) || c.Evaluations != distinct || distinct == 0 {
		t.Errorf("%d queries, %d versions, %d distinct evaluations; the run has %d, %d, %d",
			c.Queries, c.Versions, c.Evaluations, len(res.Queries), len(res.Versions), distinct)
	}
	b, err := os.ReadFile(filepath.Join(dir, bo.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	sums := journalSums(t, bytes.NewReader(b))
	checkCostSums(t, c, sums)

	gz := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Write([]byte(`{"eval":{"i":3,"sco`))
	zw.Close()
	if err := os.WriteFile(filepath.Join(gz, bo.JournalFile+".gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := bo.ReadLoopCost(gz)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g.Torn, "torn last line") {
		t.Errorf("torn gzipped journal: Torn %q", g.Torn)
	}
	g.Dir, g.Journal, g.Torn = c.Dir, c.Journal, c.Torn
	if !reflect.DeepEqual(g, c) {
		t.Errorf("gzipped journal with a torn line:\n%+v\nwant\n%+v", g, c)
	}
	return sums
}

// linesCost writes lines as dir's journal and returns its cost.
func linesCost(t *testing.T, dir string, lines []string) bo.LoopCost {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, bo.JournalFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := bo.ReadLoopCost(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLoopCostCommitted reads a committed run's gzipped journal (molecule,
// T-LBO, seed 0: 500 distinct evaluations over 10 model versions).
func TestLoopCostCommitted(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "experiment", "results", "molecule-full-cmp", "tlbo-seed0")
	c, err := bo.ReadLoopCost(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Evaluations != 500 || c.Versions != 10 || c.Torn != "" || c.CPULines != c.Lines {
		t.Errorf("%d distinct evaluations, %d versions, torn %q, %d of %d lines with CPU time; the run's budget is 500 over 10 versions",
			c.Evaluations, c.Versions, c.Torn, c.CPULines, c.Lines)
	}
	f, err := os.Open(filepath.Join(dir, bo.JournalFile+".gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	checkCostSums(t, c, journalSums(t, zr))
}

// TestLoopCostShares: a line's CPU time is shared among the stages it
// timed in proportion to their wall time; a query's total beyond its
// stages, and lines that time nothing, count as other; a round's query
// awaiting its evaluation is not counted, nor are known objects and repeats
// as distinct evaluations.
func TestLoopCostShares(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"version":{"version":0,"file":"model-v0/model.pt","points":10,"epochs":1,"retrain_s":20,"sample_s":5},"cpu_s":10}`,
		`{"round":{"start":0,"version":0,"queries":[` +
			`{"i":0,"version":0,"z":[0],"object":"a","valid":true,"score":0,"incumbent":0,"acq":0,"ei":0,"timing":{"encode":1,"gp_fit":2,"acq":0.5,"decode":0.5,"total":0}},` +
			`{"i":1,"version":0,"round":0,"z":[0],"object":"c","valid":true,"known":true,"score":0,"incumbent":0,"acq":0,"ei":0,"timing":{"acq":1,"decode":1,"total":0}}` +
			`],"pending":[0]},"cpu_s":12}`,
		`{"eval":{"i":0,"score":1,"eval_s":1},"cpu_s":0.5}`,
		`{"query":{"i":2,"version":0,"z":[0],"object":"a","valid":true,"duplicate":true,"score":1,"incumbent":1,"acq":0,"ei":0,"timing":{"acq":1,"eval":1,"total":3}},"cpu_s":1.5}`,
		`{"stop":{"version":0,"after":3,"ei":0},"cpu_s":0.25}`,
		`{"round":{"start":3,"version":0,"queries":[` +
			`{"i":3,"version":0,"round":3,"z":[0],"object":"b","valid":true,"score":0,"incumbent":1,"acq":0,"ei":0,"timing":{"acq":2,"total":0}}` +
			`],"pending":[3]},"cpu_s":4}`,
	}
	c := linesCost(t, dir, lines)
	if c.Queries != 3 || c.Evaluations != 1 || c.Versions != 1 || c.Lines != 6 || c.CPULines != 6 {
		t.Errorf("%d queries, %d distinct evaluations, %d versions, %d lines (%d with CPU), want 3, 1, 1, 6, 6",
			c.Queries, c.Evaluations, c.Versions, c.Lines, c.CPULines)
	}
	// Version line: 10 CPU s over 20 + 5 wall s. First round: 12 CPU s over
	// 6 wall s. Query: 1.5 CPU s over acq 1, eval 1, other 1 (total 3).
	// Second round: 4 CPU s over acq 2.
	want := map[string][2]float64{ // stage: wall s, CPU s
		bo.StageCostRetrain: {20, 8}, bo.StageCostSamples: {5, 2},
		bo.StageCostEncode: {1, 2}, bo.StageCostGPFit: {2, 4},
		bo.StageCostAcq: {0.5 + 1 + 1 + 2, 3 + 0.5 + 4}, bo.StageCostDecode: {1.5, 3},
		bo.StageCostEval: {1 + 1, 0.5 + 0.5}, bo.StageCostOther: {1, 0.5 + 0.25},
	}
	const tol = 1e-12 // a few products and quotients of short binary fractions
	for stage, w := range want {
		s := costStage(t, c, stage)
		if math.Abs(s.Seconds-w[0]) > tol || math.Abs(s.CPU-w[1]) > tol || math.Abs(*s.PerEvaluation-w[1]) > tol {
			t.Errorf("%s: %v wall s, %v CPU s (%v an evaluation), want %v, %v", stage, s.Seconds, s.CPU, *s.PerEvaluation, w[0], w[1])
		}
	}
	// Beyond the timed wall time: the first round (12 over 6) and the
	// second (4 over 2); the query's 1.5 CPU s are under its 3 wall s.
	if math.Abs(c.Total.CPU-28.25) > tol || math.Abs(c.CPUBeyondWall-8) > tol {
		t.Errorf("total %v CPU s, %v beyond the wall time, want 28.25 and 8", c.Total.CPU, c.CPUBeyondWall)
	}
}

// TestLoopCostFeaturisation: featurisation on demand, measured on its own
// threads, takes its CPU time off the retraining's and the encoding's lines
// (at most the line's), the rest shared by wall time; a run without it
// lists no such stage.
func TestLoopCostFeaturisation(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"version":{"version":0,"file":"model-v0/model.pt","points":10,"epochs":1,"retrain_s":4,"featurise_cpu_s":6},"cpu_s":10}`,
		`{"round":{"start":0,"version":0,"queries":[` +
			`{"i":0,"version":0,"z":[0],"object":"a","valid":true,"score":0,"incumbent":0,"acq":0,"ei":0,"timing":{"encode":1,"featurise_cpu":1,"gp_fit":1,"total":0}}` +
			`],"pending":[0]},"cpu_s":3}`,
		`{"eval":{"i":0,"score":1,"eval_s":1},"cpu_s":0.5}`,
		`{"version":{"version":1,"file":"model-v1/model.pt","points":11,"epochs":1,"retrain_s":2,"featurise_cpu_s":5},"cpu_s":4}`,
	}
	c := linesCost(t, dir, lines)
	// Version 0: 6 of its 10 CPU s featurised, 4 retrained. The round: 1 of
	// 3 featurised, 2 over encode 1 and gp_fit 1. Version 1: its 5
	// featurised CPU s are more than the line's 4 (clock granularity,
	// threads still ending): all 4 featurised.
	want := map[string][2]float64{ // stage: wall s, CPU s
		bo.StageCostRetrain: {6, 4}, bo.StageCostFeaturise: {0, 6 + 1 + 4},
		bo.StageCostEncode: {1, 1}, bo.StageCostGPFit: {1, 1}, bo.StageCostEval: {1, 0.5},
	}
	const tol = 1e-12 // sums and differences of short binary fractions
	for stage, w := range want {
		s := costStage(t, c, stage)
		if math.Abs(s.Seconds-w[0]) > tol || math.Abs(s.CPU-w[1]) > tol {
			t.Errorf("%s: %v wall s, %v CPU s, want %v, %v", stage, s.Seconds, s.CPU, w[0], w[1])
		}
	}
	if math.Abs(c.Total.CPU-17.5) > tol {
		t.Errorf("total %v CPU s, want the lines' 17.5", c.Total.CPU)
	}
	if i := slices.IndexFunc(c.Stages, func(s bo.StageCost) bool { return s.Stage == bo.StageCostFeaturise }); i != 2 {
		t.Errorf("featurisation is stage %d of %v, want the third, after encoding", i, c.Stages)
	}

	lines[0] = strings.Replace(lines[0], `,"featurise_cpu_s":6`, "", 1)
	lines[1] = strings.Replace(lines[1], `"featurise_cpu":1,`, "", 1)
	lines[3] = strings.Replace(lines[3], `,"featurise_cpu_s":5`, "", 1)
	for _, s := range linesCost(t, dir, lines).Stages {
		if s.Stage == bo.StageCostFeaturise {
			t.Errorf("a run without featurisation on demand lists it: %+v", s)
		}
	}
}

// TestLoopCostGPUpdate: a round's conditioning of its GP is a stage of its
// line, sharing the line's CPU time by wall time; a run whose rounds do not
// time it lists no such stage.
func TestLoopCostGPUpdate(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"round":{"start":0,"version":0,"queries":[` +
			`{"i":0,"version":0,"z":[0],"object":"a","valid":true,"score":0,"incumbent":0,"acq":0,"ei":0,"timing":{"gp_fit":1,"acq":2,"decode":1,"total":0}}` +
			`],"pending":[0],"gp_update":4},"cpu_s":4}`,
		`{"eval":{"i":0,"score":1,"eval_s":1},"cpu_s":0.5}`,
	}
	c := linesCost(t, dir, lines)
	// The round: 4 CPU s over gp_fit 1, gp_update 4, acq 2, decode 1.
	want := map[string][2]float64{ // stage: wall s, CPU s
		bo.StageCostGPFit: {1, 0.5}, bo.StageCostGPUpdate: {4, 2}, bo.StageCostAcq: {2, 1}, bo.StageCostDecode: {1, 0.5},
	}
	const tol = 1e-12 // quotients of short binary fractions
	for stage, w := range want {
		s := costStage(t, c, stage)
		if math.Abs(s.Seconds-w[0]) > tol || math.Abs(s.CPU-w[1]) > tol {
			t.Errorf("%s: %v wall s, %v CPU s, want %v, %v", stage, s.Seconds, s.CPU, w[0], w[1])
		}
	}
	if i := slices.IndexFunc(c.Stages, func(s bo.StageCost) bool { return s.Stage == bo.StageCostGPUpdate }); i < 1 ||
		c.Stages[i-1].Stage != bo.StageCostGPFit {
		t.Errorf("GP conditioning is stage %d of %v, want the one after the GP fit", i, c.Stages)
	}
	lines[0] = strings.Replace(lines[0], `,"gp_update":4`, "", 1)
	for _, s := range linesCost(t, dir, lines).Stages {
		if s.Stage == bo.StageCostGPUpdate {
			t.Errorf("a run without timed conditioning lists it: %+v", s)
		}
	}
}

// TestLoopCostBadInput: errors name the run directory, or the journal and
// its line.
func TestLoopCostBadInput(t *testing.T) {
	dir := t.TempDir()
	if _, err := bo.ReadLoopCost(dir); err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), bo.JournalFile) {
		t.Errorf("no journal: %v, want an error naming %s and the journal", err, dir)
	}
	if err := os.WriteFile(filepath.Join(dir, bo.JournalFile+".gz"), []byte("not gzip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bo.ReadLoopCost(dir); err == nil || !strings.Contains(err.Error(), bo.JournalFile+".gz") || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("not gzip: %v, want an error naming the file and gzip", err)
	}
	bad := `{"version":{"version":0,"file":"m","points":1,"epochs":0,"retrain_s":1},"cpu_s":1}` + "\n" + `{"eval":{"i":4,"score":1,"eval_s":1}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, bo.JournalFile), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bo.ReadLoopCost(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, bo.JournalFile)) || !strings.Contains(err.Error(), "query 4") {
		t.Errorf("evaluation of no pending query: %v, want an error naming the journal and query 4", err)
	}
	if err := os.WriteFile(filepath.Join(dir, bo.JournalFile), []byte(`{"version":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bo.ReadLoopCost(dir); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad line: %v, want an error naming line 1", err)
	}
}
