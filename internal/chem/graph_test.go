package chem

import (
	"reflect"
	"testing"
)

// editedAttach is local_attach made the way it was before molGraph: the
// centre copied for editing and the neighbours attached by RDKit calls.
func editedAttach(ctr *Node, neighbors, prev []*Node, amap []AtomPair) (*Mol, error) {
	m, err := ctr.Mol.CopyEdit()
	if err != nil {
		return nil, err
	}
	maps := map[int]map[int]int{}
	for _, n := range append(append([]*Node{}, prev...), neighbors...) {
		maps[n.ID] = map[int]int{}
	}
	for _, p := range amap {
		maps[p.Nei][p.NeiAtom] = p.CtrAtom
	}
	if err := attachMols(m, neighbors, prev, maps); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// sameMol reports how a and b differ: atoms, bonds (by index) or SMILES,
// non-canonical (atom and neighbour order) and canonical ("" if in none).
func sameMol(a, b *Mol) string {
	aa, err1 := a.Atoms()
	ba, err2 := b.Atoms()
	if err1 != nil || err2 != nil || !reflect.DeepEqual(aa, ba) {
		return "atoms"
	}
	ab, err1 := a.Bonds()
	bb, err2 := b.Bonds()
	if err1 != nil || err2 != nil || !reflect.DeepEqual(ab, bb) {
		return "bonds"
	}
	for _, o := range []SmilesOptions{{}, KekuleSmiles, DefaultSmiles} {
		as, err1 := a.SmilesWith(o)
		bs, err2 := b.SmilesWith(o)
		if err1 != nil || err2 != nil || as != bs {
			return "SMILES " + as + " and " + bs
		}
	}
	return ""
}

// TestMolGraph: local_attach's molecule built from its graph in one call is
// the molecule that editing a copy of the centre makes (same atoms, bonds,
// bond order and neighbour order), for every candidate of every node of
// tree-fixture molecules with their father attached (whose bonds replace
// the centre's: removed and added again); and no attachment the graph calls
// over-valent sanitises.
func TestMolGraph(t *testing.T) {
	recs := readTreeFixtures(t, "tree_fixtures.json.gz")
	built, overValent, replaced := 0, 0, 0
	check := func(n *Node, nbrs, prev []*Node, amap []AtomPair) {
		t.Helper()
		g, err := localAttach(n, nbrs, prev, amap)
		if err != nil {
			t.Fatal(err)
		}
		want, err := editedAttach(n, nbrs, prev, amap)
		if err != nil {
			t.Fatal(err)
		}
		defer want.Close()
		got, err := g.Build()
		if err != nil {
			t.Fatal(err)
		}
		defer got.Close()
		if d := sameMol(got, want); d != "" {
			t.Errorf("node %d, atom map %v: built and edited molecules differ in %s", n.ID, amap, d)
		}
		built++
		for i, b := range n.bonds {
			if g.bonds[i] != (graphBond{b.Begin, b.End, b.Type}) {
				replaced++ // a bond of the centre removed (the father's replaced it)
				break
			}
		}
		if g.overValent() {
			overValent++
			s, err := want.SmilesWith(KekuleSmiles)
			if _, ok := resanitized(s); err == nil && ok {
				t.Errorf("node %d, atom map %v: %s sanitises, but the graph is over-valent", n.ID, amap, s)
			}
		}
	}
	for i := 0; i < len(recs); i += 40 {
		tr, err := Decompose(recs[i].Smiles)
		if err != nil {
			continue
		}
		for _, n := range tr.Nodes {
			var singletons []int
			for _, nb := range n.Neighbors {
				if len(nb.atoms) == 1 {
					singletons = append(singletons, nb.ID)
				}
			}
			for _, nb := range n.Neighbors {
				for _, amap := range enumAttach(n, nb, nil, singletons) {
					check(n, []*Node{nb}, nil, amap)
				}
			}
		}
		_, err = assemblyEnumerations(recs[i].Smiles, func(o EnumOptions, n *Node, nbrs, prev []*Node, amap []AtomPair) ([]Candidate, error) {
			cands, err := o.EnumAssemble(n, nbrs, prev, amap)
			for _, c := range cands {
				check(n, nbrs, prev, c.Amap)
			}
			return cands, err
		})
		if err != nil {
			t.Fatal(err)
		}
		tr.Close()
	}
	t.Logf("%d attachments built, %d over-valent, %d with a bond replaced", built, overValent, replaced)
	if built < 1000 || overValent < 100 || replaced < 10 {
		t.Errorf("%d attachments built, %d over-valent, %d with a bond replaced: too few to tell", built, overValent, replaced)
	}
}

// TestMolGraphErrors: the graph refuses what RDKit's editing refuses.
func TestMolGraphErrors(t *testing.T) {
	g := &molGraph{}
	if _, err := g.AddAtom(6, 0, 1000); err == nil {
		t.Error("map number 1000 accepted")
	}
	a, _ := g.AddAtom(6, 0, 1)
	b, _ := g.AddAtom(8, 0, 0)
	if err := g.AddBond(a, 2, Single); err == nil {
		t.Error("bond to a missing atom accepted")
	}
	if err := g.AddBond(a, b, Double); err != nil {
		t.Fatal(err)
	}
	if err := g.AddBond(b, a, Single); err == nil {
		t.Error("second bond between two atoms accepted")
	}
	if err := g.SetAtomMap(b, -1); err == nil {
		t.Error("map number -1 accepted")
	}
	m, err := g.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if s, err := m.SmilesWith(SmilesOptions{}); err != nil || s != "[CH2:1]=O" {
		t.Errorf("built %q (%v), want [CH2:1]=O", s, err)
	}
	bad := &molGraph{atoms: []graphAtom{{6, 0, 0}}, bonds: []graphBond{{0, 3, Single}}}
	if m, err := bad.Build(); err == nil {
		m.Close()
		t.Error("built a bond to a missing atom")
	}
}
