package bo_test

import (
	"fmt"

	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
)

// deferTask defers every evaluation whose tag it has not been told (a
// person measures them, bo.ErrDeferred).
type deferTask struct {
	botest.Task
	told map[string]float64
}

func (d deferTask) ScoreTagged(tag string, x []float64) (float64, error) {
	if s, ok := d.told[tag]; ok {
		return s, nil
	}
	return 0, fmt.Errorf("%s: %w", tag, bo.ErrDeferred)
}

// TestDeferred runs the loop as ask and tell do: each call proposes at
// most Proposals queries and returns them pending; a call after their
// results are told journals them, retrains once the version's r are in,
// and proposes again. Pending queries are never proposed again.
func TestDeferred(t *testing.T) {
	p, data := newToy(t)
	cfg := toyConfig()
	cfg.Budget, cfg.RetrainEvery, cfg.SamplesPerModel = 6, 3, 0
	dir := t.TempDir()
	task := deferTask{Task: p.Task(), told: map[string]float64{}}
	call := func(n int, resume bool) *bo.Result {
		t.Helper()
		res, err := bo.Run[[]float64](cfg, task, p.Model(), data, bo.Options{Dir: dir, Resume: resume, Proposals: n})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := call(2, false)
	if len(res.Pending) != 2 || len(res.Queries) != 0 || len(res.Versions) != 1 {
		t.Fatalf("first call: %d pending, %d complete queries, %d versions; want 2, 0, 1", len(res.Pending), len(res.Queries), len(res.Versions))
	}
	for _, q := range res.Pending {
		if q.Mean == nil || q.SD == nil || *q.SD <= 0 {
			t.Errorf("query %d: GP mean %v, sd %v: want both, sd > 0", q.Index, q.Mean, q.SD)
		}
	}
	// Nothing told: only r - 2 = 1 more fits in the version.
	res = call(2, true)
	if len(res.Pending) != 3 {
		t.Fatalf("second call: %d pending, want 3 (the version's r)", len(res.Pending))
	}
	seen := map[string]bool{}
	for i, q := range res.Pending {
		if q.Index != i || seen[q.Object] {
			t.Fatalf("pending query %d: index %d, object %s (seen: %v)", i, q.Index, q.Object, seen[q.Object])
		}
		seen[q.Object] = true
		x, err := p.Task().Parse(q.Object)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := p.Task().Score(x)
		task.told[bo.QueryTag(q.Index)] = s
	}
	res = call(2, true)
	if res.Evaluated != 3 || len(res.Versions) != 2 || len(res.Pending) != 2 || res.Pending[0].Index != 3 {
		t.Fatalf("after the tell: %d evaluated, %d versions, %d pending from %v; want 3, 2 (retrained), 2 from query 3",
			res.Evaluated, len(res.Versions), len(res.Pending), res.Pending)
	}
	for _, q := range res.Pending {
		if seen[q.Object] {
			t.Errorf("query %d proposes %s again", q.Index, q.Object)
		}
	}
	j, err := readJournalLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(j, `"eval":`); n != 3 {
		t.Errorf("journal has %d evaluations, want the 3 told", n)
	}
}

// readJournalLines returns the run's journal.
func readJournalLines(dir string) (string, error) {
	_, b, err := bo.ReadJournalFile(dir)
	return string(b), err
}
