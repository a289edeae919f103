package molecule

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDiversityFixture compares Diversity with TDC's internal diversity
// computed by Debian's python3-rdkit (testdata/pmo/make_diversity_fixture.py):
// every molecule's Morgan bit fingerprint (radius 2, 2048 bits) exactly, and
// the diversity of 12 sets (seven drawn from ZINC, of 10 and 100 molecules;
// duplicates, stereo and charges, one pair, tiny molecules, identical
// fingerprints) to 1e-12.
func TestDiversityFixture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "pmo", "diversity.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Cases []struct {
			Smiles    []string
			Diversity float64
		}
		Bits map[string][]uint32
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Cases) != 12 || len(fx.Bits) < 100 {
		t.Fatalf("fixture has %d cases and %d fingerprints, want 12 and at least 100", len(fx.Cases), len(fx.Bits))
	}
	for s, want := range fx.Bits {
		fp, err := morganBits(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		var got []uint32
		for b := range uint32(DiversityBits) {
			if fp[b/64]&(1<<(b%64)) != 0 {
				got = append(got, b)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: bits %v, RDKit's %v", s, got, want)
		}
	}
	for i, c := range fx.Cases {
		got, err := Diversity(c.Smiles)
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if math.Abs(got-c.Diversity) > 1e-12 {
			t.Errorf("case %d (%d molecules): diversity %.15g, TDC's %.15g", i, len(c.Smiles), got, c.Diversity)
		}
	}
	for _, bad := range [][]string{nil, {"CCO"}, {"CCO", "CCO"}, {"CCO", "C1CC"}} {
		if _, err := Diversity(bad); err == nil {
			t.Errorf("Diversity(%q): no error", bad)
		}
	}
}
