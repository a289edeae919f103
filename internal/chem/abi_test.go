package chem

import (
	"strings"
	"testing"
)

// TestAtomMapOutOfRange: an atom map number outside RDKit's 0..999 is an
// error of the call, not an abort of the program. RDKit's setAtomMapNum
// throws Invar::Invariant for it, which once escaped the C ABI through
// tlbo_chem_set_all_atom_maps (the one editing call outside guard) and
// called std::terminate: a junction tree of more than 999 nodes did it.
func TestAtomMapOutOfRange(t *testing.T) {
	m, err := Smiles("CCO")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const want = "atom map number out of range"
	for _, num := range []int{1000, -1} {
		if err := m.SetAllAtomMaps(num); err == nil || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "set atom maps") || strings.Contains(err.Error(), "\n") {
			t.Errorf("SetAllAtomMaps(%d): %v, want one line naming the call and %q", num, err, want)
		}
		if err := m.SetAtomMap(1, num); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SetAtomMap(1, %d): %v, want %q", num, err, want)
		}
	}
	if _, err := m.AddAtom(6, 0, 1000); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("AddAtom with map number 1000: %v, want %q", err, want)
	}
	// The molecule is still whole (the refused atom not added) and usable.
	if err := m.SetAllAtomMaps(999); err != nil {
		t.Fatal(err)
	}
	atoms, err := m.Atoms()
	if err != nil || len(atoms) != 3 || atoms[0].MapNum != 999 || atoms[2].MapNum != 999 {
		t.Errorf("atoms after the refused calls: %+v, %v", atoms, err)
	}
}

// TestDecomposeManyNodes: the tree of a molecule with more than 999 nodes
// (334 butanes: three bond clusters each, the middle one no leaf) needs an
// atom map number over 999 for a node that is not a leaf: an error naming
// the node, where it once aborted the program.
func TestDecomposeManyNodes(t *testing.T) {
	smiles := strings.TrimSuffix(strings.Repeat("CCCC.", 334), ".")
	tr, err := Decompose(smiles)
	if err == nil {
		tr.Close()
		t.Fatal("decomposed a tree of 1,002 nodes")
	}
	if msg := err.Error(); !strings.Contains(msg, "atom map number out of range") || !strings.Contains(msg, "node 10") {
		t.Errorf("error %q: want the node and RDKit's reason", msg)
	}
}
