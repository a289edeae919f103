package molecule

import (
	"fmt"
	"slices"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// The JT-VAE featurisation of the authors' chem_data.tensorize and their MPN
// and JTMPN feature functions (testdata/jtvae/make_fixture.py's featurise is
// its ground truth, array for array).

// elements is the authors' ELEM_LIST by atomic number: position in the
// one-hot block; every other element is "unknown", the last position.
var elements = map[int]int{
	6: 0, 7: 1, 8: 2, 16: 3, 9: 4, 14: 5, 15: 6, 17: 7, 35: 8, 12: 9, 11: 10, 20: 11,
	26: 12, 13: 13, 53: 14, 5: 15, 19: 16, 34: 17, 30: 18, 1: 19, 29: 20, 25: 21,
}

const unknownElement = 22

// formalCharges is the order of the formal-charge one-hot block; a charge not
// listed takes the last position (0), as onek_encoding_unk does.
var formalCharges = []int{-1, -2, 1, 2, 0}

// Featuriser turns SMILES into the JT-VAE's examples over one vocabulary.
type Featuriser struct {
	vocab Vocab
	index map[string]int
	// byForm labels a cluster by its canonical SMILES (chem.Canonical) where
	// its kekulé SMILES is not an entry; forms that several entries share
	// are left out, so a label is never guessed.
	byForm map[string]int
}

// NewFeaturiser indexes a cluster vocabulary. A cluster is labelled by its
// kekulé SMILES and, failing that, by its canonical SMILES: a vocabulary made
// by another RDKit release spells some clusters differently from the linked
// one. The shipped ZINC vocabulary writes kekulé ring NH as [NH]
// ("C1=C[NH]C=C1", where RDKit 2022.09 writes "C1=CNC=C1") and places some
// rings' double bonds elsewhere ("C1=CC=NN=C1" for "C1=CN=NC=C1"); by the
// exact entries alone a quarter of ZINC would have a cluster outside it.
func NewFeaturiser(v Vocab) *Featuriser {
	f := &Featuriser{vocab: v, index: make(map[string]int, len(v)), byForm: make(map[string]int, len(v))}
	shared := map[string]bool{}
	for i, s := range v {
		f.index[s] = i
		form, err := chem.Canonical(s)
		if err != nil || shared[form] {
			continue // an entry the linked RDKit cannot read is never a cluster either
		}
		if _, dup := f.byForm[form]; dup {
			delete(f.byForm, form)
			shared[form] = true
			continue
		}
		f.byForm[form] = i
	}
	return f
}

// label returns the vocabulary label of a cluster's kekulé SMILES.
func (f *Featuriser) label(smiles string) (int, error) {
	if i, ok := f.index[smiles]; ok {
		return i, nil
	}
	if form, err := chem.Canonical(smiles); err == nil {
		if i, ok := f.byForm[form]; ok {
			return i, nil
		}
	}
	return 0, fmt.Errorf("cluster %q is not in the vocabulary", smiles)
}

// Featurise is NewFeaturiser(v).Featurise(smiles).
func Featurise(smiles string, v Vocab) (jtvae.Example, error) {
	return NewFeaturiser(v).Featurise(smiles)
}

// Featurise builds the example of one molecule: its junction tree (MolTree,
// root first, the authors' adjacency order), the graph of the kekulized
// molecule and the assembly groups (every node that is not a leaf and has
// more than one candidate, the true attachment added when the enumeration
// missed it). A molecule over the size limits (limits.go) is an error.
func (f *Featuriser) Featurise(smiles string) (jtvae.Example, error) {
	ex, t, err := f.encoderExample(smiles)
	if err != nil {
		return ex, err
	}
	defer t.Close()
	if err := t.Recover(); err != nil {
		return ex, fmt.Errorf("featurise %q: recover: %w", smiles, err)
	}
	if err := t.AssembleNodes(assembled); err != nil {
		return ex, fmt.Errorf("featurise %q: assemble: %w", smiles, err)
	}
	if ex.Assembly, err = assemblyGroups(t); err != nil {
		return ex, fmt.Errorf("featurise %q: %w", smiles, err)
	}
	return ex, nil
}

// FeaturiseEncoder builds what the JT-VAE's encoder reads of a molecule:
// the junction tree and the graph of Featurise, without the assembly
// groups (a batch of such examples encodes as theirs, jtvae.Collate). The
// recovery and the assembly it leaves out take most of Featurise's time.
func (f *Featuriser) FeaturiseEncoder(smiles string) (jtvae.Example, error) {
	ex, t, err := f.encoderExample(smiles)
	if err == nil {
		t.Close()
	}
	return ex, err
}

// encoderExample returns a molecule's example with its tree and graph,
// and its decomposition, for the caller to close (nil on error).
func (f *Featuriser) encoderExample(smiles string) (jtvae.Example, *chem.Tree, error) {
	ex := jtvae.Example{Vocab: f.vocab, Smiles: smiles}
	if err := checkSize(smiles); err != nil {
		return ex, nil, fmt.Errorf("featurise %s: %w", quote(smiles), err)
	}
	t, err := chem.Decompose(smiles)
	if err != nil {
		return ex, nil, err
	}
	if ex.Graph, err = molGraph(t.Mol); err == nil {
		ex.Tree, err = f.tree(t)
	}
	if err != nil {
		t.Close()
		return ex, nil, fmt.Errorf("featurise %q: %w", smiles, err)
	}
	return ex, t, nil
}

// tree returns the vocabulary labels and adjacency of the tree's nodes.
func (f *Featuriser) tree(t *chem.Tree) (jtvae.Tree, error) {
	tr := jtvae.Tree{Labels: make([]int64, len(t.Nodes)), Neighbors: make([][]int32, len(t.Nodes))}
	for k, n := range t.Nodes {
		wid, err := f.label(n.Smiles)
		if err != nil {
			return tr, err
		}
		tr.Labels[k] = int64(wid)
		tr.Neighbors[k] = make([]int32, len(n.Neighbors))
		for j, nb := range n.Neighbors {
			tr.Neighbors[k][j] = int32(nb.ID - 1)
		}
	}
	return tr, nil
}

// assembled selects the nodes whose candidates Featurise enumerates: those
// assemblyGroups reads, the nodes that are not leaves (as the authors'
// JTMPN tensorize). Skipping the leaves saves their enumeration (about a
// tenth of the assembly's time) and changes no example; a molecule whose
// only failing enumeration is at a leaf now featurises, where a full
// Assemble failed (no enumeration failed, at a leaf or not, on the 37,316
// recovered trees of 39,000 ZINC molecules drawn at random).
func assembled(n *chem.Node) bool { return !n.IsLeaf }

// assemblyGroups returns the candidate graphs of every node the assembly
// loss scores (of the nodes assembled selects, whose Cands must be set).
func assemblyGroups(t *chem.Tree) ([]jtvae.Group, error) {
	var groups []jtvae.Group
	for k, n := range t.Nodes {
		if !assembled(n) {
			continue
		}
		cands := n.Cands
		if !slices.Contains(cands, n.Label) {
			cands = append(slices.Clone(cands), n.Label)
		}
		if len(cands) == 1 {
			continue
		}
		g := jtvae.Group{Node: int32(k), Label: int32(slices.Index(cands, n.Label))}
		adjacent := func(x, y int) bool { return slices.Contains(t.Nodes[x].Neighbors, t.Nodes[y]) }
		for _, s := range cands {
			c, err := candidate(s, len(t.Nodes), adjacent)
			if err != nil {
				return nil, fmt.Errorf("node %d candidate %q: %w", n.ID, s, err)
			}
			g.Candidates = append(g.Candidates, c)
		}
		groups = append(groups, g)
	}
	return groups, nil
}

// candidate featurises one attachment (JTMPN's tensorize): the kekulized
// candidate's 35/5 features and, for each bond between atoms of two
// tree nodes (atom map = node ID, of a tree of n nodes), the tree messages
// between them that exist: x -> y where linked(x, y), by node index (node x
// lists y among its neighbours; both ways in a molecule's tree).
func candidate(smiles string, n int, linked func(x, y int) bool) (jtvae.Candidate, error) {
	var c jtvae.Candidate
	m, err := chem.KekulizedSmiles(smiles)
	if err != nil {
		return c, err
	}
	defer m.Close()
	atoms, err := m.Atoms()
	if err != nil {
		return c, err
	}
	bonds, err := m.Bonds()
	if err != nil {
		return c, err
	}
	c.Atoms = make([]float32, 0, len(atoms)*jtvae.CandAtomFeatures)
	for _, a := range atoms {
		c.Atoms = appendAtom(c.Atoms, a, false)
	}
	c.BondFeatures = make([]float32, 0, len(bonds)*jtvae.CandBondFeatures)
	for _, b := range bonds {
		c.Bonds = append(c.Bonds, [2]int32{int32(b.Begin), int32(b.End)})
		c.BondFeatures = appendBond(c.BondFeatures, b, false)
		xn, yn := atoms[b.Begin].MapNum, atoms[b.End].MapNum
		if xn < 1 || yn < 1 || xn == yn || xn > n || yn > n {
			continue
		}
		if linked(xn-1, yn-1) {
			c.Injections = append(c.Injections, [3]int32{int32(b.End), int32(xn - 1), int32(yn - 1)})
		}
		if linked(yn-1, xn-1) {
			c.Injections = append(c.Injections, [3]int32{int32(b.Begin), int32(yn - 1), int32(xn - 1)})
		}
	}
	return c, nil
}

// molGraph featurises the kekulized molecule with MPN's 39/11 features.
func molGraph(m *chem.Mol) (jtvae.Graph, error) {
	var g jtvae.Graph
	atoms, err := m.Atoms()
	if err != nil {
		return g, err
	}
	bonds, err := m.Bonds()
	if err != nil {
		return g, err
	}
	g.Atoms = make([]float32, 0, len(atoms)*jtvae.AtomFeatures)
	for _, a := range atoms {
		g.Atoms = appendAtom(g.Atoms, a, true)
	}
	g.BondFeatures = make([]float32, 0, len(bonds)*jtvae.BondFeatures)
	for _, b := range bonds {
		g.Bonds = append(g.Bonds, [2]int32{int32(b.Begin), int32(b.End)})
		g.BondFeatures = appendBond(g.BondFeatures, b, true)
	}
	return g, nil
}

// appendAtom appends an atom's features: element (23), degree (6), formal
// charge (5), with mpn the chiral tag (4), and aromaticity (1).
func appendAtom(dst []float32, a chem.Atom, mpn bool) []float32 {
	el, ok := elements[a.AtomicNum]
	if !ok {
		el = unknownElement
	}
	dst = oneHot(dst, el, len(elements)+1)
	dst = oneHot(dst, min(max(a.Degree, 0), 5), 6)
	charge := slices.Index(formalCharges, a.FormalCharge)
	if charge < 0 {
		charge = len(formalCharges) - 1
	}
	dst = oneHot(dst, charge, len(formalCharges))
	if mpn {
		tag := a.ChiralTag
		if tag < 0 || tag > 3 {
			tag = 3
		}
		dst = oneHot(dst, tag, 4)
	}
	return append(dst, flag(a.IsAromatic))
}

// appendBond appends a bond's features: single, double, triple, aromatic,
// in a ring, and with mpn the stereo one-hot (6).
func appendBond(dst []float32, b chem.Bond, mpn bool) []float32 {
	dst = append(dst, flag(b.Type == chem.Single), flag(b.Type == chem.Double), flag(b.Type == chem.Triple),
		flag(b.Type == chem.Aromatic), flag(b.InRing > 0))
	if mpn {
		st := b.Stereo
		if st < 0 || st > 5 {
			st = 5
		}
		dst = oneHot(dst, st, 6)
	}
	return dst
}

func oneHot(dst []float32, k, n int) []float32 {
	for i := range n {
		dst = append(dst, flag(i == k))
	}
	return dst
}

func flag(b bool) float32 {
	if b {
		return 1
	}
	return 0
}
