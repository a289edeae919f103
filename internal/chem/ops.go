package chem

// #include <stdlib.h>
// #include "chem.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// call runs a native operation that reports a status and error string.
func (m *Mol) call(op string, f func(msg **C.char) C.int) error {
	if m == nil || m.p == nil {
		return errClosed
	}
	var msg *C.char
	return takeError(f(&msg), msg, op)
}

// Kekulize replaces aromatic bonds by alternating single and double ones.
func (m *Mol) Kekulize(clearAromaticFlags bool) error {
	return m.call("kekulize", func(msg **C.char) C.int { return C.tlbo_chem_kekulize(m.p, cbool(clearAromaticFlags), msg) })
}

// Sanitize runs RDKit's full sanitisation (valence, aromaticity, rings, ...).
func (m *Mol) Sanitize() error {
	return m.call("sanitize", func(msg **C.char) C.int { return C.tlbo_chem_sanitize(m.p, msg) })
}

// SymmSSSR returns the symmetrised smallest set of smallest rings, each ring's
// atoms in RDKit's order.
func (m *Mol) SymmSSSR() ([][]int, error) {
	return m.rings("symmetrised SSSR", func(a, s **C.int, n *C.int, msg **C.char) C.int {
		return C.tlbo_chem_symm_sssr(m.p, a, s, n, msg)
	})
}

// AtomRings returns the rings of the molecule's ring information (the SSSR that
// sanitisation found).
func (m *Mol) AtomRings() ([][]int, error) {
	return m.rings("atom rings", func(a, s **C.int, n *C.int, msg **C.char) C.int {
		return C.tlbo_chem_atom_rings(m.p, a, s, n, msg)
	})
}

func (m *Mol) rings(op string, f func(a, s **C.int, n *C.int, msg **C.char) C.int) ([][]int, error) {
	var atoms, sizes *C.int
	var n C.int
	if err := m.call(op, func(msg **C.char) C.int { return f(&atoms, &sizes, &n, msg) }); err != nil {
		return nil, err
	}
	defer C.tlbo_chem_free(unsafe.Pointer(atoms))
	defer C.tlbo_chem_free(unsafe.Pointer(sizes))
	sz := unsafe.Slice(sizes, int(n))
	total := 0
	for _, s := range sz {
		total += int(s)
	}
	flat := unsafe.Slice(atoms, total)
	out := make([][]int, len(sz))
	k := 0
	for i, s := range sz {
		r := make([]int, int(s))
		for j := range r {
			r[j] = int(flat[k])
			k++
		}
		out[i] = r
	}
	return out, nil
}

// AssignStereo runs RDKit's (legacy) stereo perception and returns the number of
// atoms with a CIP label or, when flagPossible, marked as possible stereo centres:
// the length of Python's FindMolChiralCenters(mol, force, includeUnassigned=flagPossible).
func (m *Mol) AssignStereo(clean, force, flagPossible bool) (int, error) {
	var n C.int
	err := m.call("assign stereochemistry", func(msg **C.char) C.int {
		return C.tlbo_chem_assign_stereo(m.p, cbool(clean), cbool(force), cbool(flagPossible), &n, msg)
	})
	return int(n), err
}

// CrippenLogP returns Wildman-Crippen logP (RDKit's MolLogP, hydrogens included).
func (m *Mol) CrippenLogP() (float64, error) {
	var v C.double
	err := m.call("Crippen logP", func(msg **C.char) C.int { return C.tlbo_chem_crippen_logp(m.p, &v, msg) })
	return float64(v), err
}

// SpiroBridgehead returns the numbers of spiro and bridgehead atoms.
func (m *Mol) SpiroBridgehead() (spiro, bridgehead int, err error) {
	var s, b C.int
	err = m.call("spiro and bridgehead atoms", func(msg **C.char) C.int { return C.tlbo_chem_spiro_bridgehead(m.p, &s, &b, msg) })
	return int(s), int(b), err
}

// MorganCounts returns the Morgan fingerprint with counts (RDKit's
// GetMorganFingerprint(mol, radius)): environment ids, ascending, and their counts.
func (m *Mol) MorganCounts(radius int) ([]uint32, []int, error) {
	fp, err := m.Morgan(radius, MorganOptions{})
	return fp.IDs, fp.Counts, err
}

// DrawPNG draws the molecule (RDKit's MolDraw2DCairo) as a PNG image.
func (m *Mol) DrawPNG(width, height int) ([]byte, error) {
	if width <= 0 || height <= 0 {
		return nil, fmt.Errorf("chem: draw: bad image size %dx%d", width, height)
	}
	var buf *C.uchar
	var n C.size_t
	err := m.call("draw", func(msg **C.char) C.int {
		return C.tlbo_chem_draw_png(m.p, C.int(width), C.int(height), &buf, &n, msg)
	})
	if err != nil {
		return nil, err
	}
	defer C.tlbo_chem_free(unsafe.Pointer(buf))
	return C.GoBytes(unsafe.Pointer(buf), C.int(n)), nil
}

