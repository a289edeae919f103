package molecule

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// testVocab returns the path of the JT-VAE vocabulary shipped with the data
// (shared/data/zinc/jtvae_vocab.txt, which the fixtures were made with; the
// project reads data from there and does not commit it), skipping the test
// when no data directory is found.
func testVocab(t testing.TB) string {
	t.Helper()
	path, err := ShippedVocabPath("")
	if err != nil {
		t.Skipf("no data directory: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("the JT-VAE vocabulary is not in the data directory: %v", err)
	}
	return path
}

// fixtureExamples rebuilds the featurised molecules of a file of
// testdata/jtvae/make_fixture.py (the authors' tensorize), with their SMILES.
func fixtureExamples(t *testing.T, path string) ([]string, []jtvae.Example) {
	t.Helper()
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	f := map[string]any{}
	for _, a := range arrays {
		f[a.Name] = a.Data
	}
	ints := func(name string) []int64 {
		v, ok := f[name].([]int64)
		if !ok {
			t.Fatalf("%s: array %q is %T, want int64", path, name, f[name])
		}
		return v
	}
	floats := func(name string) []float32 {
		v, ok := f[name].([]float32)
		if !ok {
			t.Fatalf("%s: array %q is %T, want float32", path, name, f[name])
		}
		return v
	}
	pairs := func(v []int64, lo, hi int64) [][2]int32 {
		var out [][2]int32
		for k := lo; k < hi; k++ {
			out = append(out, [2]int32{int32(v[2*k]), int32(v[2*k+1])})
		}
		return out
	}
	smiles, ok := f["smiles"].([]string)
	if !ok {
		t.Fatalf("%s: no smiles", path)
	}
	nodePtr, wid, nbrPtr, nbr := ints("node_ptr"), ints("node_wid"), ints("nbr_ptr"), ints("nbr")
	atomPtr, atomFeat := ints("atom_ptr"), floats("atom_feat")
	bondPtr, bondAtoms, bondFeat := ints("bond_ptr"), ints("bond_atoms"), floats("bond_feat")
	grpMol, grpNode, grpN, grpLabel := ints("grp_mol"), ints("grp_node"), ints("grp_ncand"), ints("grp_label")
	caPtr, caFeat := ints("cand_atom_ptr"), floats("cand_atom_feat")
	cbPtr, cbAtoms, cbFeat := ints("cand_bond_ptr"), ints("cand_bond_atoms"), floats("cand_bond_feat")
	ciPtr, ci := ints("cand_inj_ptr"), ints("cand_inj")
	ex := make([]jtvae.Example, len(nodePtr)-1)
	for i := range ex {
		var tr jtvae.Tree
		for n := nodePtr[i]; n < nodePtr[i+1]; n++ {
			tr.Labels = append(tr.Labels, wid[n])
			nb := []int32{}
			for _, y := range nbr[nbrPtr[n]:nbrPtr[n+1]] {
				nb = append(nb, int32(y))
			}
			tr.Neighbors = append(tr.Neighbors, nb)
		}
		ex[i] = jtvae.Example{Tree: tr, Graph: jtvae.Graph{
			Atoms:        atomFeat[atomPtr[i]*jtvae.AtomFeatures : atomPtr[i+1]*jtvae.AtomFeatures],
			Bonds:        pairs(bondAtoms, bondPtr[i], bondPtr[i+1]),
			BondFeatures: bondFeat[bondPtr[i]*jtvae.BondFeatures : bondPtr[i+1]*jtvae.BondFeatures],
		}}
	}
	c := int64(0)
	for g := range grpMol {
		grp := jtvae.Group{Node: int32(grpNode[g]), Label: int32(grpLabel[g])}
		for range grpN[g] {
			cand := jtvae.Candidate{Graph: jtvae.Graph{
				Atoms:        caFeat[caPtr[c]*jtvae.CandAtomFeatures : caPtr[c+1]*jtvae.CandAtomFeatures],
				Bonds:        pairs(cbAtoms, cbPtr[c], cbPtr[c+1]),
				BondFeatures: cbFeat[cbPtr[c]*jtvae.CandBondFeatures : cbPtr[c+1]*jtvae.CandBondFeatures],
			}}
			for k := ciPtr[c]; k < ciPtr[c+1]; k++ {
				cand.Injections = append(cand.Injections, [3]int32{int32(ci[3*k]), int32(ci[3*k+1]), int32(ci[3*k+2])})
			}
			grp.Candidates = append(grp.Candidates, cand)
			c++
		}
		ex[grpMol[g]].Assembly = append(ex[grpMol[g]].Assembly, grp)
	}
	return smiles, ex
}

// diffExample names the first array in which got differs from want.
func diffExample(got, want jtvae.Example) error {
	switch {
	case !reflect.DeepEqual(got.Tree, want.Tree):
		return fmt.Errorf("tree %+v, want %+v", got.Tree, want.Tree)
	case !reflect.DeepEqual(got.Graph.Atoms, want.Graph.Atoms):
		return fmt.Errorf("atom features differ")
	case !reflect.DeepEqual(got.Graph.Bonds, want.Graph.Bonds):
		return fmt.Errorf("bonds %v, want %v", got.Graph.Bonds, want.Graph.Bonds)
	case !reflect.DeepEqual(got.Graph.BondFeatures, want.Graph.BondFeatures):
		return fmt.Errorf("bond features differ")
	case len(got.Assembly) != len(want.Assembly):
		return fmt.Errorf("%d assembly groups, want %d", len(got.Assembly), len(want.Assembly))
	}
	for g := range got.Assembly {
		a, b := got.Assembly[g], want.Assembly[g]
		if a.Node != b.Node || a.Label != b.Label || len(a.Candidates) != len(b.Candidates) {
			return fmt.Errorf("group %d: node %d label %d, %d candidates; want node %d label %d, %d candidates",
				g, a.Node, a.Label, len(a.Candidates), b.Node, b.Label, len(b.Candidates))
		}
		for k := range a.Candidates {
			ca, cb := a.Candidates[k], b.Candidates[k]
			switch {
			case !reflect.DeepEqual(ca.Atoms, cb.Atoms):
				return fmt.Errorf("group %d candidate %d: atom features differ", g, k)
			case !reflect.DeepEqual(ca.Bonds, cb.Bonds) || !reflect.DeepEqual(ca.BondFeatures, cb.BondFeatures):
				return fmt.Errorf("group %d candidate %d: bonds differ", g, k)
			case !reflect.DeepEqual(ca.Injections, cb.Injections):
				return fmt.Errorf("group %d candidate %d: injections %v, want %v", g, k, ca.Injections, cb.Injections)
			}
		}
	}
	return nil
}

// TestFeaturiseMatchesAuthors compares the featurisation of the fixtures'
// molecules (6 + 32 ZINC test molecules) with the authors' tensorize, array
// for array (exact).
func TestFeaturiseMatchesAuthors(t *testing.T) {
	vocab, err := ReadVocab(testVocab(t))
	if err != nil {
		t.Fatal(err)
	}
	fz := NewFeaturiser(vocab)
	for _, file := range []string{"parity.npz", "bench32.npz"} {
		smiles, want := fixtureExamples(t, "../../../testdata/jtvae/"+file)
		if len(smiles) != len(want) {
			t.Fatalf("%s: %d SMILES for %d molecules", file, len(smiles), len(want))
		}
		groups := 0
		for i, s := range smiles {
			got, err := fz.Featurise(s)
			if err != nil {
				t.Errorf("%s molecule %d %s: %v", file, i, s, err)
				continue
			}
			if err := diffExample(got, want[i]); err != nil {
				t.Errorf("%s molecule %d %s: %v", file, i, s, err)
			}
			groups += len(got.Assembly)
		}
		t.Logf("%s: %d molecules, %d assembly groups", file, len(smiles), groups)
	}
}

func TestFeaturiseBadInput(t *testing.T) {
	fz := NewFeaturiser(Vocab{"C", "CC"})
	if _, err := fz.Featurise("not a smiles"); err == nil {
		t.Error("bad SMILES: no error")
	}
	if _, err := fz.Featurise("c1ccccc1"); err == nil {
		t.Error("cluster outside the vocabulary: no error")
	}
	ex, err := fz.Featurise("CC")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Tree.Labels) != 1 || ex.Tree.Labels[0] != 1 || len(ex.Graph.Atoms) != 2*jtvae.AtomFeatures {
		t.Errorf("CC: %+v", ex)
	}
}

