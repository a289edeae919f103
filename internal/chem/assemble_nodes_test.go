package chem

import (
	"slices"
	"testing"
)

// TestAssembleNodes: assembling only the inner nodes (those that are not
// leaves, which featurisation reads) gives each of them the candidates of a
// full Assemble, in the same order, and leaves the leaves' Cands unset, on
// every eighth tree-fixture molecule.
func TestAssembleNodes(t *testing.T) {
	inner := func(n *Node) bool { return !n.IsLeaf }
	var compared, multi, leaves int
	for i, r := range readTreeFixtures(t, "tree_fixtures.json.gz") {
		if i%8 != 0 || r.Error != "" {
			continue
		}
		full, err := assembledTree(r.Smiles, (*Tree).Assemble)
		if err != nil {
			t.Fatalf("%s: full assembly: %v", r.Smiles, err)
		}
		part, err := assembledTree(r.Smiles, func(tr *Tree) error { return tr.AssembleNodes(inner) })
		if err != nil {
			full.Close()
			t.Fatalf("%s: inner assembly: %v", r.Smiles, err)
		}
		for k, n := range part.Nodes {
			want := full.Nodes[k].Cands
			switch {
			case n.IsLeaf && n.Cands != nil:
				t.Errorf("%s: leaf node %d was assembled: %q", r.Smiles, n.ID, n.Cands)
			case n.IsLeaf:
				leaves += min(len(want), 1)
			case !slices.Equal(n.Cands, want):
				t.Errorf("%s: node %d candidates %q, full Assemble's %q", r.Smiles, n.ID, n.Cands, want)
			default:
				compared++
				if len(want) > 1 {
					multi++
				}
			}
		}
		full.Close()
		part.Close()
	}
	t.Logf("compared %d inner nodes (%d with several candidates); %d leaves with candidates left unset", compared, multi, leaves)
	// The comparison must cover nodes with a choice, and leaves that a full
	// Assemble does give candidates (else unset ones would prove nothing).
	if compared < 100 || multi < 20 || leaves < 100 {
		t.Errorf("compared %d inner nodes (%d with several candidates) and %d leaves with candidates: too few", compared, multi, leaves)
	}
}

// assembledTree decomposes and recovers smiles and assembles it with assemble;
// the caller closes the tree.
func assembledTree(smiles string, assemble func(*Tree) error) (*Tree, error) {
	tr, err := Decompose(smiles)
	if err != nil {
		return nil, err
	}
	if err := tr.Recover(); err == nil {
		err = assemble(tr)
	}
	if err != nil {
		tr.Close()
		return nil, err
	}
	return tr, nil
}
