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
