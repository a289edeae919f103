package chem

// #include <stdlib.h>
// #include "chem.h"
import "C"

import (
	"fmt"
	"slices"
)

// molEditor is what attachMols edits: an RDKit molecule (Mol) or, while
// candidates are enumerated, a molGraph that becomes one in a single native
// call.
type molEditor interface {
	AddAtom(atomicNum, formalCharge, mapNum int) (int, error)
	SetAtomMap(atom, num int) error
	BondBetween(a, b int) int
	AddBond(a, b int, t BondType) error
	RemoveBond(a, b int) error
}

// graphAtom and graphBond are what copy_edit_mol keeps of atoms and bonds.
type graphAtom struct{ num, charge, mapNum int }
type graphBond struct {
	begin, end int
	typ        BondType
}

// molGraph is an unsanitised molecule held in Go: the atoms and bonds, in
// RDKit's order, that the same edits make of a Mol (removing a bond keeps
// the others in order, adding one appends it). Build makes the Mol in one
// native call, and overValent tells many attachments that cannot sanitise
// without RDKit.
type molGraph struct {
	atoms []graphAtom
	bonds []graphBond
}

// editGraph is ctr.Mol.CopyEdit() as a graph, read from the node's atom and
// bond fields (which the node keeps equal to its molecule's).
func editGraph(ctr *Node) *molGraph {
	g := &molGraph{atoms: make([]graphAtom, len(ctr.atoms), len(ctr.atoms)+8), bonds: make([]graphBond, len(ctr.bonds), len(ctr.bonds)+8)}
	for i, a := range ctr.atoms {
		g.atoms[i] = graphAtom{a.AtomicNum, a.FormalCharge, a.MapNum}
	}
	for i, b := range ctr.bonds {
		g.bonds[i] = graphBond{b.Begin, b.End, b.Type}
	}
	return g
}

// checkMapNum refuses a map number that RDKit's setAtomMapNum refuses.
func checkMapNum(op string, num int) error {
	if num < 0 || num > 999 {
		return &Error{Op: op, Msg: fmt.Sprintf("atom map number out of range [0..1000]: %d", num)}
	}
	return nil
}

func (g *molGraph) checkAtom(op string, a int) error {
	if a < 0 || a >= len(g.atoms) {
		return &Error{Op: op, Msg: fmt.Sprintf("atom index %d out of range", a)}
	}
	return nil
}

// AddAtom appends an atom and returns its index.
func (g *molGraph) AddAtom(atomicNum, formalCharge, mapNum int) (int, error) {
	if err := checkMapNum("add atom", mapNum); err != nil {
		return 0, err
	}
	g.atoms = append(g.atoms, graphAtom{atomicNum, formalCharge, mapNum})
	return len(g.atoms) - 1, nil
}

// SetAtomMap sets one atom's map number.
func (g *molGraph) SetAtomMap(atom, num int) error {
	if err := g.checkAtom("set atom map", atom); err != nil {
		return err
	}
	if err := checkMapNum("set atom map", num); err != nil {
		return err
	}
	g.atoms[atom].mapNum = num
	return nil
}

// BondBetween returns the index of the bond between atoms a and b, or -1.
func (g *molGraph) BondBetween(a, b int) int {
	return slices.IndexFunc(g.bonds, func(o graphBond) bool {
		return (o.begin == a && o.end == b) || (o.begin == b && o.end == a)
	})
}

// AddBond appends a bond between atoms a and b.
func (g *molGraph) AddBond(a, b int, t BondType) error {
	if err := g.checkAtom("add bond", a); err != nil {
		return err
	}
	if err := g.checkAtom("add bond", b); err != nil {
		return err
	}
	if g.BondBetween(a, b) >= 0 || a == b {
		return &Error{Op: "add bond", Msg: fmt.Sprintf("bond between atoms %d and %d already exists", a, b)}
	}
	g.bonds = append(g.bonds, graphBond{a, b, t})
	return nil
}

// RemoveBond removes the bond between atoms a and b (nothing if there is
// none), keeping the others in order.
func (g *molGraph) RemoveBond(a, b int) error {
	if err := g.checkAtom("remove bond", a); err != nil {
		return err
	}
	if err := g.checkAtom("remove bond", b); err != nil {
		return err
	}
	if k := g.BondBetween(a, b); k >= 0 {
		g.bonds = slices.Delete(g.bonds, k, k+1)
	}
	return nil
}

// relabel numbers the atom maps by labels (nil: as they are).
func (g *molGraph) relabel(labels map[int]int) {
	for i := range g.atoms {
		g.atoms[i].mapNum = label(labels, g.atoms[i].mapNum)
	}
}

// maxNeutralValence is the largest valence RDKit (2022.09's periodic table)
// permits a neutral atom of these elements: C, N, O, F, Cl and Br have a
// single allowed valence.
var maxNeutralValence = map[int]int{6: 4, 7: 3, 8: 2, 9: 1, 17: 1, 35: 1}

// overValent reports that an atom of these elements, uncharged, has bonds
// whose orders add up to more than its valence: then RDKit cannot sanitise
// the molecule, nor one read back from its SMILES (written kekulé from a
// molecule with no aromatic bond, it has the same bonds, and bracket
// hydrogens only add to the valence), so sanitize(local_attach(...)) is
// None without asking RDKit.
func (g *molGraph) overValent() bool {
	var buf [64]int
	val := buf[:0]
	if len(g.atoms) > len(buf) {
		val = make([]int, 0, len(g.atoms))
	}
	val = val[:len(g.atoms)]
	clear(val)
	for _, b := range g.bonds {
		var o int
		switch b.typ {
		case Single:
			o = 1
		case Double:
			o = 2
		case Triple:
			o = 3
		default:
			return false // aromatic or other: not the kekulé clusters this is sure about
		}
		val[b.begin] += o
		val[b.end] += o
	}
	for i, a := range g.atoms {
		if v, ok := maxNeutralValence[a.num]; ok && a.charge == 0 && val[i] > v {
			return true
		}
	}
	return false
}

// Build returns the graph as an unsanitised Mol: the one that New, then
// AddAtom and AddBond in the graph's order make, in one native call.
func (g *molGraph) Build() (*Mol, error) {
	atoms := make([]C.int, 0, 3*len(g.atoms)+1)
	for _, a := range g.atoms {
		atoms = append(atoms, C.int(a.num), C.int(a.charge), C.int(a.mapNum))
	}
	bonds := make([]C.int, 0, 3*len(g.bonds)+1)
	for _, b := range g.bonds {
		bonds = append(bonds, C.int(b.begin), C.int(b.end), C.int(b.typ))
	}
	atoms, bonds = append(atoms, 0), append(bonds, 0) // a first element to point at when empty
	var p *C.tlbo_mol
	var msg *C.char
	st := C.tlbo_chem_from_graph(&atoms[0], C.int(len(g.atoms)), &bonds[0], C.int(len(g.bonds)), &p, &msg)
	if err := takeError(st, msg, "build molecule"); err != nil {
		return nil, err
	}
	return wrap(p), nil
}
