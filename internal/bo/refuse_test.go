package bo_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
)

// refuseFifth refuses about a fifth of the toy's objects, spread over the
// whole space (their first coordinate in thousandths is a multiple of 5),
// as a featuriser refuses some molecules wherever they are.
func refuseFifth(x []float64) error {
	if int64(math.Round(x[0]*1000))%5 == 0 {
		return errors.New("cannot be featurised")
	}
	return nil
}

// TestRefusedObjects runs the loop with a model that refuses some objects
// of the data and of the queries (its Encode and Retrain fail on them): the
// run must leave them out of retraining and the GP data, count them per
// version, keep refused queries as valid results, and resume to the same
// queries.
func TestRefusedObjects(t *testing.T) {
	p, data := newToy(t)
	refusedData := 0
	for _, x := range data.Objects {
		if refuseFifth(x) != nil {
			refusedData++
		}
	}
	if refusedData == 0 {
		t.Fatal("no data object is refused; the test checks nothing")
	}
	run := func(dir string, budget int, resume bool) *bo.Result {
		t.Helper()
		cfg := toyConfig()
		cfg.Budget = budget
		m := p.Model()
		m.Refuse = refuseFifth
		var notes []string
		res, err := bo.Run[[]float64](cfg, p.Task(), m, data, bo.Options{Dir: dir, Resume: resume,
			Logf: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }})
		if err != nil {
			t.Fatal(err)
		}
		if m.Asked > data.Len()+budget {
			t.Errorf("Accept asked %d times for %d objects at most", m.Asked, data.Len()+budget)
		}
		left := 0
		for _, n := range notes {
			if strings.Contains(n, "left out") {
				left++
			}
		}
		if want := res.Versions[len(res.Versions)-1].Excluded; left != want && !resume {
			t.Errorf("%d notes of objects left out, want %d", left, want)
		}
		return res
	}
	res := run(t.TempDir(), 30, false)
	refusedQueries := 0
	for _, v := range res.Versions {
		// The version's data are the start and the first Points - start
		// queries that joined it: valid and not already known (invalid
		// decodes and known objects add nothing), so the queries are walked,
		// not sliced (a slice miscounted once a trajectory, on other BLAS
		// kernels, met an invalid decode before a retraining: issue 49).
		want, joined := refusedData, 0
		for _, q := range res.Queries {
			if joined == v.Points-data.Len() {
				break
			}
			if !q.Valid || q.Known {
				continue
			}
			joined++
			if refuseFifth(parse(t, p, q.Object)) != nil {
				want++
			}
		}
		if v.Excluded != want {
			t.Errorf("version %d: %d excluded, want %d", v.Version, v.Excluded, want)
		}
	}
	for _, q := range res.Queries {
		if q.Valid && refuseFifth(parse(t, p, q.Object)) != nil {
			refusedQueries++
			if s, _ := p.Task().Score(parse(t, p, q.Object)); s != q.Score {
				t.Errorf("refused query %d has score %v, want its own %v", q.Index, q.Score, s)
			}
		}
	}
	t.Logf("%d of %d data objects and %d of %d queries refused", refusedData, data.Len(), refusedQueries, len(res.Queries))
	if refusedQueries == 0 {
		t.Error("no valid query was refused; the test checks data only")
	}

	dir := t.TempDir()
	run(dir, 17, false)
	resumed := run(dir, 30, true)
	sameQueries(t, resumed.Queries, res.Queries)
}

// TestAllRefused checks that a model that accepts no data object stops the
// run with an error that says so.
func TestAllRefused(t *testing.T) {
	p, data := newToy(t)
	m := p.Model()
	m.Refuse = func([]float64) error { return errors.New("no") }
	_, err := bo.Run[[]float64](toyConfig(), p.Task(), m, data, bo.Options{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "accepts none") {
		t.Errorf("got %v, want an error saying the model accepts none of the data", err)
	}
}

// parse reads a toy object's key back.
func parse(t *testing.T, p *botest.Problem, key string) []float64 {
	t.Helper()
	x, err := p.Task().Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	return x
}
