package chem

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// molfileAtom and molfileBond are the fields of a V2000 atom and bond line.
type molfileAtom struct {
	x, y, z float64
	symbol  string
}

type molfileBond struct{ begin, end, order, stereo int }

// parseV2000 reads a V2000 molfile's counts, atom and bond blocks by
// their fixed columns (CTfile format), failing the test on anything else.
func parseV2000(t *testing.T, block string) ([]molfileAtom, []molfileBond) {
	t.Helper()
	lines := strings.Split(block, "\n")
	if len(lines) < 4 || !strings.HasSuffix(strings.TrimRight(lines[3], " "), "V2000") {
		t.Fatalf("no V2000 counts line:\n%s", block)
	}
	num := func(s string) int {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("field %q is no number:\n%s", s, block)
		}
		return n
	}
	real := func(s string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			t.Fatalf("coordinate %q is no number:\n%s", s, block)
		}
		return v
	}
	na, nb := num(lines[3][0:3]), num(lines[3][3:6])
	if len(lines) < 4+na+nb+1 || !slices.Contains(lines[4+na+nb:], "M  END") {
		t.Fatalf("%d atoms and %d bonds, then no M  END:\n%s", na, nb, block)
	}
	atoms := make([]molfileAtom, na)
	for i := range atoms {
		l := lines[4+i]
		atoms[i] = molfileAtom{real(l[0:10]), real(l[10:20]), real(l[20:30]), strings.TrimSpace(l[31:34])}
	}
	bonds := make([]molfileBond, nb)
	for i := range bonds {
		l := lines[4+na+i]
		bonds[i] = molfileBond{num(l[0:3]), num(l[3:6]), num(l[6:9]), num(l[9:12])}
	}
	return atoms, bonds
}

// TestMolBlock2D: the molfile has the SMILES' atoms (elements in order)
// and bonds (kekulised orders), laid out flat (every z 0) at RDKit's
// depiction bond length of 1.5, not all atoms at the origin; a stereo
// centre is drawn with a wedge; the molecule itself is unchanged.
func TestMolBlock2D(t *testing.T) {
	symbols := map[int]string{6: "C", 7: "N", 8: "O", 16: "S", 17: "Cl"}
	for _, smiles := range []string{"CCO", "c1ccc(Cl)cc1S", "C[C@H](N)C(=O)O", "C1CC2CCC1C2", "[NH3+]CC(=O)[O-]"} {
		m, err := Smiles(smiles)
		if err != nil {
			t.Fatal(err)
		}
		before := m.String()
		block, err := m.MolBlock2D()
		if err != nil {
			t.Fatalf("%s: %v", smiles, err)
		}
		if after := m.String(); after != before {
			t.Errorf("%s: the molecule changed: %s, was %s", smiles, after, before)
		}
		if title, _, _ := strings.Cut(block, "\n"); title != "" {
			t.Errorf("%s: title line %q, want empty", smiles, title)
		}
		atoms, bonds := parseV2000(t, block)
		want, _ := m.Atoms()
		wantBonds, _ := m.Bonds()
		if len(atoms) != len(want) || len(bonds) != len(wantBonds) {
			t.Fatalf("%s: %d atoms and %d bonds, want %d and %d", smiles, len(atoms), len(bonds), len(want), len(wantBonds))
		}
		spread := 0.0
		for i, a := range atoms {
			if a.symbol != symbols[want[i].AtomicNum] || a.z != 0 {
				t.Errorf("%s: atom %d is %s at z %g, want %s at z 0", smiles, i+1, a.symbol, a.z, symbols[want[i].AtomicNum])
			}
			spread = max(spread, math.Hypot(a.x-atoms[0].x, a.y-atoms[0].y))
		}
		if spread < 1 {
			t.Errorf("%s: every atom within %g of the first: no layout", smiles, spread)
		}
		wedges := 0
		for i, b := range bonds {
			w := wantBonds[i]
			// A wedge may be reversed to start at its stereo centre.
			same := (b.begin == w.Begin+1 && b.end == w.End+1) || (b.begin == w.End+1 && b.end == w.Begin+1)
			if !same || b.order < 1 || b.order > 3 {
				t.Errorf("%s: bond %d is %d-%d of order %d, want %d-%d kekulised", smiles, i+1, b.begin, b.end, b.order, w.Begin+1, w.End+1)
				continue
			}
			p, q := atoms[b.begin-1], atoms[b.end-1]
			if d := math.Hypot(p.x-q.x, p.y-q.y); math.Abs(d-1.5) > 0.1 {
				t.Errorf("%s: bond %d is %.3f long, want RDKit's 1.5", smiles, i+1, d)
			}
			if b.stereo == 1 || b.stereo == 6 {
				wedges++
			}
		}
		if chiral := strings.Contains(smiles, "@"); chiral != (wedges == 1) {
			t.Errorf("%s: %d wedged bonds", smiles, wedges)
		}
	}
}

// TestMolBlock2DErrors: a molecule RDKit cannot kekulise (an unsanitised
// five-membered aromatic ring) is an error of the call, and a closed
// molecule one too, not an abort.
func TestMolBlock2DErrors(t *testing.T) {
	m, err := FromSmiles("c1cccc1", false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.MolBlock2D(); err == nil || !strings.Contains(err.Error(), "2D molfile") || !strings.Contains(err.Error(), "kekulize") {
		t.Errorf("unkekulisable ring: %v, want an error naming the call and kekulisation", err)
	}
	m.Close()
	if _, err := m.MolBlock2D(); err != errClosed {
		t.Errorf("closed molecule: %v", err)
	}
}
