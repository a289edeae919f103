package jtvae

import (
	"fmt"
	"slices"
)

// Example is one molecule as the network takes it; the chemistry featuriser
// fills it (testdata/jtvae/make_fixture.py shows the authors' featurisation).
type Example struct {
	Tree  Tree
	Graph Graph // AtomFeatures / BondFeatures per row
	// Assembly lists the tree nodes that are not leaves and have more than one
	// candidate attachment, with their candidates; needed for the training
	// loss only.
	Assembly []Group
	// Vocab, when set, is the vocabulary that Tree.Labels index; Collate
	// maps the labels onto the network's own vocabulary (Config.Vocab) where
	// the two differ, so that molecules featurised with one vocabulary file
	// encode right with a checkpoint made with another.
	Vocab []string
	// Smiles, when set, is the molecule the example was made from; the
	// network does not read it (reports compare decodings with it).
	Smiles string
	// Packed, when set, holds Tree, Graph and Assembly encoded (Pack), and
	// those fields are empty; Collate unpacks.
	Packed []byte
}

// relabel returns examples with labels indexing cfg.Vocab (copies where
// they change).
func relabel(cfg Config, examples []Example) ([]Example, error) {
	out := examples
	for i, ex := range examples {
		if ex.Vocab == nil || cfg.Vocab == nil || sameVocab(ex.Vocab, cfg.Vocab) {
			continue
		}
		if &out[0] == &examples[0] {
			out = slices.Clone(examples)
		}
		index := make(map[string]int64, len(cfg.Vocab))
		for k, s := range cfg.Vocab {
			index[s] = int64(k)
		}
		labels := make([]int64, len(ex.Tree.Labels))
		for k, w := range ex.Tree.Labels {
			if w < 0 || int(w) >= len(ex.Vocab) {
				return nil, fmt.Errorf("example %d: node %d has label %d outside its vocabulary of %d", i, k, w, len(ex.Vocab))
			}
			j, ok := index[ex.Vocab[w]]
			if !ok {
				return nil, fmt.Errorf("example %d: cluster %q is not in the network's vocabulary", i, ex.Vocab[w])
			}
			labels[k] = j
		}
		out[i].Tree.Labels = labels
		out[i].Vocab = cfg.Vocab
	}
	return out, nil
}

func sameVocab(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b))
}

// Tree is a junction tree: node 0 is the root.
type Tree struct {
	Labels []int64 // vocabulary index of each node's cluster
	// Neighbors is the adjacency in the authors' order, which fixes the
	// decoder's depth-first trace.
	Neighbors [][]int32
}

// Graph is a molecular graph with flat row-major feature matrices.
type Graph struct {
	Atoms        []float32  // atoms x atom features
	Bonds        [][2]int32 // begin and end atom of each bond
	BondFeatures []float32  // bonds x bond features
}

// Group is a tree node's candidate attachments.
type Group struct {
	Node       int32 // tree node
	Label      int32 // index of the true attachment in Candidates
	Candidates []Candidate
}

// Candidate is one attachment of a node and its neighbours: its graph
// (CandAtomFeatures / CandBondFeatures) and the tree messages that flow into
// its atoms (the authors' JTMPN).
type Candidate struct {
	Graph
	// Injections are (atom, from node, to node): the encoder's tree message
	// from -> to is added to the atom's incoming messages.
	Injections [][3]int32
}

// validate checks an example's sizes and indices against the configuration.
func (e *Example) validate(cfg Config) error {
	if err := e.validateTree(cfg); err != nil {
		return err
	}
	if err := e.Graph.validate(AtomFeatures, BondFeatures); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	for k, g := range e.Assembly {
		if err := g.validate(e.Tree, len(e.Tree.Labels)); err != nil {
			return fmt.Errorf("assembly group %d: %w", k, err)
		}
	}
	return nil
}

