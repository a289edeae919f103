package chem

// #include <stdlib.h>
// #include "chem.h"
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Counts is a sparse count fingerprint (RDKit's SparseIntVect): ids ascending,
// each with its non-zero count.
type Counts struct {
	IDs    []uint32
	Counts []int
}

// Total is the sum of the counts.
func (c Counts) Total() int {
	t := 0
	for _, v := range c.Counts {
		t += v
	}
	return t
}

// Tanimoto is RDKit's TanimotoSimilarity of two count vectors:
// sum min / (sum a + sum b - sum min), 0 when that denominator is below 1e-6.
// Every sum is an integer held exactly in a float64, so the result is exact.
func Tanimoto(a, b Counts) float64 {
	var sa, sb, both float64
	for _, v := range a.Counts {
		sa += float64(abs(v))
	}
	for _, v := range b.Counts {
		sb += float64(abs(v))
	}
	i, j := 0, 0
	for i < len(a.IDs) && j < len(b.IDs) {
		switch {
		case a.IDs[i] < b.IDs[j]:
			i++
		case a.IDs[i] > b.IDs[j]:
			j++
		default:
			x, y := abs(a.Counts[i]), abs(b.Counts[j])
			if y < x {
				x = y
			}
			both += float64(x)
			i++
			j++
		}
	}
	denom := sa + sb - both
	if denom < 1e-6 && denom > -1e-6 {
		return 0
	}
	return both / denom
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// MorganOptions are GetMorganFingerprint's options besides the radius.
type MorganOptions struct {
	Features  bool // useFeatures: RDKit's feature invariants (FCFP) instead of connectivity ones (ECFP)
	Chirality bool // useChirality
}

// Morgan returns the Morgan fingerprint with counts, RDKit's
// GetMorganFingerprint(mol, radius, useFeatures=o.Features, useChirality=o.Chirality)
// (bond types used, redundant environments dropped).
func (m *Mol) Morgan(radius int, o MorganOptions) (Counts, error) {
	return m.counts("Morgan fingerprint", func(ids **C.uint32_t, counts **C.int, n *C.int, msg **C.char) C.int {
		return C.tlbo_chem_morgan_counts(m.p, C.int(radius), cbool(o.Features), cbool(o.Chirality), ids, counts, n, msg)
	})
}

// AtomPairs returns the atom-pair fingerprint with counts, RDKit's
// GetAtomPairFingerprint(mol, minLength, maxLength) (topological distances, no chirality).
func (m *Mol) AtomPairs(minLength, maxLength int) (Counts, error) {
	return m.counts("atom-pair fingerprint", func(ids **C.uint32_t, counts **C.int, n *C.int, msg **C.char) C.int {
		return C.tlbo_chem_atom_pair_counts(m.p, C.int(minLength), C.int(maxLength), 0, ids, counts, n, msg)
	})
}

func (m *Mol) counts(op string, f func(ids **C.uint32_t, counts **C.int, n *C.int, msg **C.char) C.int) (Counts, error) {
	var ids *C.uint32_t
	var counts *C.int
	var n C.int
	if err := m.call(op, func(msg **C.char) C.int { return f(&ids, &counts, &n, msg) }); err != nil {
		return Counts{}, err
	}
	defer C.tlbo_chem_free(unsafe.Pointer(ids))
	defer C.tlbo_chem_free(unsafe.Pointer(counts))
	out := Counts{IDs: make([]uint32, int(n)), Counts: make([]int, int(n))}
	for i, v := range unsafe.Slice(ids, int(n)) {
		out.IDs[i] = uint32(v)
	}
	for i, v := range unsafe.Slice(counts, int(n)) {
		out.Counts[i] = int(v)
	}
	return out, nil
}

// Descriptor names of Mol.Descriptor, each RDKit's C++ function of that name.
const (
	MolWt                   = "amw"                           // Descriptors.MolWt: average MW, hydrogens included
	HeavyAtomMolWt          = "heavy_amw"                     // Descriptors.HeavyAtomMolWt
	ExactMolWt              = "exact_mw"                      // Descriptors.ExactMolWt
	TPSA                    = "tpsa"                          // MolSurf.TPSA: CalcTPSA, S and P not included
	MolLogP                 = "crippen_logp"                  // Crippen.MolLogP
	MolMR                   = "crippen_mr"                    // Crippen.MolMR
	NumHBD                  = "num_hbd"                       // rdMolDescriptors.CalcNumHBD (Lipinski.NumHDonors)
	NumHBA                  = "num_hba"                       // rdMolDescriptors.CalcNumHBA (Lipinski.NumHAcceptors)
	LipinskiHBD             = "lipinski_hbd"                  // CalcNumLipinskiHBD
	LipinskiHBA             = "lipinski_hba"                  // CalcNumLipinskiHBA
	NumRotatableBonds       = "num_rotatable_bonds"           // CalcNumRotatableBonds(mol): the default (Strict)
	NumRotatableBondsStrict = "num_rotatable_bonds_strict"    // CalcNumRotatableBonds(mol, Strict)
	NumRotatableBondsLoose  = "num_rotatable_bonds_nonstrict" // CalcNumRotatableBonds(mol, NonStrict)
	NumRings                = "num_rings"                     // CalcNumRings (the SSSR's size)
	NumAromaticRings        = "num_aromatic_rings"            // CalcNumAromaticRings
	NumHeavyAtoms           = "num_heavy_atoms"               // CalcNumHeavyAtoms
)

// Descriptor returns one of RDKit's C++ descriptors by name (the constants above).
func (m *Mol) Descriptor(name string) (float64, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var v C.double
	err := m.call("descriptor "+name, func(msg **C.char) C.int { return C.tlbo_chem_descriptor(m.p, cs, &v, msg) })
	return float64(v), err
}

// Query is a compiled SMARTS pattern. Unlike a Mol, a Query may be matched
// from several goroutines at once (RDKit is built with thread-safe substructure
// matching); Close it only when no match is running.
type Query struct {
	m      *Mol
	smarts string
}

// Smarts compiles a SMARTS pattern (Chem.MolFromSmarts).
func Smarts(smarts string) (*Query, error) {
	cs := C.CString(smarts)
	defer C.free(unsafe.Pointer(cs))
	var p *C.tlbo_mol
	var msg *C.char
	if err := takeError(C.tlbo_chem_from_smarts(cs, &p, &msg), msg, "parse SMARTS "+quote(smarts)); err != nil {
		return nil, err
	}
	return &Query{m: wrap(p), smarts: smarts}, nil
}

// MustSmarts is Smarts for patterns fixed in the source; it panics on a bad one.
func MustSmarts(smarts string) *Query {
	q, err := Smarts(smarts)
	if err != nil {
		panic(err)
	}
	return q
}

// String returns the pattern as given.
func (q *Query) String() string { return q.smarts }

// NumAtoms is the number of query atoms.
func (q *Query) NumAtoms() int { return q.m.NumAtoms() }

// Close releases the query.
func (q *Query) Close() { q.m.Close() }

// MatchOptions are SubstructMatch's parameters; the zero value is not
// RDKit's default: use DefaultMatch.
type MatchOptions struct {
	Uniquify   bool
	Chirality  bool
	MaxMatches int
}

// DefaultMatch is Mol.GetSubstructMatches' default: uniquified, no chirality, at most 1000.
var DefaultMatch = MatchOptions{Uniquify: true, MaxMatches: 1000}

// Matches returns the substructure matches of q in m, each the m atoms matched
// by q's atoms in q's order.
func (m *Mol) Matches(q *Query, o MatchOptions) ([][]int, error) {
	if q == nil || q.m == nil || q.m.p == nil {
		return nil, errClosed
	}
	var atoms *C.int
	var n, size C.int
	err := m.call("substructure match "+quote(q.smarts), func(msg **C.char) C.int {
		return C.tlbo_chem_substruct_matches(m.p, q.m.p, cbool(o.Uniquify), cbool(o.Chirality), C.int(o.MaxMatches), &atoms, &n, &size, msg)
	})
	runtime.KeepAlive(q)
	if err != nil {
		return nil, err
	}
	defer C.tlbo_chem_free(unsafe.Pointer(atoms))
	flat := unsafe.Slice(atoms, int(n)*int(size))
	out := make([][]int, int(n))
	for i := range out {
		row := make([]int, int(size))
		for j := range row {
			row[j] = int(flat[i*int(size)+j])
		}
		out[i] = row
	}
	return out, nil
}

// CountMatches is len(mol.GetSubstructMatches(q)) (uniquified, at most 1000).
func (m *Mol) CountMatches(q *Query) (int, error) {
	ms, err := m.Matches(q, DefaultMatch)
	return len(ms), err
}

// HasMatch is mol.HasSubstructMatch(q).
func (m *Mol) HasMatch(q *Query) (bool, error) {
	ms, err := m.Matches(q, MatchOptions{Uniquify: true, MaxMatches: 1})
	return len(ms) > 0, err
}

// DeleteSubstructs returns a copy of m without the atoms of any match of q
// (Chem.DeleteSubstructs(mol, q)).
func (m *Mol) DeleteSubstructs(q *Query) (*Mol, error) {
	if q == nil || q.m == nil || q.m.p == nil {
		return nil, errClosed
	}
	out, err := m.derive("delete substructures", func(out **C.tlbo_mol, msg **C.char) C.int {
		return C.tlbo_chem_delete_substructs(m.p, q.m.p, out, msg)
	})
	runtime.KeepAlive(q)
	return out, err
}

// AddHs returns a copy with explicit hydrogen atoms (Chem.AddHs).
func (m *Mol) AddHs() (*Mol, error) {
	return m.derive("add hydrogens", func(out **C.tlbo_mol, msg **C.char) C.int { return C.tlbo_chem_add_hs(m.p, out, msg) })
}

// RemoveHs returns a copy without explicit hydrogen atoms (Chem.RemoveHs, sanitised).
func (m *Mol) RemoveHs() (*Mol, error) {
	return m.derive("remove hydrogens", func(out **C.tlbo_mol, msg **C.char) C.int { return C.tlbo_chem_remove_hs(m.p, out, msg) })
}

// SSSR finds the smallest set of smallest rings afresh (Chem.GetSSSR).
func (m *Mol) SSSR() ([][]int, error) {
	return m.rings("SSSR", func(a, s **C.int, n *C.int, msg **C.char) C.int {
		return C.tlbo_chem_sssr(m.p, a, s, n, msg)
	})
}

// DistanceMatrix returns Chem.GetDistanceMatrix(mol, useBO): shortest path
// lengths between atoms (bond lengths 1, or 1/bond order with useBO; 1e8 between
// disconnected atoms), row-major, NumAtoms() squared.
func (m *Mol) DistanceMatrix(useBO bool) ([]float64, error) {
	n := m.NumAtoms()
	out := make([]float64, n*n+1)
	err := m.call("distance matrix", func(msg **C.char) C.int {
		return C.tlbo_chem_distance_matrix(m.p, cbool(useBO), (*C.double)(unsafe.Pointer(&out[0])), msg)
	})
	if err != nil {
		return nil, err
	}
	return out[:n*n], nil
}

// ElementCounts counts the atoms of each atomic number, hydrogens included
// (explicit H atoms and the implicit and explicit H counts of the others, as
// Chem.AddHs would make them atoms).
func (m *Mol) ElementCounts() (map[int]int, error) {
	atoms, err := m.Atoms()
	if err != nil {
		return nil, err
	}
	out := map[int]int{}
	for i, a := range atoms {
		if a.TotalHs < 0 {
			return nil, fmt.Errorf("chem: element counts: atom %d has no hydrogen count (unsanitised molecule)", i)
		}
		out[a.AtomicNum]++
		out[1] += a.TotalHs
	}
	return out, nil
}
