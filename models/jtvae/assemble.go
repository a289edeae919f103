package jtvae

import (
	"fmt"

	"github.com/tlbo-native/tlbo-native/torch"
)

// AssemblyScorer scores candidate attachments while a decoded tree is
// assembled into a molecule (the network's part of the authors'
// dfs_assemble): the tree encoder's messages over the decoded tree are
// computed once, each candidate graph goes through the JTMPN, and its score
// is G_mean(candidate vector) . z_graph (A_assm(z_graph) . vector with the
// bilinear switch). The caller adds the aromaticity scores and ranks.
type AssemblyScorer struct {
	m      *Model
	sc     *torch.Scope
	table  *torch.Tensor // the encoder's messages over the tree
	rows   edgeIDs       // tree edge -> message id
	tree   *Batch
	zGraph *torch.Tensor // (1, latent graph)
}

// NewAssemblyScorer prepares the scoring of one decoded tree (as DecodeTrees
// returns it) with the graph half of its latent point.
func (m *Model) NewAssemblyScorer(tree Tree, zGraph []float32) (*AssemblyScorer, error) {
	if len(zGraph) != m.cfg.LatentGraph() {
		return nil, fmt.Errorf("jtvae assembly: %d graph latent values, want %d", len(zGraph), m.cfg.LatentGraph())
	}
	if err := validateDecoded(tree, m.cfg); err != nil {
		return nil, fmt.Errorf("jtvae assembly: %w", err)
	}
	ex := Example{Tree: tree}
	s := &AssemblyScorer{m: m, sc: torch.NewScope()}
	bd := &builder{sc: s.sc, dev: m.Device()}
	s.tree = &Batch{n: 1}
	ids := s.tree.collateTree(bd, m.cfg, []Example{ex})
	s.rows = ids[0]
	s.zGraph = s.sc.Own(torch.FromFloat32(zGraph, 1, int64(len(zGraph)))).To(m.Device())
	if bd.err != nil {
		s.Close()
		return nil, fmt.Errorf("jtvae assembly: %w", bd.err)
	}
	torch.NoGrad(func() { _, s.table = m.encodeTree(s.tree) })
	if err := s.table.Err(); err != nil {
		s.Close()
		return nil, fmt.Errorf("jtvae assembly: %w", err)
	}
	return s, nil
}

// Score returns the scores of candidate attachments whose injections refer
// to the scorer's tree.
func (s *AssemblyScorer) Score(cands []Candidate) ([]float64, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	n := len(s.tree.tree.rows)
	var gs []Graph
	var inj []injection
	for c, cand := range cands {
		if err := cand.Graph.validate(CandAtomFeatures, CandBondFeatures); err != nil {
			return nil, fmt.Errorf("jtvae assembly: candidate %d: %w", c, err)
		}
		for _, j := range cand.Injections {
			id, ok := s.rows[[2]int32{j[1], j[2]}]
			if !ok || j[0] < 0 || int(j[0]) >= len(cand.Atoms)/CandAtomFeatures {
				return nil, fmt.Errorf("jtvae assembly: candidate %d: injection %v is not (atom, tree edge) of a tree with %d messages", c, j, n)
			}
			inj = append(inj, injection{g: c, atom: int(j[0]), msg: s.tree.tree.rows[id]})
		}
		gs = append(gs, cand.Graph)
	}
	sc := torch.NewScope()
	defer sc.Close()
	bd := &builder{sc: sc, dev: s.m.Device()}
	gi := collateGraphs(bd, gs, CandAtomFeatures, CandBondFeatures, s.m.cfg.DepthG, inj)
	if bd.err != nil {
		return nil, fmt.Errorf("jtvae assembly: %w", bd.err)
	}
	var out []float64
	var err error
	torch.NoGrad(func() {
		vec := s.m.jtmpn.forward(gi, s.table)
		z := s.zGraph
		if s.m.cfg.BilinearAssembly {
			z = s.m.aAssm.Forward(z)
		} else {
			vec = s.m.gMean.Forward(vec)
		}
		out, err = vec.Mul(z).SumDims([]int64{1}, false).Float64s()
	})
	if err != nil {
		return nil, fmt.Errorf("jtvae assembly: %w", err)
	}
	return out, nil
}

// Close releases the scorer's tensors.
func (s *AssemblyScorer) Close() { s.sc.Close() }
