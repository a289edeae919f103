package dashboard

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/manual"
)

// writeFlags keeps flags as the run's kept flags (bo.FlagsFile).
func writeFlags(t *testing.T, dir string, flags map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := bo.WriteFlags(dir, flags); err != nil {
		t.Fatal(err)
	}
}

// tell records a score for id in the manual run in dir, as tell does.
func tell(t *testing.T, dir string, id int, score float64) {
	t.Helper()
	s, err := manual.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := bo.ReadJournalView(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Bind(v)
	if _, err := s.Tell("told.csv", []manual.Row{{Told: manual.Told{ID: id, Score: &score}, Line: 2}}, s.Known,
		float64(time.Now().Unix())); err != nil {
		t.Fatal(err)
	}
}

// pendingAsk is an Ask as the page reads it: null is nil.
type pendingAsk struct {
	ID            int
	Object        string
	Age, Mean, SD *float64
}

// asksOf returns the pending asks the run page of run shows, by id, and
// how many results are told and not journaled.
func asksOf(t *testing.T, s *Server, run string) (map[int]pendingAsk, int) {
	t.Helper()
	code, body := get(t, s, "/api/view?run="+run)
	var v struct {
		Detail struct {
			Asks *struct {
				Pending []struct {
					ID       int      `json:"id"`
					Object   string   `json:"object"`
					Age      *float64 `json:"age_s"`
					Mean, SD *float64
				} `json:"pending"`
				Told  int    `json:"told"`
				Error string `json:"error"`
			} `json:"asks"`
		} `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &v); code != 200 || err != nil || v.Detail.Asks == nil || v.Detail.Asks.Error != "" {
		t.Fatalf("run %s: no pending asks: %d %s (%v)", run, code, body, err)
	}
	out := map[int]pendingAsk{}
	for _, a := range v.Detail.Asks.Pending {
		out[a.ID] = pendingAsk{a.ID, a.Object, a.Age, a.Mean, a.SD}
	}
	return out, v.Detail.Asks.Told
}

// TestManualAsksStart: a manual run whose start is being measured (kept
// flags and store, no configuration or journal yet) is listed, and its
// page shows the start's objects awaiting results, those handed out with
// their age, without a prediction; a told one leaves the list (counted as
// told) on the next poll; a run that is not manual has no asks.
func TestManualAsksStart(t *testing.T) {
	root, s := newRoot(t)
	dir := filepath.Join(root, "lab")
	writeFlags(t, dir, map[string]string{"objective": manual.Objective, "budget": "4", "maximize": "true", "task": "molecule",
		"strategy": "bo", "elbo": "t", "seed": "3"})
	st, err := manual.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.State.Start = []string{"CCO", "c1ccccc1", "CC(=O)O"}
	if err := st.Hand([]int{1, 2}, float64(time.Now().Add(-90*time.Second).Unix())); err != nil {
		t.Fatal(err)
	}
	lab := listedRun(t, s, "lab")
	if lab.Error != "" || lab.Task != "molecule" || lab.Strategy != "bo" || lab.ELBO != "t" || lab.Seed != "3" || lab.Budget != 4 || !lab.Maximize {
		t.Errorf("the manual run being set up is listed as %+v (%s), want the task, method, seed, budget and direction its set-up kept",
			*lab.Run, lab.Error)
	}
	// The page iterates these: a run without evaluations has empty lists.
	if _, body := get(t, s, "/api/view?run=lab"); !strings.Contains(body, `"best":[]`) || !strings.Contains(body, `"gp":[]`) {
		t.Errorf("a run without evaluations: %s, want empty lists of best objects and GP fits", body)
	}
	asks, told := asksOf(t, s, "lab")
	if len(asks) != 3 || asks[1].Object != "CCO" || asks[3].Object != "CC(=O)O" || told != 0 {
		t.Fatalf("asks %+v (%d told), want ids 1 to 3 with the start's objects", asks, told)
	}
	for id := 1; id <= 3; id++ {
		a := asks[id]
		if handed := id <= 2; handed != (a.Age != nil) || (handed && (*a.Age < 89 || *a.Age > 3600)) || a.Mean != nil || a.SD != nil {
			t.Errorf("id %d: %+v; want an age of about 90 s when handed out, else none, and no prediction", id, a)
		}
	}
	tell(t, dir, 2, 1.5)
	asks, told = asksOf(t, s, "lab")
	if _, ok := asks[2]; ok || len(asks) != 2 || told != 1 {
		t.Errorf("after telling id 2: %+v (%d told), want ids 1 and 3 and one told", asks, told)
	}
	if v := getView(t, s, "/api/view?run=a"); v.Detail.Asks != nil {
		t.Errorf("run a is not manual, yet shows asks %+v", v.Detail.Asks)
	}
}

// TestManualAsksProposals: a manual run's proposals pending in the
// journal are listed with their ids (after the start's) and the GP's
// predicted mean and sd as the journal holds them, and leave the list once
// told.
func TestManualAsksProposals(t *testing.T) {
	root, s := newRoot(t)
	dir := filepath.Join(root, "lab")
	copyRun(t, toyRun(t, 1), dir)
	writeFlags(t, dir, map[string]string{"objective": manual.Objective, "budget": "14"})
	v, err := bo.ReadJournalView(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := len(v.Queries)
	means, sds := []float64{0.25, -1.5}, []float64{0.125, 2}
	round := bo.Round{Start: n, Version: v.Versions - 1, Pending: []int{n, n + 1}}
	for i := range means {
		round.Queries = append(round.Queries, bo.Query{Index: n + i, Round: n, Object: []string{"p", "q"}[i], Valid: true,
			Mean: &means[i], SD: &sds[i]})
	}
	line, err := json.Marshal(map[string]any{"round": round})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, bo.JournalFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, err := manual.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.Bind(bo.JournalView{Queries: append(v.Queries, round.Queries...)})
	first, ok := st.QueryID(n)
	if !ok {
		t.Fatal("the pending query has no id")
	}
	if err := st.Hand([]int{first}, float64(time.Now().Unix())); err != nil {
		t.Fatal(err)
	}
	asks, _ := asksOf(t, s, "lab")
	p, q := asks[first], asks[first+1]
	if len(asks) != 2 || p.Object != "p" || p.Mean == nil || *p.Mean != 0.25 || *p.SD != 0.125 || p.Age == nil ||
		q.Object != "q" || q.Mean == nil || *q.Mean != -1.5 || *q.SD != 2 || q.Age != nil {
		t.Fatalf("asks %+v, want ids %d and %d with the journal's predictions, the first handed out", asks, first, first+1)
	}
	tell(t, dir, first, 3)
	if asks, told := asksOf(t, s, "lab"); len(asks) != 1 || asks[first+1].Object != "q" || told != 1 {
		t.Errorf("after telling id %d: %+v (%d told), want id %d alone", first, asks, told, first+1)
	}
}

// listedRun returns run id as /api/runs lists it.
func listedRun(t *testing.T, s *Server, id string) listed {
	t.Helper()
	code, body := get(t, s, "/api/runs")
	var got struct{ Runs []listed }
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
		t.Fatalf("/api/runs: %d %v", code, err)
	}
	for _, r := range got.Runs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("run %s is not listed: %s", id, body)
	return listed{}
}

// TestManualAsksCommitted: a committed manual run, whose journal is
// journal.jsonl.gz, has its start done and nothing pending, as with its
// journal.jsonl.
func TestManualAsksCommitted(t *testing.T) {
	root, s := newRoot(t)
	dir := filepath.Join(root, "lab")
	copyRun(t, toyRun(t, 1), dir)
	writeFlags(t, dir, map[string]string{"objective": manual.Objective})
	st, err := manual.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.State.Start = []string{"x", "y"}
	if err := st.SaveState(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, bo.JournalFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".gz", buf.Bytes(), 0o644); err != nil || os.Remove(path) != nil {
		t.Fatal(err)
	}
	if asks, told := asksOf(t, s, "lab"); len(asks) != 0 || told != 0 {
		t.Errorf("a committed manual run: asks %+v (%d told), want none: its journal holds the start's evaluations", asks, told)
	}
}
