package chem

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// What the authors' decoder (JTNNVAE.decode, jtnn_dec.can_assemble) needs
// of tree nodes that come from a vocabulary rather than a molecule: nodes
// with a settable atom map, candidate enumeration with the decoding
// vocabulary's aromatic rings, and attachment onto a growing molecule.

// NewNode returns a node made from a vocabulary cluster (MolTreeNode(smiles)
// of the authors' decoder): the kekulized cluster, no atom map, no
// neighbours. Close releases its molecule.
func NewNode(smiles string, id int) (*Node, error) {
	m, err := KekulizedSmiles(smiles)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", smiles, err)
	}
	n := &Node{ID: id, Cluster: -1, Smiles: smiles, Mol: m}
	if n.atoms, err = m.Atoms(); err == nil {
		n.bonds, err = m.Bonds()
	}
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("cluster %q: %w", smiles, err)
	}
	return n, nil
}

// Clone returns a node of n's cluster with ID id, its own copy of the
// molecule (atom maps included) and no neighbours: NewNode(n.Smiles, id)
// without parsing and kekulizing the cluster again. Close releases it.
func (n *Node) Clone(id int) (*Node, error) {
	m, err := n.Mol.Copy()
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", n.Smiles, err)
	}
	return &Node{ID: id, Cluster: n.Cluster, Smiles: n.Smiles, Mol: m, atoms: slices.Clone(n.atoms), bonds: slices.Clone(n.bonds)}, nil
}

// Close releases the node's molecule.
func (n *Node) Close() {
	if n != nil {
		n.Mol.Close()
	}
}

// NumAtoms returns the number of atoms of the node's cluster.
func (n *Node) NumAtoms() int { return len(n.atoms) }

// SetAtomMap sets the map number of every atom of the cluster
// (set_atommap(node.mol, num)); enumeration and attachment copy it.
func (n *Node) SetAtomMap(num int) error {
	if n.Mol == nil || n.Mol.p == nil {
		return errClosed
	}
	if err := n.Mol.SetAllAtomMaps(num); err != nil {
		return err
	}
	for i := range n.atoms {
		n.atoms[i].MapNum = num
	}
	return nil
}

// AtomMaps maps, for each node ID, the node's atom indices to the atoms of
// the molecule being assembled (the authors' global_amap).
type AtomMaps map[int]map[int]int

// Clone returns a deep copy (copy.deepcopy(global_amap)).
func (a AtomMaps) Clone() AtomMaps {
	out := make(AtomMaps, len(a))
	for k, v := range a {
		out[k] = maps.Clone(v)
	}
	return out
}

// Attach adds the children's missing atoms and bonds to m, recording where
// they went in amaps (attach_mols(cur_mol, children, [], global_amap)).
func Attach(m *Mol, children []*Node, amaps AtomMaps) error {
	for _, n := range children {
		if amaps[n.ID] == nil {
			amaps[n.ID] = map[int]int{}
		}
	}
	return attachMols(m, children, nil, amaps)
}

// AromaRings are the kekulé six- and five-ring clusters check_aroma counts.
type AromaRings struct {
	Benzynes, Penzynes []string
}

// DefaultAroma are the class defaults of the authors' Vocab, in force until
// a Vocab is built (data preprocessing).
var DefaultAroma = AromaRings{Benzynes: Benzynes, Penzynes: Penzynes}

// VocabAroma returns the lists that building the authors' Vocab sets (and
// so their decoder uses): the vocabulary's clusters with at least two
// double bonds and six (five) atoms, plus C1=CCNCC1 (C1=NCCN1, C1=NNCC1).
func VocabAroma(vocab []string) (AromaRings, error) {
	var r AromaRings
	for _, s := range vocab {
		if strings.Count(s, "=") < 2 {
			continue
		}
		m, err := Smiles(s)
		if err != nil {
			return r, fmt.Errorf("vocabulary cluster %q: %w", s, err)
		}
		switch m.NumAtoms() {
		case 6:
			r.Benzynes = append(r.Benzynes, s)
		case 5:
			r.Penzynes = append(r.Penzynes, s)
		}
		m.Close()
	}
	r.Benzynes = append(r.Benzynes, "C1=CCNCC1")
	r.Penzynes = append(r.Penzynes, "C1=NCCN1", "C1=NNCC1")
	return r, nil
}

var elementSymbols = strings.Fields(`H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn
	Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe`)

// ElementSymbol returns the symbol of an element up to xenon (RDKit's
// GetSymbol), and "#n" for atomic number n beyond.
func ElementSymbol(atomicNum int) string {
	if atomicNum >= 1 && atomicNum <= len(elementSymbols) {
		return elementSymbols[atomicNum-1]
	}
	return fmt.Sprintf("#%d", atomicNum)
}
