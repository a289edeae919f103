// Package chem is RDKit for tlbo-native, through the plain-C ABI of native/chem:
// molecules as handles (Mol, closed with Close), SMILES, rings, atom and bond
// fields, editing, stereo, Crippen logP, Morgan fingerprints, drawing and 2D
// molfiles (MolBlock2D); RDKit's descriptors by name (Descriptor), SMARTS
// queries (Query, Matches), hydrogens, distance matrices, count fingerprints
// (Morgan with feature invariants, atom pairs) and their Tanimoto similarity
// for the molecule objectives; and, on top of those, the junction tree of
// JT-VAE (Decompose), its attachment candidates (Candidates) and assembly
// (Attach).
//
// A Mol is not safe for concurrent use; distinct Mols may be used from distinct
// goroutines.
package chem

// #include <stdlib.h>
// #include "chem.h"
import "C"

import (
	"errors"
	"runtime"
	"unsafe"
)

// BondType is RDKit's Bond::BondType.
type BondType int

// The bond types JT-VAE meets.
const (
	Single   BondType = 1
	Double   BondType = 2
	Triple   BondType = 3
	Aromatic BondType = 12
)

// Atom holds one atom's fields. TotalHs, InRing are -1 where RDKit has not
// computed them (unsanitised molecules).
type Atom struct {
	AtomicNum    int
	FormalCharge int
	TotalHs      int
	Degree       int
	IsAromatic   bool
	InRing       int
	MapNum       int
	ChiralTag    int
	Isotope      int
}

// Bond holds one bond's fields; Order is its valence contribution (1.5 aromatic).
type Bond struct {
	Begin, End int
	Type       BondType
	IsAromatic bool
	InRing     int
	Stereo     int
	Order      float64
}

// Mol is an RDKit molecule (an RWMol). Close releases it.
type Mol struct {
	p *C.tlbo_mol
}

var errClosed = errors.New("chem: molecule is closed")

func wrap(p *C.tlbo_mol) *Mol {
	m := &Mol{p: p}
	runtime.SetFinalizer(m, (*Mol).Close)
	return m
}

// Close releases the native molecule; it is safe to call twice.
func (m *Mol) Close() {
	if m == nil || m.p == nil {
		return
	}
	C.tlbo_chem_mol_free(m.p)
	m.p = nil
	runtime.SetFinalizer(m, nil)
}

// FromSmiles parses a SMILES string, sanitising the molecule when sanitize is set.
// A SMILES that RDKit rejects is an error.
func FromSmiles(smiles string, sanitize bool) (*Mol, error) {
	cs := C.CString(smiles)
	defer C.free(unsafe.Pointer(cs))
	var p *C.tlbo_mol
	var msg *C.char
	if err := takeError(C.tlbo_chem_from_smiles(cs, cbool(sanitize), &p, &msg), msg, "parse SMILES "+quote(smiles)); err != nil {
		return nil, err
	}
	return wrap(p), nil
}

// Smiles parses and sanitises a SMILES string (RDKit's MolFromSmiles).
func Smiles(smiles string) (*Mol, error) { return FromSmiles(smiles, true) }

func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return "\"" + s + "\""
}

// New returns an empty molecule to edit.
func New() (*Mol, error) {
	var p *C.tlbo_mol
	var msg *C.char
	if err := takeError(C.tlbo_chem_new(&p, &msg), msg, "new molecule"); err != nil {
		return nil, err
	}
	return wrap(p), nil
}

// Copy returns a deep copy.
func (m *Mol) Copy() (*Mol, error) {
	return m.derive("copy", func(out **C.tlbo_mol, msg **C.char) C.int { return C.tlbo_chem_copy(m.p, out, msg) })
}

// CopyEdit returns an unsanitised copy keeping only elements, formal charges,
// atom maps and bond types (JT-VAE's copy_edit_mol).
func (m *Mol) CopyEdit() (*Mol, error) {
	return m.derive("copy for editing", func(out **C.tlbo_mol, msg **C.char) C.int { return C.tlbo_chem_copy_edit(m.p, out, msg) })
}

// derive runs a native operation that makes a new molecule from m.
func (m *Mol) derive(op string, f func(out **C.tlbo_mol, msg **C.char) C.int) (*Mol, error) {
	var p *C.tlbo_mol
	if err := m.call(op, func(msg **C.char) C.int { return f(&p, msg) }); err != nil {
		return nil, err
	}
	return wrap(p), nil
}

// SmilesOptions selects how SMILES are written. The zero value is RDKit's
// non-canonical, non-isomeric SMILES; DefaultSmiles is RDKit's default.
type SmilesOptions struct {
	Isomeric, Kekule, Canonical bool
}

// DefaultSmiles is RDKit's MolToSmiles default: isomeric and canonical.
var DefaultSmiles = SmilesOptions{Isomeric: true, Canonical: true}

// KekuleSmiles is JT-VAE's get_smiles: isomeric, canonical, kekulé.
var KekuleSmiles = SmilesOptions{Isomeric: true, Kekule: true, Canonical: true}

// SmilesWith writes the molecule as SMILES.
func (m *Mol) SmilesWith(o SmilesOptions) (string, error) {
	if m.p == nil {
		return "", errClosed
	}
	var out, msg *C.char
	if err := takeError(C.tlbo_chem_to_smiles(m.p, cbool(o.Isomeric), cbool(o.Kekule), cbool(o.Canonical), &out, &msg), msg, "write SMILES"); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// String returns the canonical isomeric SMILES, or the error text.
func (m *Mol) String() string {
	s, err := m.SmilesWith(DefaultSmiles)
	if err != nil {
		return err.Error()
	}
	return s
}

// FragmentSmiles writes the fragment made of the given atoms as SMILES.
func (m *Mol) FragmentSmiles(atoms []int, o SmilesOptions) (string, error) {
	if m.p == nil {
		return "", errClosed
	}
	ca := cints(atoms)
	var ptr *C.int
	if len(ca) > 0 {
		ptr = &ca[0]
	}
	var out, msg *C.char
	st := C.tlbo_chem_fragment_smiles(m.p, ptr, C.int(len(ca)), cbool(o.Isomeric), cbool(o.Kekule), cbool(o.Canonical), &out, &msg)
	if err := takeError(st, msg, "write fragment SMILES"); err != nil {
		return "", err
	}
	return takeString(out), nil
}

// Fragments splits the molecule into its connected pieces.
func (m *Mol) Fragments() ([]*Mol, error) {
	if m.p == nil {
		return nil, errClosed
	}
	var arr **C.tlbo_mol
	var n C.int
	var msg *C.char
	if err := takeError(C.tlbo_chem_fragments(m.p, &arr, &n, &msg), msg, "fragments"); err != nil {
		return nil, err
	}
	defer C.tlbo_chem_free(unsafe.Pointer(arr))
	ps := unsafe.Slice(arr, int(n))
	out := make([]*Mol, len(ps))
	for i, p := range ps {
		out[i] = wrap(p)
	}
	return out, nil
}

func cints(v []int) []C.int {
	out := make([]C.int, len(v))
	for i, x := range v {
		out[i] = C.int(x)
	}
	return out
}
