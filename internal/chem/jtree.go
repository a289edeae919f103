package chem

import (
	"cmp"
	"fmt"
	"slices"
)

// The junction tree of JT-VAE (Jin et al. 2018, fast_jtnn as weighted
// retraining and T-LBO use it): a faithful port of chemutils.tree_decomp and
// mol_tree.MolTree, including the order in which clusters are made.

// mstMaxWeight is MST_MAX_WEIGHT: edge weights are stored as mstMaxWeight - w.
const mstMaxWeight = 100

// Tree is the junction tree of a molecule.
type Tree struct {
	// Smiles is the input SMILES.
	Smiles string
	// Mol is the kekulized molecule; its atom indices are the Clusters' atoms.
	Mol *Mol
	// Clusters are the atom sets in the order tree_decomp makes them.
	Clusters [][]int
	// Edges are the spanning tree's edges between clusters, (i, j) with i < j,
	// in row-major order.
	Edges [][2]int
	// Unique reports that no other maximum spanning tree exists (no tie
	// changes the tree).
	Unique bool
	// Nodes are the clusters as MolTree orders them: the root (the last
	// cluster holding atom 0) swapped to the front; Node.ID is 1 + position.
	Nodes []*Node
}

// Node is one cluster of a Tree.
type Node struct {
	ID      int    // 1-based, as MolTree's nid
	Cluster int    // index into Tree.Clusters
	Atoms   []int  // the cluster's atoms (indices into Tree.Mol)
	Smiles  string // kekulé SMILES of the cluster: its vocabulary label
	// Mol is the cluster as a kekulized molecule; when the node is not a
	// leaf its atoms carry the map number ID.
	Mol       *Mol
	Neighbors []*Node
	IsLeaf    bool
	// Label is the cluster with its neighbours' attachment atoms, atom-mapped
	// by node ID (set by Recover): the ground truth of assembly.
	Label string
	// Cands are the attachment candidates' SMILES (set by Assemble).
	Cands []string

	atoms []Atom
	bonds []Bond
}

// Close releases the molecules of the tree.
func (t *Tree) Close() {
	if t == nil {
		return
	}
	t.Mol.Close()
	for _, n := range t.Nodes {
		n.Mol.Close()
	}
}

// KekulizedSmiles parses smiles and kekulizes it (JT-VAE's get_mol).
func KekulizedSmiles(smiles string) (*Mol, error) {
	m, err := Smiles(smiles)
	if err != nil {
		return nil, err
	}
	if err := m.Kekulize(false); err != nil {
		m.Close()
		return nil, fmt.Errorf("%q: %w", smiles, err)
	}
	return m, nil
}

// Decompose builds the junction tree of a SMILES string (MolTree(smiles)).
func Decompose(smiles string) (*Tree, error) {
	m, err := KekulizedSmiles(smiles)
	if err != nil {
		return nil, err
	}
	t := &Tree{Smiles: smiles, Mol: m}
	if t.Clusters, t.Edges, t.Unique, err = treeDecomp(m); err != nil {
		t.Close()
		return nil, fmt.Errorf("decompose %q: %w", smiles, err)
	}
	if err := t.makeNodes(); err != nil {
		t.Close()
		return nil, fmt.Errorf("decompose %q: %w", smiles, err)
	}
	return t, nil
}

// treeDecomp is chemutils.tree_decomp: clusters and spanning-tree edges.
func treeDecomp(m *Mol) ([][]int, [][2]int, bool, error) {
	n := m.NumAtoms()
	if n == 1 {
		return [][]int{{0}}, nil, true, nil
	}
	bonds, err := m.Bonds()
	if err != nil {
		return nil, nil, false, err
	}
	var cliques [][]int
	for _, b := range bonds {
		if b.InRing == 0 {
			cliques = append(cliques, []int{b.Begin, b.End})
		}
	}
	rings, err := m.SymmSSSR()
	if err != nil {
		return nil, nil, false, err
	}
	cliques = append(cliques, rings...)
	cliques = mergeRings(cliques, n)
	cliques, weights := clusterEdges(cliques, n)
	tree := spanningTree(len(cliques), weights)
	return cliques, tree, uniqueTree(len(cliques), tree, weights), nil
}

