package chem

import (
	"context"
	"fmt"
	"slices"
)

// Attachment candidates and assembly of JT-VAE: a port of chemutils.enum_attach,
// local_attach, attach_mols, enum_assemble, check_singleton and check_aroma.

// MaxCandidates is MAX_NCAND: the search stops once more attachments than this
// have been completed.
const MaxCandidates = 2000

// Benzynes and Penzynes are the kekulé six- and five-ring clusters whose
// aromaticity check_aroma tests (Vocab's class defaults, which data
// preprocessing uses: it never builds a Vocab).
var (
	Benzynes = []string{"C1=CC=CC=C1", "C1=CC=NC=C1", "C1=CC=NN=C1", "C1=CN=CC=N1", "C1=CN=CN=C1", "C1=CN=NC=N1",
		"C1=CN=NN=C1", "C1=NC=NC=N1", "C1=NN=CN=N1"}
	Penzynes = []string{"C1=C[NH]C=C1", "C1=C[NH]C=N1", "C1=C[NH]N=C1", "C1=C[NH]N=N1", "C1=COC=C1", "C1=COC=N1",
		"C1=CON=C1", "C1=CSC=C1", "C1=CSC=N1", "C1=CSN=C1", "C1=CSN=N1", "C1=NN=C[NH]1", "C1=NN=CO1", "C1=NN=CS1",
		"C1=N[NH]C=N1", "C1=N[NH]N=C1", "C1=N[NH]N=N1", "C1=NN=N[NH]1", "C1=NN=NS1", "C1=NOC=N1", "C1=NON=C1",
		"C1=NSC=N1", "C1=NSN=C1"}
)

// AtomPair maps an atom of neighbour node Nei (Nei's atom NeiAtom) onto atom
// CtrAtom of the centre cluster.
type AtomPair struct {
	Nei, CtrAtom, NeiAtom int
}

// Candidate is one way to attach a node's neighbours: its SMILES, the atom map
// that makes it and its check_aroma score.
type Candidate struct {
	Smiles string
	Amap   []AtomPair
	Aroma  float64
}

func atomEqual(a, b Atom) bool {
	return a.AtomicNum == b.AtomicNum && a.FormalCharge == b.FormalCharge
}

// enumAttach lists the ways to attach nei to the centre molecule given amap.
func enumAttach(ctr *Node, nei *Node, amap []AtomPair, singletons []int) []([]AtomPair) {
	var black, used []int
	for _, p := range amap {
		if slices.Contains(singletons, p.Nei) {
			black = append(black, p.CtrAtom)
		}
		used = append(used, p.CtrAtom)
	}
	var out [][]AtomPair
	add := func(ps ...AtomPair) {
		out = append(out, append(slices.Clone(amap), ps...))
	}
	switch len(nei.bonds) {
	case 0:
		na := nei.atoms[0]
		for i, a := range ctr.atoms {
			if !slices.Contains(black, i) && atomEqual(a, na) && !slices.Contains(used, i) {
				add(AtomPair{nei.ID, i, 0})
			}
		}
	case 1:
		b := nei.bonds[0]
		val := int(b.Order)
		b1, b2 := nei.atoms[b.Begin], nei.atoms[b.End]
		for i, a := range ctr.atoms {
			if slices.Contains(black, i) || (a.AtomicNum == 6 && a.TotalHs < val) {
				continue
			}
			if atomEqual(a, b1) {
				add(AtomPair{nei.ID, i, b.Begin})
			} else if atomEqual(a, b2) {
				add(AtomPair{nei.ID, i, b.End})
			}
		}
	default:
		for i, a1 := range ctr.atoms {
			if slices.Contains(black, i) {
				continue
			}
			for j, a2 := range nei.atoms {
				if atomEqual(a1, a2) && !(a1.AtomicNum == 6 && a1.TotalHs+a2.TotalHs < 4) {
					add(AtomPair{nei.ID, i, j})
				}
			}
		}
		if len(ctr.bonds) > 1 {
			for _, b1 := range ctr.bonds {
				for _, b2 := range nei.bonds {
					if atomEqual(ctr.atoms[b1.Begin], nei.atoms[b2.Begin]) && atomEqual(ctr.atoms[b1.End], nei.atoms[b2.End]) {
						add(AtomPair{nei.ID, b1.Begin, b2.Begin}, AtomPair{nei.ID, b1.End, b2.End})
					}
					if atomEqual(ctr.atoms[b1.Begin], nei.atoms[b2.End]) && atomEqual(ctr.atoms[b1.End], nei.atoms[b2.Begin]) {
						add(AtomPair{nei.ID, b1.Begin, b2.End}, AtomPair{nei.ID, b1.End, b2.Begin})
					}
				}
			}
		}
	}
	return out
}