// TestFeaturiseOtherRDKitSpellings checks that a vocabulary written by
// another RDKit release (the shipped ZINC vocabulary: kekulé ring NH as [NH],
// other double-bond placements) still labels the clusters the linked RDKit
// writes, that an exact entry wins over a canonical match, and that a
// canonical form two entries share labels neither.
func TestFeaturiseOtherRDKitSpellings(t *testing.T) {
	labels := func(fz *Featuriser, smiles string) []int64 {
		t.Helper()
		ex, err := fz.Featurise(smiles)
		if err != nil {
			t.Fatalf("%s: %v", smiles, err)
		}
		return ex.Tree.Labels
	}
	old := NewFeaturiser(Vocab{"CN", "C1=C[NH]C=C1", "C1=C[NH]N=C1"})
	for smiles, want := range map[string][]int64{
		"c1cc[nH]c1": {1},    // pyrrole
		"Cn1cccc1":   {0, 1}, // N-methylpyrrole: the bond, then the ring
		"c1cn[nH]c1": {2},    // pyrazole
		"Cn1cccn1":   {0, 2},
	} {
		if got := labels(old, smiles); !slices.Equal(got, want) {
			t.Errorf("%s: labels %v, want %v", smiles, got, want)
		}
	}
	kekule := NewFeaturiser(Vocab{"C", "C1=CC=NN=C1"})
	if got, err := kekule.label("C1=CN=NC=C1"); err != nil || got != 1 {
		t.Errorf("pyridazine in another kekulé form: label %d, %v; want 1", got, err)
	}
	exact := NewFeaturiser(Vocab{"C1=C[NH]C=C1", "C1=CNC=C1"})
	if got := labels(exact, "c1cc[nH]c1"); !slices.Equal(got, []int64{1}) {
		t.Errorf("exact entry and alias: labels %v, want [1]", got)
	}
	shared := NewFeaturiser(Vocab{"C1=C[NH]C=C1", "[NH]1C=CC=C1"})
	if _, err := shared.Featurise("c1cc[nH]c1"); err == nil {
		t.Error("a form two entries share: no error")
	}
}
