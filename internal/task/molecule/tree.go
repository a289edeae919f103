package molecule

import (
	"context"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// ClusterJSON is one cluster of a junction tree as `molecule tree` prints it.
type ClusterJSON struct {
	Label string `json:"label"` // kekulé SMILES of the cluster (its vocabulary entry)
	Atoms []int  `json:"atoms"` // atom indices of the input molecule, as RDKit numbers them
}

// TreeJSON is the junction tree of one molecule: clusters in the order the
// algorithm makes them and the spanning-tree edges between them.
type TreeJSON struct {
	Smiles   string        `json:"smiles"`
	Clusters []ClusterJSON `json:"clusters"`
	Edges    [][2]int      `json:"edges"`
	// Root is the index of the root cluster (the one holding atom 0).
	Root int `json:"root"`
	// Candidates, when asked for, are each cluster's attachment candidates
	// (by cluster index; MolTreeNode.assemble).
	Candidates [][]string `json:"candidates,omitempty"`
}

// Tree decomposes smiles into its junction tree; with candidates it also
// enumerates every node's attachment candidates. A molecule over the size
// limits (limits.go) is an error.
func Tree(smiles string, candidates bool) (*TreeJSON, error) {
	if err := checkSize(smiles); err != nil {
		return nil, err
	}
	t, err := chem.Decompose(smiles)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	out := &TreeJSON{Smiles: smiles, Edges: t.Edges, Clusters: make([]ClusterJSON, len(t.Clusters))}
	if out.Edges == nil {
		out.Edges = [][2]int{}
	}
	for _, n := range t.Nodes {
		out.Clusters[n.Cluster] = ClusterJSON{Label: n.Smiles, Atoms: n.Atoms}
	}
	if len(t.Nodes) > 0 {
		out.Root = t.Nodes[0].Cluster
	}
	if candidates {
		if err := t.Recover(); err != nil {
			return nil, err
		}
		if err := t.Assemble(); err != nil {
			return nil, err
		}
		out.Candidates = make([][]string, len(t.Clusters))
		for _, n := range t.Nodes {
			out.Candidates[n.Cluster] = append([]string{}, n.Cands...) // [] rather than null when none
		}
	}
	return out, nil
}

// Trees decomposes many molecules on workers goroutines (0: all CPUs), one
// molecule per task; trees[i] is nil where errs[i] is set.
func Trees(smiles []string, candidates bool, workers int, progress func(done, total int)) (trees []*TreeJSON, errs []error) {
	trees, errs = make([]*TreeJSON, len(smiles)), make([]error, len(smiles))
	k := 0
	parallel(context.Background(), len(smiles), workers, func(int) {
		if k++; progress != nil {
			progress(k, len(smiles))
		}
	}, func(i int) {
		trees[i], errs[i] = Tree(smiles[i], candidates)
	})
	return trees, errs
}
