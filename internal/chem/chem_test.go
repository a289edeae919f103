package chem

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"C1CC", "c1cccc1", "Xx", "C(C)(C)(C)(C)C", "((("} {
		m, err := Smiles(s)
		if err == nil {
			m.Close()
			t.Errorf("%q parsed", s)
			continue
		}
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%q: error %T, want *chem.Error", s, err)
		}
	}
	// Unsanitised parsing accepts a valence error.
	m, err := FromSmiles("C(C)(C)(C)(C)C", false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Sanitize(); err == nil {
		t.Error("sanitised a five-valent carbon")
	}
}

func TestClosedMol(t *testing.T) {
	m, err := Smiles("CCO")
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	m.Close()
	if _, err := m.SmilesWith(DefaultSmiles); err == nil {
		t.Error("closed molecule wrote SMILES")
	}
	if m.NumAtoms() != 0 || m.BondBetween(0, 1) != -1 {
		t.Error("closed molecule has atoms")
	}
}

func TestSmilesRoundTrip(t *testing.T) {
	for _, c := range []struct{ in, canon, kekule, flat string }{
		{"c1ccccc1O", "Oc1ccccc1", "OC1=CC=CC=C1", "Oc1ccccc1"},
		{"C[C@H](N)C(=O)O", "C[C@H](N)C(=O)O", "C[C@H](N)C(=O)O", "CC(N)C(=O)O"},
		{"[NH3+]CC([O-])=O", "[NH3+]CC(=O)[O-]", "[NH3+]CC(=O)[O-]", "[NH3+]CC(=O)[O-]"},
	} {
		m, err := Smiles(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, o := range []SmilesOptions{DefaultSmiles, KekuleSmiles, {Canonical: true}} {
			s, err := m.SmilesWith(o)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		if want := []string{c.canon, c.kekule, c.flat}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", c.in, got, want)
		}
		m.Close()
	}
}

func TestEditing(t *testing.T) {
	m, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i, z := range []int{6, 6, 8} {
		idx, err := m.AddAtom(z, 0, 0)
		if err != nil || idx != i {
			t.Fatalf("AddAtom: %d, %v", idx, err)
		}
	}
	if err := m.AddBond(0, 1, Single); err != nil {
		t.Fatal(err)
	}
	if err := m.AddBond(1, 2, Double); err != nil {
		t.Fatal(err)
	}
	if err := m.AddBond(1, 7, Single); err == nil {
		t.Error("bond to a missing atom")
	}
	if err := m.Sanitize(); err != nil {
		t.Fatal(err)
	}
	if s := m.String(); s != "CC=O" {
		t.Errorf("built %s, want CC=O", s)
	}
	if err := m.RemoveBond(1, 2); err != nil {
		t.Fatal(err)
	}
	if m.BondBetween(1, 2) != -1 || m.NumBonds() != 1 {
		t.Error("bond not removed")
	}
	if err := m.SetAtomMap(0, 5); err != nil {
		t.Fatal(err)
	}
	atoms, err := m.Atoms()
	if err != nil || atoms[0].MapNum != 5 || atoms[2].AtomicNum != 8 {
		t.Errorf("atoms %+v, %v", atoms, err)
	}
}

func TestRingsAndDescriptors(t *testing.T) {
	m, err := Smiles("C1CC2CCC1CC2") // bicyclo[2.2.2]octane: 3 rings (sanitisation symmetrises them)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sym, err := m.SymmSSSR()
	if err != nil || len(sym) != 3 {
		t.Errorf("symmetrised SSSR %v, %v", sym, err)
	}
	rings, err := m.AtomRings()
	if err != nil || len(rings) != 3 {
		t.Errorf("rings %v, %v", rings, err)
	}
	spiro, bridge, err := m.SpiroBridgehead()
	if err != nil || spiro != 0 || bridge != 2 {
		t.Errorf("spiro %d bridgehead %d, %v", spiro, bridge, err)
	}
	ids, counts, err := m.MorganCounts(2)
	if err != nil || len(ids) == 0 || len(ids) != len(counts) || !slices.IsSorted(ids) {
		t.Errorf("Morgan %v %v, %v", ids, counts, err)
	}
	png, err := m.DrawPNG(200, 150)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("PNG: %d bytes, %v", len(png), err)
	}
	if _, err := m.DrawPNG(0, 10); err == nil {
		t.Error("drew a 0-wide image")
	}
}

// TestCycleBasis: networkx 2.8 cycle_basis on the same graphs (neighbours ascending).
func TestCycleBasis(t *testing.T) {
	for _, c := range []struct {
		smiles string
		want   [][]int
	}{
		// python3 -c "import networkx as nx; from rdkit import Chem; from rdkit.Chem import rdmolops;
		//   print(nx.cycle_basis(nx.Graph(rdmolops.GetAdjacencyMatrix(Chem.MolFromSmiles(s)))))"
		{"C1CC2CCC1CC2", [][]int{{1, 2, 7, 6, 5, 0}, {4, 3, 2, 7, 6, 5}}},
		{"CCO", nil},
		{"C1CC1.C1CC1", [][]int{{1, 2, 0}, {4, 5, 3}}},
	} {
		m, err := Smiles(c.smiles)
		if err != nil {
			t.Fatal(err)
		}
		adj, err := m.Neighbours()
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := CycleBasis(adj)
		if !slices.EqualFunc(got, c.want, slices.Equal[[]int]) {
			t.Errorf("%s: %v, want %v", c.smiles, got, c.want)
		}
	}
}
