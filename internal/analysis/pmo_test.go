package analysis

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// TestTopKAUCFixture compares TopKAUC with PMO's top_auc written as the
// benchmark's code (testdata/pmo/make_auc_fixture.py) on six runs: fewer
// calls than one record, exactly one record, between records, one short of
// the budget, the whole budget, and a budget of 10,000. The sums differ
// only in rounding order: 1e-12 relative.
func TestTopKAUCFixture(t *testing.T) {
	arrays, err := numpy.ReadNPZ(filepath.Join("..", "..", "testdata", "pmo", "auc.npz"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]float64{}
	for _, a := range arrays {
		v, err := a.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		byName[a.Name] = v
	}
	for c := 0; ; c++ {
		scores, ok := byName[fmt.Sprintf("scores_%d", c)]
		if !ok {
			if c < 6 {
				t.Fatalf("fixture has %d cases, want 6", c)
			}
			break
		}
		budget := int(byName[fmt.Sprintf("budget_%d", c)][0])
		want := byName[fmt.Sprintf("auc_%d", c)]
		for j, k := range []int{1, 10, 100} {
			got, err := TopKAUC(scores, k, PMOEvery, budget)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want[j]) > 1e-12*math.Abs(want[j]) {
				t.Errorf("case %d (%d calls, budget %d): top-%d AUC %.15g, want %.15g", c, len(scores), budget, k, got, want[j])
			}
		}
	}
}

// TestPMOCountsDistinct: the oracle calls are a run's distinct evaluations
// (a repeat and a known score are no call), cut at the budget.
func TestPMOCountsDistinct(t *testing.T) {
	q := bo.Queries{Points: []string{"a", "", "a", "b", "c", "d"}, Scores: []float64{0.5, 0, 0.5, 0.9, 0.1, 0.7},
		Known: []bool{false, false, false, false, true, false}}
	c := bo.Curve{Dir: "run", Maximize: true, Evaluations: q.Evaluations()}
	runs, err := PMO([]bo.Curve{c}, []int{1, 10}, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	if r.Calls != 3 || len(r.Top) != 2 || r.Top[0].Object != "b" || r.Top[1].Object != "d" {
		t.Fatalf("calls %d, top %+v; want 3 calls (a, b, d) and top b, d", r.Calls, r.Top)
	}
	// Three calls, no record before the last: (3 - 0) * (top + 0) / 2 / 3.
	if want := 0.9 / 2; math.Abs(r.AUC[1]-want) > 1e-15 {
		t.Errorf("top-1 AUC %v, want %v", r.AUC[1], want)
	}
	if _, err := PMO([]bo.Curve{{Dir: "min"}}, []int{1}, 10, 1); err == nil {
		t.Error("a minimised run was accepted")
	}
}

// TestPMOCountsInitialFirst: a run's initial oracle calls (optimize
// --initial) count before its distinct evaluations, in the AUC, the top
// objects and the cut at the budget.
func TestPMOCountsInitialFirst(t *testing.T) {
	initial := []bo.Evaluation{{Object: "i1", Score: 0.3}, {Object: "i2", Score: 0.95}, {Object: "i3", Score: 0.1}}
	evals := []bo.Evaluation{{Object: "a", Score: 0.5}, {Object: "b", Score: 0.9}, {Object: "c", Score: 0.99}}
	c := bo.Curve{Dir: "run", Maximize: true, Initial: initial, Evaluations: evals}
	for _, budget := range []int{4, 6, 1000} {
		runs, err := PMO([]bo.Curve{c}, []int{1, 10}, budget, 2)
		if err != nil {
			t.Fatal(err)
		}
		r := runs[0]
		calls := c.OracleCalls()[:min(budget, 6)]
		scores := make([]float64, len(calls))
		for i, e := range calls {
			scores[i] = e.Score
		}
		if r.Calls != len(calls) || r.Initial != 3 || r.Evaluations[0].Object != "i1" || r.Evaluations[3].Object != "a" {
			t.Errorf("budget %d: %d calls (%d initial), %v; want %d, 3 initial first", budget, r.Calls, r.Initial, r.Evaluations, len(calls))
		}
		for _, k := range []int{1, 10} {
			want, _ := TopKAUC(scores, k, PMOEvery, budget)
			if r.AUC[k] != want {
				t.Errorf("budget %d: top-%d AUC %v, want %v (initial calls first)", budget, k, r.AUC[k], want)
			}
		}
		wantTop := []string{"i2", "a"}
		if budget >= 6 {
			wantTop = []string{"c", "i2"}
		}
		if r.Top[0].Object != wantTop[0] || r.Top[1].Object != wantTop[1] {
			t.Errorf("budget %d: top %v, want %v", budget, r.Top, wantTop)
		}
	}
	// Three initial calls, budget 3, three evaluations: (3 - 0) * (0.95 + 0) / 2 / 3.
	runs, _ := PMO([]bo.Curve{c}, []int{1}, 3, 1)
	if want := 0.95 / 2; math.Abs(runs[0].AUC[1]-want) > 1e-15 || runs[0].Calls != 3 {
		t.Errorf("budget 3: top-1 AUC %v over %d calls, want %v over the 3 initial ones", runs[0].AUC[1], runs[0].Calls, want)
	}
}

// TestTopKCurve: the top-k mean after each call equals the mean of the k
// largest of the prefix (all while fewer), ties included.
func TestTopKCurve(t *testing.T) {
	scores := []float64{0.3, 0.1, 0.3, 0.9, 0.2, 0.9, 0.5, 0.05, 0.7, 0.3, 0.3, 0.8}
	for _, k := range []int{1, 3, 10, 100} {
		got := TopKCurve(scores, k)
		for i := range scores {
			if want := topKMean(scores[:i+1], k); math.Abs(got[i]-want) > 1e-15 {
				t.Errorf("k %d after %d calls: %v, want %v", k, i+1, got[i], want)
			}
		}
	}
}