func neighbourLists(cliques [][]int, n int) [][]int {
	nei := make([][]int, n)
	for i, c := range cliques {
		for _, a := range c {
			nei[a] = append(nei[a], i)
		}
	}
	return nei
}

// mergeRings merges rings sharing more than two atoms, exactly as the Python
// loop does: it iterates the ring's original atom list, which the first merge
// extends in place, with neighbour lists that merges leave stale.
func mergeRings(cliques [][]int, n int) [][]int {
	nei := neighbourLists(cliques, n)
	for i := range cliques {
		if len(cliques[i]) <= 2 {
			continue
		}
		walk := slices.Clone(cliques[i])
		extended := false
		for k := 0; k < len(walk); k++ {
			for _, j := range nei[walk[k]] {
				if i >= j || len(cliques[j]) <= 2 {
					continue
				}
				if intersection(cliques[i], cliques[j]) > 2 {
					if !extended {
						walk = append(walk, cliques[j]...)
						extended = true
					}
					cliques[i] = pySetOrder(append(slices.Clone(cliques[i]), cliques[j]...))
					cliques[j] = nil
				}
			}
		}
	}
	out := cliques[:0]
	for _, c := range cliques {
		if len(c) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// intersection counts the distinct values common to a and b.
func intersection(a, b []int) int {
	n := 0
	for i, x := range a {
		if slices.Contains(a[:i], x) {
			continue
		}
		if slices.Contains(b, x) {
			n++
		}
	}
	return n
}

type edgeKey struct{ a, b int }

// clusterEdges adds singleton clusters and returns the weighted cluster graph
// (weights as in the Python before the 100 - w transform).
func clusterEdges(cliques [][]int, n int) ([][]int, map[edgeKey]int) {
	nei := neighbourLists(cliques, n)
	edges := map[edgeKey]int{}
	for atom := 0; atom < n; atom++ {
		cnei := nei[atom]
		if len(cnei) <= 1 {
			continue
		}
		nBonds, nRings := 0, 0
		for _, c := range cnei {
			switch l := len(cliques[c]); {
			case l == 2:
				nBonds++
			case l > 4:
				nRings++
			}
		}
		switch {
		case nBonds > 2 || (nBonds == 2 && len(cnei) > 2):
			cliques = append(cliques, []int{atom})
			for _, c1 := range cnei {
				edges[edgeKey{c1, len(cliques) - 1}] = 1
			}
		case nRings > 2:
			cliques = append(cliques, []int{atom})
			for _, c1 := range cnei {
				edges[edgeKey{c1, len(cliques) - 1}] = mstMaxWeight - 1
			}
		default:
			for i := range cnei {
				for j := i + 1; j < len(cnei); j++ {
					k := edgeKey{cnei[i], cnei[j]}
					if w := intersection(cliques[k.a], cliques[k.b]); edges[k] < w {
						edges[k] = w
					}
				}
			}
		}
	}
	return cliques, edges
}

// spanningTree is scipy's minimum_spanning_tree on 100 - w (Kruskal over the
// edges in row-major order, sorted stably by cost), returned in row-major
// order. Where costs tie, scipy's argsort (numpy's unstable default, which on
// this machine is not even stable below 17 elements) may pick another of the
// equal trees: Tree.Unique tells when no other exists.
func spanningTree(n int, weights map[edgeKey]int) [][2]int {
	keys := make([]edgeKey, 0, len(weights))
	for k := range weights {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y edgeKey) int { return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)) })
	byCost := slices.Clone(keys)
	slices.SortStableFunc(byCost, func(x, y edgeKey) int {
		return cmp.Compare(mstMaxWeight-weights[x], mstMaxWeight-weights[y])
	})
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	var tree [][2]int
	for _, k := range byCost {
		ra, rb := find(k.a), find(k.b)
		if ra == rb {
			continue
		}
		parent[ra] = rb
		tree = append(tree, [2]int{k.a, k.b})
	}
	slices.SortFunc(tree, func(x, y [2]int) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) })
	return tree
}