// validateTree checks the junction tree: labels in the vocabulary, symmetric
// adjacency, connected, no cycle.
func (e *Example) validateTree(cfg Config) error {
	if err := validateDecoded(e.Tree, cfg); err != nil {
		return err
	}
	t := e.Tree
	edges := 0
	for x, nb := range t.Neighbors {
		for _, y := range nb {
			if !slices.Contains(t.Neighbors[y], int32(x)) {
				return fmt.Errorf("tree: node %d lists neighbour %d, which is not a node linked back to it", x, y)
			}
		}
		edges += len(nb)
	}
	if n := len(t.Labels); edges != 2*(n-1) || !connected(t) {
		return fmt.Errorf("tree: %d nodes and %d edges do not make a tree", n, edges/2)
	}
	return nil
}

// validateDecoded checks a tree as the decoder may leave it: labels in the
// vocabulary, each adjacency list naming other nodes, each once. (A tree
// cut by the step cap lists the nodes left on the stack only on the child's
// side.)
func validateDecoded(t Tree, cfg Config) error {
	n := len(t.Labels)
	if n == 0 || len(t.Neighbors) != n {
		return fmt.Errorf("tree: %d labels and %d adjacency lists (want the same number, at least 1)", n, len(t.Neighbors))
	}
	for x, nb := range t.Neighbors {
		if t.Labels[x] < 0 || t.Labels[x] >= int64(cfg.VocabSize) {
			return fmt.Errorf("tree: node %d has label %d outside the vocabulary of %d", x, t.Labels[x], cfg.VocabSize)
		}
		for k, y := range nb {
			if y < 0 || int(y) >= n || int(y) == x || slices.Contains(nb[:k], y) {
				return fmt.Errorf("tree: node %d lists neighbour %d: not another node of %d, or listed twice", x, y, n)
			}
		}
	}
	return nil
}

func connected(t Tree) bool {
	seen := make([]bool, len(t.Labels))
	stack := []int32{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, y := range t.Neighbors[x] {
			if !seen[y] {
				seen[y] = true
				count++
				stack = append(stack, y)
			}
		}
	}
	return count == len(t.Labels)
}

func (g *Group) validate(t Tree, n int) error {
	if g.Node < 0 || int(g.Node) >= n {
		return fmt.Errorf("node %d outside the tree of %d nodes", g.Node, n)
	}
	if len(g.Candidates) < 2 || g.Label < 0 || int(g.Label) >= len(g.Candidates) {
		return fmt.Errorf("label %d with %d candidates (want at least 2, label among them)", g.Label, len(g.Candidates))
	}
	for c, cand := range g.Candidates {
		if err := cand.Graph.validate(CandAtomFeatures, CandBondFeatures); err != nil {
			return fmt.Errorf("candidate %d: %w", c, err)
		}
		atoms := len(cand.Atoms) / CandAtomFeatures
		for _, j := range cand.Injections {
			if j[0] < 0 || int(j[0]) >= atoms || j[1] < 0 || int(j[1]) >= n || j[2] < 0 || int(j[2]) >= n ||
				!slices.Contains(t.Neighbors[j[1]], j[2]) {
				return fmt.Errorf("candidate %d: injection %v is not (atom, tree edge)", c, j)
			}
		}
	}
	return nil
}

func (g *Graph) validate(fa, fb int) error {
	if len(g.Atoms) == 0 || len(g.Atoms)%fa != 0 {
		return fmt.Errorf("%d atom feature values are not whole rows of %d", len(g.Atoms), fa)
	}
	if len(g.BondFeatures) != len(g.Bonds)*fb {
		return fmt.Errorf("%d bond feature values for %d bonds of %d features", len(g.BondFeatures), len(g.Bonds), fb)
	}
	n := int32(len(g.Atoms) / fa)
	for k, b := range g.Bonds {
		if b[0] < 0 || b[0] >= n || b[1] < 0 || b[1] >= n || b[0] == b[1] {
			return fmt.Errorf("bond %d joins atoms %d and %d of %d", k, b[0], b[1], n)
		}
	}
	return nil
}