// localAttach is chemutils.local_attach: the centre with its neighbours
// attached by amap (an unsanitised molecule), as a graph.
func localAttach(ctr *Node, neighbors, prev []*Node, amap []AtomPair) (*molGraph, error) {
	g := editGraph(ctr)
	maps := map[int]map[int]int{}
	for _, n := range prev {
		maps[n.ID] = map[int]int{}
	}
	for _, n := range neighbors {
		maps[n.ID] = map[int]int{}
	}
	for _, p := range amap {
		mp, ok := maps[p.Nei]
		if !ok {
			return nil, fmt.Errorf("atom map names node %d, which is not a neighbour", p.Nei)
		}
		mp[p.NeiAtom] = p.CtrAtom
	}
	if err := attachMols(g, neighbors, prev, maps); err != nil {
		return nil, err
	}
	return g, nil
}

// attachMols is chemutils.attach_mols: adds the neighbours' missing atoms and
// bonds to m; a bond of a previous (father) node replaces the one in m.
func attachMols(m molEditor, neighbors, prev []*Node, maps map[int]map[int]int) error {
	all := append(slices.Clone(prev), neighbors...)
	for k, nei := range all {
		amap := maps[nei.ID]
		for i, a := range nei.atoms {
			if _, ok := amap[i]; ok {
				continue
			}
			idx, err := m.AddAtom(a.AtomicNum, a.FormalCharge, a.MapNum)
			if err != nil {
				return err
			}
			amap[i] = idx
		}
		if len(nei.bonds) == 0 {
			if err := m.SetAtomMap(amap[0], nei.atoms[0].MapNum); err != nil {
				return err
			}
			continue
		}
		for _, b := range nei.bonds {
			a1, a2 := amap[b.Begin], amap[b.End]
			if m.BondBetween(a1, a2) < 0 {
				if err := m.AddBond(a1, a2, b.Type); err != nil {
					return err
				}
			} else if k < len(prev) {
				if err := m.RemoveBond(a1, a2); err != nil {
					return err
				}
				if err := m.AddBond(a1, a2, b.Type); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// EnumAssemble is chemutils.enum_assemble: the distinct ways to attach
// neighbors (in that order) to node, given the father prev and its atom map,
// with the default aromatic rings.
func EnumAssemble(node *Node, neighbors, prev []*Node, prevAmap []AtomPair) ([]Candidate, error) {
	return EnumOptions{}.EnumAssemble(node, neighbors, prev, prevAmap)
}

// EnumOptions configure EnumAssemble.
type EnumOptions struct {
	// Aroma are the rings check_aroma counts (nil: DefaultAroma).
	Aroma *AromaRings
	// Ctx, when set, stops the enumeration (which is exponential in the
	// neighbours) with its error once it is done.
	Ctx context.Context
	// First stops at the first candidate: enough to tell whether any exists
	// (the authors' can_assemble), which is the same answer. It descends
	// into each attachment as soon as it is found valid and new, so that
	// the ones after it are not sanitised when it leads to a candidate
	// (the same attachments are visited in the same order until then).
	First bool
	// Memo, when set, answers the sanitisation of attachments seen before.
	Memo *AttachMemo
}

// EnumAssemble is chemutils.enum_assemble with o's rings and context.
func (o EnumOptions) EnumAssemble(node *Node, neighbors, prev []*Node, prevAmap []AtomPair) ([]Candidate, error) {
	aroma := &DefaultAroma
	if o.Aroma != nil {
		aroma = o.Aroma
	}
	ctx := o.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	var singletons []int
	for _, n := range append(slices.Clone(neighbors), prev...) {
		if len(n.atoms) == 1 {
			singletons = append(singletons, n.ID)
		}
	}
	var all []attachment
	var first []Candidate
	var search func(cur attachment, depth int) error
	search = func(cur attachment, depth int) error {
		if len(all) > MaxCandidates || first != nil {
			return nil
		}
		if depth == len(neighbors) {
			all = append(all, cur)
			if o.First {
				c, err := finishCandidates(ctx, o.Memo, aroma, node, neighbors, prev, []attachment{cur})
				if len(c) > 0 {
					first = c
				}
				return err
			}
			return nil
		}
		d := depthSearch{memo: o.Memo, aroma: aroma, node: node, neighbors: neighbors[:depth+1], prev: prev,
			last: depth == len(neighbors)-1, seen: map[string]bool{}, firsts: map[string]bool{}}
		var next []attachment
		for _, amap := range enumAttach(node, neighbors[depth], cur.amap, singletons) {
			if err := ctx.Err(); err != nil {
				return err
			}
			a, ok, err := d.keep(amap)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if o.First { // depth first at once: the siblings left are needed only if this one fails
				if err := search(a, depth+1); err != nil || first != nil {
					return err
				}
				continue
			}
			next = append(next, a)
		}
		for _, a := range next {
			if err := search(a, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := search(attachment{amap: prevAmap}, 0); err != nil {
		return nil, err
	}
	if o.First {
		return first, nil
	}
	return finishCandidates(ctx, o.Memo, aroma, node, neighbors, prev, all)
}

// attachment is one the search keeps: its atom map and, where the search
// finished it already (done), what finishing it made or the error it met.
type attachment struct {
	amap []AtomPair
	done bool
	fin  finished
	err  error
}

// depthSearch is what the search's loop over the attachments of one
// neighbour (the last of neighbors) knows: the SMILES of those kept so far
// (seen, sanitize's) and of those written so far (firsts, the first write
// of local_attach's molecule).
type depthSearch struct {
	memo            *AttachMemo
	aroma           *AromaRings
	node            *Node
	neighbors, prev []*Node
	last            bool // the last neighbour: a kept attachment is complete
	seen, firsts    map[string]bool
}

// keep reports whether the search keeps amap: whether its molecule
// sanitises to a SMILES not kept before at this depth. Without a memo, an
// attachment whose first SMILES was written before makes the same molecule
// and so is not kept again without parsing it, and a complete one is
// finished from the molecule parsed here, which is the one finishing parses
// (the first write is canonical kekulé SMILES of a molecule with no aromatic
// bond: the same string as finishing's canonical SMILES of it).
func (d depthSearch) keep(amap []AtomPair) (attachment, bool, error) {
	a := attachment{amap: amap}
	g, err := localAttach(d.node, d.neighbors, d.prev, amap)
	if err != nil {
		return a, false, err
	}
	if d.memo != nil {
		s, ok, err := sanitizedAttach(d.memo, d.node, d.neighbors, d.prev, amap, g)
		if err != nil || !ok || d.seen[s] {
			return a, false, err
		}
		d.seen[s] = true
		return a, true, nil
	}
	if g.overValent() {
		return a, false, nil
	}
	m, err := g.Build()
	if err != nil {
		return a, false, err
	}
	first, err := m.SmilesWith(KekuleSmiles)
	m.Close()
	if err != nil || d.firsts[first] {
		return a, false, nil
	}
	d.firsts[first] = true
	s, ok, parsed, err := resanitize(first, d.last)
	if err != nil || !ok || d.seen[s] {
		parsed.Close()
		return a, false, err
	}
	d.seen[s] = true
	if d.last {
		a.fin, a.err = finishMol(d.aroma, parsed, d.node, d.neighbors)
		a.done = true
		parsed.Close()
	}
	return a, true, nil
}

// finishCandidates writes each complete attachment as canonical SMILES, drops
// repeats and those failing check_singleton, and scores check_aroma (each
// attachment's answer from memo when it holds it; memo may be nil).
func finishCandidates(ctx context.Context, memo *AttachMemo, aroma *AromaRings, node *Node, neighbors, prev []*Node, all []attachment) ([]Candidate, error) {
	seen := map[string]bool{}
	var out []Candidate
	for _, a := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := a.fin, a.err
		if !a.done {
			f, err = finishedAttach(memo, aroma, node, neighbors, prev, a.amap)
		}
		if err != nil {
			return nil, err
		}
		if f.valid && !seen[f.smiles] {
			seen[f.smiles] = true
			out = append(out, Candidate{Smiles: f.smiles, Amap: a.amap, Aroma: f.aroma})
		}
	}
	return out, nil
}

// finished is what finishCandidates makes of one complete attachment: its
// canonical SMILES, whether it passes check_singleton (valid) and its
// check_aroma score.
type finished struct {
	smiles string
	valid  bool
	aroma  float64
}

// attachedSmiles is the SMILES of local_attach's molecule, which
// enum_assemble parses into the candidate.
func attachedSmiles(node *Node, neighbors, prev []*Node, amap []AtomPair) (string, error) {
	g, err := localAttach(node, neighbors, prev, amap)
	if err != nil {
		return "", err
	}
	m, err := g.Build()
	if err != nil {
		return "", err
	}
	defer m.Close()
	return m.SmilesWith(DefaultSmiles)
}

// finishSmiles finishes a complete attachment from its SMILES s (RDKit
// failing on it is an error): the candidate parsed from s, its canonical
// SMILES and the checks.
func finishSmiles(aroma *AromaRings, s string, node *Node, neighbors []*Node) (finished, error) {
	cm, err := Smiles(s)
	if err != nil {
		return finished{}, err
	}
	defer cm.Close()
	return finishMol(aroma, cm, node, neighbors)
}

// finishMol finishes a complete attachment from the candidate parsed from
// its SMILES (cm, sanitised, not kekulized).
func finishMol(aroma *AromaRings, cm *Mol, node *Node, neighbors []*Node) (finished, error) {
	smiles, err := cm.SmilesWith(DefaultSmiles)
	if err != nil {
		return finished{}, err
	}
	ok, err := checkSingleton(cm, node, neighbors)
	if err != nil || !ok {
		return finished{smiles: smiles}, err
	}
	score, err := checkAroma(cm, node, neighbors, aroma)
	if err != nil {
		return finished{}, err
	}
	return finished{smiles: smiles, valid: true, aroma: score}, nil
}

func checkSingleton(cand *Mol, ctr *Node, nei []*Node) (bool, error) {
	rings, singles := 0, 0
	for _, n := range append(slices.Clone(nei), ctr) {
		switch l := len(n.atoms); {
		case l > 2:
			rings++
		case l == 1:
			singles++
		}
	}
	if singles > 0 || rings == 0 {
		return true, nil
	}
	atoms, err := cand.Atoms()
	if err != nil {
		return false, err
	}
	adj, err := cand.Neighbours()
	if err != nil {
		return false, err
	}
	for i := range atoms {
		leaves := 0
		for _, j := range adj[i] {
			if atoms[j].InRing == 0 {
				leaves++
			}
		}
		if leaves > 1 {
			return false, nil
		}
	}
	return true, nil
}

func checkAroma(cand *Mol, ctr *Node, nei []*Node, aroma *AromaRings) (float64, error) {
	nodes := append(slices.Clone(nei), ctr)
	rings := 0
	for _, n := range nodes {
		if len(n.atoms) >= 3 {
			rings++
		}
	}
	if rings < 2 {
		return 0, nil
	}
	var benz, penz []int
	for _, n := range nodes {
		id := n.ID
		if n.IsLeaf {
			id = 0
		}
		if slices.Contains(aroma.Benzynes, n.Smiles) {
			benz = append(benz, id)
		}
		if slices.Contains(aroma.Penzynes, n.Smiles) {
			penz = append(penz, id)
		}
	}
	if len(benz)+len(penz) == 0 {
		return 0, nil
	}
	atoms, err := cand.Atoms()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range atoms {
		if a.IsAromatic && (slices.Contains(benz, a.MapNum) || slices.Contains(penz, a.MapNum)) {
			n++
		}
	}
	if n >= len(benz)*4+len(penz)*3 {
		return 1000, nil
	}
	return -0.001, nil
}

// AssemblyOrder is the neighbour order of MolTreeNode.assemble and
// dfs_assemble: singletons, then the others by size, largest first (stable).
func AssemblyOrder(ns []*Node) []*Node {
	var single, multi []*Node
	for _, n := range ns {
		if len(n.atoms) == 1 {
			single = append(single, n)
		} else {
			multi = append(multi, n)
		}
	}
	slices.SortStableFunc(multi, func(a, b *Node) int { return len(b.atoms) - len(a.atoms) })
	return append(single, multi...)
}

// Assemble sets every node's Cands (MolTreeNode.assemble): the candidates that
// pass the aromaticity check when any does, else all of them.
func (t *Tree) Assemble() error { return t.AssembleNodes(nil) }

// AssembleNodes sets the Cands of the nodes that keep selects (nil: all) as
// Assemble does, and leaves the other nodes' Cands as they are. A node's
// candidates depend only on the node and its neighbours, so they are the
// same as Assemble's; an enumeration that would fail at a node not
// selected is not run, and so is no error here.
func (t *Tree) AssembleNodes(keep func(*Node) bool) error {
	for _, n := range t.Nodes {
		if keep != nil && !keep(n) {
			continue
		}
		cands, err := EnumAssemble(n, AssemblyOrder(n.Neighbors), nil, nil)
		if err != nil {
			return fmt.Errorf("assemble node %d of %q: %w", n.ID, t.Smiles, err)
		}
		n.Cands = nil
		for _, c := range cands {
			if c.Aroma >= 0 {
				n.Cands = append(n.Cands, c.Smiles)
			}
		}
		if len(n.Cands) == 0 {
			for _, c := range cands {
				n.Cands = append(n.Cands, c.Smiles)
			}
		}
	}
	return nil
}

// Vocabulary returns the distinct cluster SMILES of the tree (get_vocab_from_tree).
func (t *Tree) Vocabulary() []string {
	var out []string
	for _, n := range t.Nodes {
		if !slices.Contains(out, n.Smiles) {
			out = append(out, n.Smiles)
		}
	}
	return out
}
