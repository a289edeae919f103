package chem

import (
	"math"
	"testing"
)

// Values from Debian's python3-rdkit 2022.09.3 (Descriptors.MolWt, TPSA, ...).
func TestDescriptors(t *testing.T) {
	m, err := Smiles("CC(=O)Oc1ccccc1C(=O)O") // aspirin
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	want := map[string]float64{
		MolWt: 180.15899999999996, TPSA: 63.6, NumHBD: 1, NumHBA: 3, NumRotatableBondsStrict: 2,
		NumRings: 1, NumAromaticRings: 1, NumHeavyAtoms: 13, MolLogP: 1.3101,
	}
	for name, w := range want {
		v, err := m.Descriptor(name)
		if err != nil || math.Abs(v-w) > 1e-9*math.Max(1, math.Abs(w)) {
			t.Errorf("%s: %v (%v), want %v", name, v, err, w)
		}
	}
	if _, err := m.Descriptor("nope"); err == nil {
		t.Error("unknown descriptor accepted")
	}
}

func TestSmartsMatches(t *testing.T) {
	m, _ := Smiles("OCCO")
	defer m.Close()
	q, err := Smarts("[OX2H]C")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ms, err := m.Matches(q, DefaultMatch)
	if err != nil || len(ms) != 2 || ms[0][0] != 0 || ms[0][1] != 1 || ms[1][0] != 3 || ms[1][1] != 2 {
		t.Errorf("matches %v (%v)", ms, err)
	}
	if ok, _ := m.HasMatch(q); !ok {
		t.Error("HasMatch false")
	}
	if _, err := Smarts("[C"); err == nil {
		t.Error("bad SMARTS accepted")
	}
	d, err := m.DeleteSubstructs(MustSmarts("O"))
	if err != nil || d.NumAtoms() != 2 {
		t.Errorf("DeleteSubstructs: %d atoms (%v)", d.NumAtoms(), err)
	}
}

func TestHydrogensRingsDistances(t *testing.T) {
	m, _ := Smiles("c1ccccc1O")
	defer m.Close()
	h, err := m.AddHs()
	if err != nil || h.NumAtoms() != 13 {
		t.Fatalf("AddHs: %d atoms (%v)", h.NumAtoms(), err)
	}
	r, err := h.RemoveHs()
	if err != nil || r.NumAtoms() != 7 {
		t.Fatalf("RemoveHs: %d atoms (%v)", r.NumAtoms(), err)
	}
	counts, err := m.ElementCounts()
	if err != nil || counts[6] != 6 || counts[8] != 1 || counts[1] != 6 {
		t.Errorf("element counts %v (%v)", counts, err)
	}
	rings, err := m.SSSR()
	if err != nil || len(rings) != 1 || len(rings[0]) != 6 {
		t.Errorf("SSSR %v (%v)", rings, err)
	}
	d, err := m.DistanceMatrix(false)
	if err != nil || len(d) != 49 || d[0*7+3] != 3 || d[6*7+2] != 4 {
		t.Errorf("distances %v (%v)", d, err)
	}
	bo, _ := m.DistanceMatrix(true)
	if math.Abs(bo[0*7+1]-1/1.5) > 1e-15 {
		t.Errorf("aromatic bond-order distance %v", bo[1])
	}
}

func TestFingerprintsTanimoto(t *testing.T) {
	a, _ := Smiles("CCO")
	b, _ := Smiles("CCN")
	defer a.Close()
	defer b.Close()
	fa, err := a.Morgan(2, MorganOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if Tanimoto(fa, fa) != 1 {
		t.Error("self similarity not 1")
	}
	fb, _ := b.Morgan(2, MorganOptions{})
	if s := Tanimoto(fa, fb); s <= 0 || s >= 1 {
		t.Errorf("Tanimoto %v", s)
	}
	ff, err := a.Morgan(2, MorganOptions{Features: true})
	if err != nil || ff.Total() != fa.Total() {
		t.Errorf("feature Morgan %v (%v)", ff, err)
	}
	ap, err := a.AtomPairs(1, 10)
	if err != nil || ap.Total() != 3 {
		t.Errorf("atom pairs %v (%v)", ap, err)
	}
	if Tanimoto(Counts{}, Counts{}) != 0 {
		t.Error("empty Tanimoto not 0")
	}
}
