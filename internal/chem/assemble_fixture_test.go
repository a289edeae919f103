package chem

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// assemblyRecord is one enumeration of testdata/chem/assembly_fixtures.json.gz:
// the candidates (SMILES, atom map and aroma score, in order) of node Node
// of molecule Smiles's tree, with its father Father (0: none) attached by
// the father's candidate FatherCand, and all of them or only the first.
type assemblyRecord struct {
	Smiles     string      `json:"smiles"`
	Node       int         `json:"node"`
	Father     int         `json:"father,omitempty"`
	FatherCand int         `json:"father_cand,omitempty"`
	First      bool        `json:"first,omitempty"`
	Cands      []Candidate `json:"cands"`
}

const assemblyFixtures = "assembly_fixtures.json.gz"

// assemblyEnumerations enumerates smiles's tree as the fixture records it:
// every node's candidates (all, then the first only), then, for every node
// that is not a leaf under each of its father's first two candidates (the
// calls of dfs_assemble and of the decoder), the same with the father
// attached. enum runs one enumeration.
func assemblyEnumerations(smiles string, enum func(o EnumOptions, n *Node, nbrs, prev []*Node, amap []AtomPair) ([]Candidate, error)) ([]assemblyRecord, error) {
	tr, err := Decompose(smiles)
	if err != nil {
		return nil, nil // the fixture holds the molecules that decompose
	}
	defer tr.Close()
	var out []assemblyRecord
	for _, fa := range tr.Nodes {
		for _, first := range []bool{false, true} {
			c, err := enum(EnumOptions{First: first}, fa, AssemblyOrder(fa.Neighbors), nil, nil)
			if err != nil {
				return nil, fmt.Errorf("node %d: %w", fa.ID, err)
			}
			out = append(out, assemblyRecord{Smiles: smiles, Node: fa.ID, First: first, Cands: c})
		}
	}
	for _, fa := range tr.Nodes {
		err := underFather(fa, out[2*(fa.ID-1)].Cands, func(k int, ch *Node, kids []*Node, amap []AtomPair) error {
			for _, first := range []bool{false, true} {
				got, err := enum(EnumOptions{First: first}, ch, AssemblyOrder(kids), []*Node{fa}, amap)
				if err != nil {
					return fmt.Errorf("node %d under %d: %w", ch.ID, fa.ID, err)
				}
				out = append(out, assemblyRecord{Smiles: smiles, Node: ch.ID, Father: fa.ID, FatherCand: k, First: first, Cands: got})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// underFather calls visit for every child ch of fa that is not a leaf,
// under each of fa's first two candidates faCands[k] (the calls of
// dfs_assemble and of the decoder): ch's other neighbours kids and the
// atom pairs amap that attach fa as ch's father.
func underFather(fa *Node, faCands []Candidate, visit func(k int, ch *Node, kids []*Node, amap []AtomPair) error) error {
	for _, ch := range fa.Neighbors {
		if ch.IsLeaf {
			continue
		}
		var kids []*Node
		for _, n := range ch.Neighbors {
			if n != fa {
				kids = append(kids, n)
			}
		}
		for k, c := range faCands[:min(2, len(faCands))] {
			var amap []AtomPair
			for _, p := range c.Amap {
				if p.Nei == ch.ID {
					amap = append(amap, AtomPair{Nei: fa.ID, CtrAtom: p.NeiAtom, NeiAtom: p.CtrAtom})
				}
			}
			if err := visit(k, ch, kids, amap); err != nil {
				return err
			}
		}
	}
	return nil
}

// fixtureMolecules are the molecules of the assembly fixture: every fifth
// of the tree fixtures.
func fixtureMolecules(t *testing.T) []string {
	var out []string
	for i, r := range readTreeFixtures(t, "tree_fixtures.json.gz") {
		if i%5 == 0 && r.Error == "" {
			out = append(out, r.Smiles)
		}
	}
	return out
}

// TestAssemblyFixtures: the candidates of every enumeration of the fixture
// (about 200 ZINC molecules' trees, with and without a father, all and
// first only), their order, atom maps and aroma scores, are the ones the
// code wrote before its enumeration was made cheaper (the authors' fixtures
// hold candidate SMILES of trees without a father only); with a memo shared
// by all molecules too. It checks every fourth molecule, or all with
// TLBO_CHEM_FULL=1 (about 40 s of CPU); TLBO_WRITE_ASSEMBLY_FIXTURES=1
// writes the fixture instead.
func TestAssemblyFixtures(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "chem", assemblyFixtures)
	plain := func(o EnumOptions, n *Node, nbrs, prev []*Node, amap []AtomPair) ([]Candidate, error) {
		return o.EnumAssemble(n, nbrs, prev, amap)
	}
	if os.Getenv("TLBO_WRITE_ASSEMBLY_FIXTURES") == "1" {
		writeAssemblyFixtures(t, path, plain)
		return
	}
	want := map[string][]assemblyRecord{}
	var order []string
	for _, r := range readAssemblyFixtures(t, path) {
		if want[r.Smiles] == nil {
			order = append(order, r.Smiles)
		}
		want[r.Smiles] = append(want[r.Smiles], r)
	}
	if len(order) < 150 {
		t.Fatalf("%d molecules in the fixture", len(order))
	}
	memo := NewAttachMemo()
	memoed := func(o EnumOptions, n *Node, nbrs, prev []*Node, amap []AtomPair) ([]Candidate, error) {
		o.Memo = memo
		return o.EnumAssemble(n, nbrs, prev, amap)
	}
	full := os.Getenv("TLBO_CHEM_FULL") == "1"
	bad := 0
	for i, s := range order {
		if !full && i%4 != 0 {
			continue
		}
		for _, e := range []struct {
			name string
			enum func(EnumOptions, *Node, []*Node, []*Node, []AtomPair) ([]Candidate, error)
		}{{"", plain}, {" with a memo", memoed}} {
			got, err := assemblyEnumerations(s, e.enum)
			if err != nil {
				t.Fatalf("%s%s: %v", s, e.name, err)
			}
			if diff := diffAssembly(got, want[s]); diff != "" {
				t.Errorf("%s%s: %s", s, e.name, diff)
				if bad++; bad > 10 {
					t.Fatal("too many differences")
				}
			}
		}
	}
}

// diffAssembly names the first enumeration where got differs from want.
func diffAssembly(got, want []assemblyRecord) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d enumerations, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if len(g.Cands) == 0 && len(w.Cands) == 0 {
			g.Cands, w.Cands = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("node %d (father %d, candidate %d, first %v): %s, want %s",
				w.Node, w.Father, w.FatherCand, w.First, jsonString(g.Cands), jsonString(w.Cands))
		}
	}
	return ""
}

func readAssemblyFixtures(t *testing.T, path string) []assemblyRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []assemblyRecord
	dec := json.NewDecoder(zr)
	for dec.More() {
		var r assemblyRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func writeAssemblyFixtures(t *testing.T, path string, enum func(EnumOptions, *Node, []*Node, []*Node, []AtomPair) ([]Candidate, error)) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	enc := json.NewEncoder(zw)
	n := 0
	for _, s := range fixtureMolecules(t) {
		recs, err := assemblyEnumerations(s, enum)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		for _, r := range recs {
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d enumerations to %s", n, path)
}