// MolBlock2D returns an MDL molfile of the molecule laid out in 2D by
// RDKit (compute2DCoords in its canonical orientation, every z 0),
// kekulised and with its stereo, as a record of an SD file holds it: V2000,
// or V3000 for a molecule V2000 cannot hold (over 999 atoms or bonds). Its
// title line is empty. The molecule itself is unchanged; one RDKit cannot
// kekulise is an error.
func (m *Mol) MolBlock2D() (string, error) {
	var out *C.char
	if err := m.call("2D molfile", func(msg **C.char) C.int { return C.tlbo_chem_molblock_2d(m.p, &out, msg) }); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// NumAtoms returns the number of atoms (0 for a closed molecule).
func (m *Mol) NumAtoms() int {
	if m == nil || m.p == nil {
		return 0
	}
	return int(C.tlbo_chem_num_atoms(m.p))
}

// NumBonds returns the number of bonds (0 for a closed molecule).
func (m *Mol) NumBonds() int {
	if m == nil || m.p == nil {
		return 0
	}
	return int(C.tlbo_chem_num_bonds(m.p))
}

// Atoms returns every atom's fields, by atom index.
func (m *Mol) Atoms() ([]Atom, error) {
	n := m.NumAtoms()
	buf := make([]C.tlbo_chem_atom, n+1)
	if err := m.call("atoms", func(msg **C.char) C.int { return C.tlbo_chem_atoms(m.p, &buf[0], msg) }); err != nil {
		return nil, err
	}
	out := make([]Atom, n)
	for i := range out {
		a := &buf[i]
		out[i] = Atom{AtomicNum: int(a.atomic_num), FormalCharge: int(a.formal_charge), TotalHs: int(a.total_hs),
			Degree: int(a.degree), IsAromatic: a.is_aromatic != 0, InRing: int(a.in_ring), MapNum: int(a.map_num),
			ChiralTag: int(a.chiral_tag), Isotope: int(a.isotope)}
	}
	return out, nil
}

// Bonds returns every bond's fields, by bond index.
func (m *Mol) Bonds() ([]Bond, error) {
	n := m.NumBonds()
	buf := make([]C.tlbo_chem_bond, n+1)
	if err := m.call("bonds", func(msg **C.char) C.int { return C.tlbo_chem_bonds(m.p, &buf[0], msg) }); err != nil {
		return nil, err
	}
	out := make([]Bond, n)
	for i := range out {
		b := &buf[i]
		out[i] = Bond{Begin: int(b.begin), End: int(b.end), Type: BondType(b._type), IsAromatic: b.is_aromatic != 0,
			InRing: int(b.in_ring), Stereo: int(b.stereo), Order: float64(b.order)}
	}
	return out, nil
}

// BondBetween returns the index of the bond between atoms a and b, or -1.
func (m *Mol) BondBetween(a, b int) int {
	if m == nil || m.p == nil {
		return -1
	}
	return int(C.tlbo_chem_bond_between(m.p, C.int(a), C.int(b)))
}

// AddAtom appends an atom and returns its index.
func (m *Mol) AddAtom(atomicNum, formalCharge, mapNum int) (int, error) {
	var idx C.int
	err := m.call("add atom", func(msg **C.char) C.int {
		return C.tlbo_chem_add_atom(m.p, C.int(atomicNum), C.int(formalCharge), C.int(mapNum), &idx, msg)
	})
	return int(idx), err
}

// AddBond adds a bond between atoms a and b.
func (m *Mol) AddBond(a, b int, t BondType) error {
	return m.call("add bond", func(msg **C.char) C.int { return C.tlbo_chem_add_bond(m.p, C.int(a), C.int(b), C.int(t), msg) })
}

// RemoveBond removes the bond between atoms a and b (nothing if there is none).
func (m *Mol) RemoveBond(a, b int) error {
	return m.call("remove bond", func(msg **C.char) C.int { return C.tlbo_chem_remove_bond(m.p, C.int(a), C.int(b), msg) })
}

// SetAtomMap sets one atom's map number; a number outside RDKit's 0..999 is
// an error.
func (m *Mol) SetAtomMap(atom, num int) error {
	return m.call("set atom map", func(msg **C.char) C.int { return C.tlbo_chem_set_atom_map(m.p, C.int(atom), C.int(num), msg) })
}

// SetAllAtomMaps sets every atom's map number (0 clears them); a number
// outside RDKit's 0..999 is an error.
func (m *Mol) SetAllAtomMaps(num int) error {
	return m.call("set atom maps", func(msg **C.char) C.int { return C.tlbo_chem_set_all_atom_maps(m.p, C.int(num), msg) })
}
