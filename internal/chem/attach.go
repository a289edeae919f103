package chem

import (
	"fmt"
	"slices"
)

// Reassemble rebuilds the molecule from its recovered tree (Recover first) by
// attaching the clusters along the tree, depth first from the root, choosing
// at each node the candidate equal to its label: chemutils.dfs_assemble as
// the authors' decode test runs it. The result is canonical SMILES without
// atom maps; stereo is not rebuilt.
func (t *Tree) Reassemble() (string, error) {
	if len(t.Nodes) == 0 {
		return "", fmt.Errorf("reassemble %q: empty tree", t.Smiles)
	}
	root := t.Nodes[0]
	m, err := root.Mol.CopyEdit()
	if err != nil {
		return "", err
	}
	defer m.Close()
	global := map[int]map[int]int{}
	for _, n := range t.Nodes {
		global[n.ID] = map[int]int{}
	}
	for i := range root.atoms {
		global[root.ID][i] = i
	}
	if err := dfsAssemble(m, global, nil, root, nil); err != nil {
		return "", fmt.Errorf("reassemble %q: %w", t.Smiles, err)
	}
	s, err := m.SmilesWith(DefaultSmiles)
	if err != nil {
		return "", err
	}
	out, err := Smiles(s)
	if err != nil {
		return "", err
	}
	defer out.Close()
	if err := out.SetAllAtomMaps(0); err != nil {
		return "", err
	}
	return out.SmilesWith(DefaultSmiles)
}

// dfsAssemble attaches cur's children to m with the candidate matching cur's
// label, then recurses into the non-leaf children.
func dfsAssemble(m *Mol, global map[int]map[int]int, faAmap []AtomPair, cur, fa *Node) error {
	faID := -1
	var prev []*Node
	if fa != nil {
		faID = fa.ID
		prev = []*Node{fa}
	}
	var children []*Node
	for _, n := range cur.Neighbors {
		if n.ID != faID {
			children = append(children, n)
		}
	}
	var curAmap []AtomPair
	for _, p := range faAmap {
		if p.Nei == cur.ID {
			curAmap = append(curAmap, AtomPair{Nei: faID, CtrAtom: p.NeiAtom, NeiAtom: p.CtrAtom})
		}
	}
	cands, err := EnumAssemble(cur, AssemblyOrder(children), prev, curAmap)
	if err != nil {
		return err
	}
	k := slices.IndexFunc(cands, func(c Candidate) bool { return c.Smiles == cur.Label })
	if k < 0 {
		return fmt.Errorf("node %d: label %s is not among its %d candidates", cur.ID, cur.Label, len(cands))
	}
	label := cands[k].Amap
	for _, p := range label {
		if p.Nei != faID {
			global[p.Nei][p.NeiAtom] = global[cur.ID][p.CtrAtom]
		}
	}
	if err := attachMols(m, children, nil, global); err != nil {
		return err
	}
	for _, n := range children {
		if !n.IsLeaf {
			if err := dfsAssemble(m, global, label, n, cur); err != nil {
				return err
			}
		}
	}
	return nil
}
