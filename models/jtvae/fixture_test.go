package jtvae

import (
	"fmt"
	"math"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/torch"
)

// fixture is an npz file of testdata/jtvae/make_fixture.py by array name.
type fixture map[string]numpy.Array

func readFixture(t testing.TB, path string) fixture {
	t.Helper()
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{}
	for _, a := range arrays {
		f[a.Name] = a
	}
	return f
}

func (f fixture) ints(t testing.TB, name string) []int64 {
	t.Helper()
	v, ok := f[name].Data.([]int64)
	if !ok {
		t.Fatalf("fixture array %q is %T, want int64", name, f[name].Data)
	}
	return v
}

func (f fixture) floats(t testing.TB, name string) []float64 {
	t.Helper()
	v, err := f[name].Float64s()
	if err != nil {
		t.Fatalf("fixture array %q: %v", name, err)
	}
	return v
}

func (f fixture) float32s(t testing.TB, name string) []float32 {
	t.Helper()
	v, ok := f[name].Data.([]float32)
	if !ok {
		t.Fatalf("fixture array %q is %T, want float32", name, f[name].Data)
	}
	return v
}

func (f fixture) scalar(t testing.TB, name string) float64 { return f.floats(t, name)[0] }

func pairs(v []int64, lo, hi int64) [][2]int32 {
	out := make([][2]int32, 0, hi-lo)
	for k := lo; k < hi; k++ {
		out = append(out, [2]int32{int32(v[2*k]), int32(v[2*k+1])})
	}
	return out
}

// examples rebuilds the featurised molecules of a fixture.
func (f fixture) examples(t testing.TB) []Example {
	t.Helper()
	nodePtr, wid := f.ints(t, "node_ptr"), f.ints(t, "node_wid")
	nbrPtr, nbr := f.ints(t, "nbr_ptr"), f.ints(t, "nbr")
	atomPtr, atomFeat := f.ints(t, "atom_ptr"), f.float32s(t, "atom_feat")
	bondPtr, bondAtoms, bondFeat := f.ints(t, "bond_ptr"), f.ints(t, "bond_atoms"), f.float32s(t, "bond_feat")
	grpMol, grpNode, grpN, grpLabel := f.ints(t, "grp_mol"), f.ints(t, "grp_node"), f.ints(t, "grp_ncand"), f.ints(t, "grp_label")
	caPtr, caFeat := f.ints(t, "cand_atom_ptr"), f.float32s(t, "cand_atom_feat")
	cbPtr, cbAtoms, cbFeat := f.ints(t, "cand_bond_ptr"), f.ints(t, "cand_bond_atoms"), f.float32s(t, "cand_bond_feat")
	ciPtr, ci := f.ints(t, "cand_inj_ptr"), f.ints(t, "cand_inj")
	ex := make([]Example, len(nodePtr)-1)
	for i := range ex {
		var tr Tree
		for n := nodePtr[i]; n < nodePtr[i+1]; n++ {
			tr.Labels = append(tr.Labels, wid[n])
			var nb []int32
			for _, y := range nbr[nbrPtr[n]:nbrPtr[n+1]] {
				nb = append(nb, int32(y))
			}
			tr.Neighbors = append(tr.Neighbors, nb)
		}
		ex[i] = Example{Tree: tr, Graph: Graph{
			Atoms:        atomFeat[atomPtr[i]*AtomFeatures : atomPtr[i+1]*AtomFeatures],
			Bonds:        pairs(bondAtoms, bondPtr[i], bondPtr[i+1]),
			BondFeatures: bondFeat[bondPtr[i]*BondFeatures : bondPtr[i+1]*BondFeatures],
		}}
	}
	c := int64(0)
	for g := range grpMol {
		grp := Group{Node: int32(grpNode[g]), Label: int32(grpLabel[g])}
		for range grpN[g] {
			cand := Candidate{Graph: Graph{
				Atoms:        caFeat[caPtr[c]*CandAtomFeatures : caPtr[c+1]*CandAtomFeatures],
				Bonds:        pairs(cbAtoms, cbPtr[c], cbPtr[c+1]),
				BondFeatures: cbFeat[cbPtr[c]*CandBondFeatures : cbPtr[c+1]*CandBondFeatures],
			}}
			for k := ciPtr[c]; k < ciPtr[c+1]; k++ {
				cand.Injections = append(cand.Injections, [3]int32{int32(ci[3*k]), int32(ci[3*k+1]), int32(ci[3*k+2])})
			}
			grp.Candidates = append(grp.Candidates, cand)
			c++
		}
		ex[grpMol[g]].Assembly = append(ex[grpMol[g]].Assembly, grp)
	}
	return ex
}

// closeTo reports the first element of got that differs from want by more
// than tol relative to max(1, |want|).
func closeTo(got, want []float64, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			return fmt.Errorf("element %d: %.8g, want %.8g (diff %.3g)", i, got[i], want[i], d)
		}
	}
	return nil
}

func values(t testing.TB, x *torch.Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
