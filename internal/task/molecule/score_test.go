package molecule

import (
	"math"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// testdata returns the path of a file under testdata/chem.
func testdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "chem", name)
}

// loadNPZ reads a fixture file into a map by array name.
func loadNPZ(t *testing.T, name string) map[string]numpy.Array {
	t.Helper()
	arrs, err := numpy.ReadNPZ(testdata(name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]numpy.Array{}
	for _, a := range arrs {
		out[a.Name] = a
	}
	return out
}

// TestScoreFixtures compares every term with the Python reference
// (testdata/chem/make_score_fixtures.py) to 1e-9.
func TestScoreFixtures(t *testing.T) {
	f := loadNPZ(t, "score_fixtures.npz")
	smiles := f["smiles"].Data.([]string)
	standard := f["standard"].Data.([]string)
	valid := f["valid"].Data.([]bool)
	want := map[string][]float64{}
	for _, k := range []string{"logp", "sa", "cycle", "score"} {
		want[k] = f[k].Data.([]float64)
	}
	const tol = 1e-9
	bad := 0
	for i, s := range smiles {
		std, err := Standardize(s)
		if !valid[i] {
			if err == nil {
				t.Errorf("%q: standardised to %q, want an error", s, std)
			}
			if got, err := Score(s); err == nil || got != FailureScore {
				t.Errorf("%q: score %v, %v; want the failure score and an error", s, got, err)
			}
			continue
		}
		if err != nil || std != standard[i] {
			t.Errorf("%q: standardised %q (%v), want %q", s, std, err, standard[i])
			bad++
			continue
		}
		got, err := ScoreTerms(std)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		for k, g := range map[string]float64{"logp": got.LogP, "sa": got.SA, "cycle": got.Cycle, "score": got.Penalized()} {
			if math.Abs(g-want[k][i]) > tol {
				t.Errorf("%q: %s %.12g, want %.12g", std, k, g, want[k][i])
				bad++
			}
		}
		if bad > 20 {
			t.Fatal("too many differences")
		}
	}
	if len(smiles) < 2000 {
		t.Errorf("only %d fixture molecules", len(smiles))
	}
}