// uniqueTree reports whether tree is the only maximum spanning tree: every
// other edge weighs strictly less than each tree edge on the path it closes.
func uniqueTree(n int, tree [][2]int, weights map[edgeKey]int) bool {
	adj := make([][]int, n)
	for _, e := range tree {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	inTree := map[edgeKey]bool{}
	for _, e := range tree {
		inTree[edgeKey{e[0], e[1]}] = true
	}
	for k, w := range weights {
		if inTree[k] {
			continue
		}
		if m, ok := minOnPath(adj, weights, k.a, k.b, -1); ok && m <= w {
			return false
		}
	}
	return true
}

// minOnPath returns the smallest weight on the tree path from a to b, and
// whether b is reachable from a without passing through from.
func minOnPath(adj [][]int, weights map[edgeKey]int, a, b, from int) (int, bool) {
	for _, c := range adj[a] {
		if c == from {
			continue
		}
		w := weights[edgeKey{min(a, c), max(a, c)}]
		if c == b {
			return w, true
		}
		if m, ok := minOnPath(adj, weights, c, b, a); ok {
			return min(m, w), true
		}
	}
	return 0, false
}

// cliqueSmiles is chemutils.get_clique_mol followed by get_smiles: the
// kekulé SMILES of the fragment made of atoms, re-read and sanitised.
func cliqueSmiles(m *Mol, atoms []int) (string, error) {
	frag, err := m.FragmentSmiles(atoms, KekuleSmiles)
	if err != nil {
		return "", err
	}
	a, ok := fragmentAnswers.get(frag)
	if !ok {
		if a, err = fragmentSmiles(frag); err != nil {
			return "", err
		}
		fragmentAnswers.put(frag, a)
	}
	if !a.ok {
		return "", fmt.Errorf("cluster %v (%s) does not sanitise", atoms, frag)
	}
	return a.smiles, nil
}

// fragmentSmiles is the rest of cliqueSmiles after the fragment's SMILES:
// it re-read, copied for editing and sanitised.
func fragmentSmiles(frag string) (sanitized, error) {
	raw, err := FromSmiles(frag, false)
	if err != nil {
		return sanitized{}, err
	}
	defer raw.Close()
	edit, err := raw.CopyEdit()
	if err != nil {
		return sanitized{}, err
	}
	defer edit.Close()
	s, ok := sanitizedSmiles(edit)
	return sanitized{s, ok}, nil
}

// sanitizedSmiles is chemutils.sanitize followed by get_smiles: the kekulé SMILES
// of m, parsed, kekulized and written again; ok is false where the Python returns None.
func sanitizedSmiles(m *Mol) (string, bool) {
	s, err := m.SmilesWith(KekuleSmiles)
	if err != nil {
		return "", false
	}
	return resanitized(s)
}

// resanitized is the rest of sanitize after the first write: the kekulé
// SMILES s parsed, kekulized and written again.
func resanitized(s string) (string, bool) {
	out, ok, _, _ := resanitize(s, false)
	return out, ok
}

// resanitize is resanitized keeping, with keep, the molecule parsed from s
// (sanitised, not kekulized) for the caller to close: nil unless ok. It
// fails only where RDKit fails to copy a molecule.
func resanitize(s string, keep bool) (out string, ok bool, parsed *Mol, err error) {
	p, err := Smiles(s)
	if err != nil {
		return "", false, nil, nil
	}
	k := p
	if keep {
		if k, err = p.Copy(); err != nil {
			p.Close()
			return "", false, nil, err
		}
		defer func() {
			if !ok {
				p.Close()
			}
		}()
	}
	defer k.Close()
	if k.Kekulize(false) != nil {
		return "", false, nil, nil
	}
	if out, err = k.SmilesWith(KekuleSmiles); err != nil {
		return "", false, nil, nil
	}
	if keep {
		parsed = p
	}
	return out, true, parsed, nil
}

// makeNodes is the rest of MolTree.__init__: cluster molecules, neighbours,
// the root swap, node ids and atom maps.
func (t *Tree) makeNodes() error {
	root := 0
	for i, c := range t.Clusters {
		s, err := cliqueSmiles(t.Mol, c)
		if err != nil {
			return err
		}
		nm, err := KekulizedSmiles(s)
		if err != nil {
			return err
		}
		t.Nodes = append(t.Nodes, &Node{Cluster: i, Atoms: c, Smiles: s, Mol: nm})
		if slices.Min(c) == 0 {
			root = i
		}
	}
	for _, e := range t.Edges {
		x, y := t.Nodes[e[0]], t.Nodes[e[1]]
		x.Neighbors = append(x.Neighbors, y)
		y.Neighbors = append(y.Neighbors, x)
	}
	if root > 0 {
		t.Nodes[0], t.Nodes[root] = t.Nodes[root], t.Nodes[0]
	}
	for i, n := range t.Nodes {
		n.ID = i + 1
		if len(n.Neighbors) > 1 {
			if err := n.Mol.SetAllAtomMaps(n.ID); err != nil {
				return fmt.Errorf("node %d: %w", n.ID, err)
			}
		}
		n.IsLeaf = len(n.Neighbors) == 1
		var err error
		if n.atoms, err = n.Mol.Atoms(); err != nil {
			return err
		}
		if n.bonds, err = n.Mol.Bonds(); err != nil {
			return err
		}
	}
	return nil
}

// Recover sets every node's Label (MolTree.recover): the cluster and its
// neighbours' atoms, mapped by node id, as canonical SMILES.
func (t *Tree) Recover() error {
	for _, n := range t.Nodes {
		if err := t.recoverNode(n); err != nil {
			return fmt.Errorf("recover node %d of %q: %w", n.ID, t.Smiles, err)
		}
	}
	return nil
}

func (t *Tree) recoverNode(n *Node) error {
	clique := slices.Clone(n.Atoms)
	if !n.IsLeaf {
		for _, a := range n.Atoms {
			if err := t.Mol.SetAtomMap(a, n.ID); err != nil {
				return err
			}
		}
	}
	for _, nb := range n.Neighbors {
		clique = append(clique, nb.Atoms...)
		if nb.IsLeaf {
			continue
		}
		for _, a := range nb.Atoms {
			if !slices.Contains(n.Atoms, a) || len(nb.Atoms) == 1 {
				if err := t.Mol.SetAtomMap(a, nb.ID); err != nil {
					return err
				}
			}
		}
	}
	clique = pySetOrder(clique)
	s, err := cliqueSmiles(t.Mol, clique)
	if err == nil {
		n.Label, err = canonicalLabel(s)
	}
	for _, a := range clique {
		if e := t.Mol.SetAtomMap(a, 0); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// canonicalLabel is Canonical(s), from labelAnswers when they hold it.
func canonicalLabel(s string) (string, error) {
	if c, ok := labelAnswers.get(s); ok {
		return c, nil
	}
	c, err := Canonical(s)
	if err == nil {
		labelAnswers.put(s, c)
	}
	return c, err
}

// Canonical is MolToSmiles(MolFromSmiles(s)): RDKit's canonical, aromatic
// SMILES, one string for every kekulé form of a molecule.
func Canonical(s string) (string, error) {
	m, err := Smiles(s)
	if err != nil {
		return "", err
	}
	defer m.Close()
	return m.SmilesWith(DefaultSmiles)
}
