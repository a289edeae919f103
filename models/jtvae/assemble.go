package jtvae

import (
	"fmt"
	"sync"

	"github.com/tlbo-native/tlbo-native/torch"
)

// AssemblyScorer scores candidate attachments while a decoded tree is
// assembled into a molecule (the network's part of the authors'
// dfs_assemble): the tree encoder's messages over the decoded tree are
// computed once, each candidate graph goes through the JTMPN, and its score
// is G_mean(candidate vector) . z_graph (A_assm(z_graph) . vector with the
// bilinear switch). The caller adds the aromaticity scores and ranks.
type AssemblyScorer struct {
	g      *AssemblyScorers
	rows   edgeIDs       // tree edge -> message id
	zGraph *torch.Tensor // (1, latent graph)
	zA     *torch.Tensor // A_assm(zGraph) with the bilinear switch, made at the first Score (in g's scope)
	own    bool          // Close closes g
}

// AssemblyScorers are the scorers of several decoded trees, made by one
// batched pass of the tree encoder; they share its tensors.
type AssemblyScorers struct {
	m       *Model
	sc      *torch.Scope
	table   *torch.Tensor // the encoder's messages over the trees
	tableH  *torch.Tensor // W_h(table), the JTMPN's image of it
	tree    *Batch
	scorers []*AssemblyScorer
	errs    []error

	// The JTMPN's W_i image of candidate bonds' inputs and the first
	// level's W_h of it, which depend on the input features alone (a few
	// hundred distinct rows over a decoding), remembered for every scorer.
	inputMu sync.Mutex
	inputs  *rowCache[string]
}

// NewAssemblyScorer prepares the scoring of one decoded tree (as DecodeTrees
// returns it) with the graph half of its latent point. Close releases it.
func (m *Model) NewAssemblyScorer(tree Tree, zGraph []float32) (*AssemblyScorer, error) {
	g, err := m.NewAssemblyScorers([]Tree{tree}, zGraph)
	if err != nil {
		return nil, err
	}
	s, err := g.Scorer(0)
	if err != nil {
		g.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// NewAssemblyScorers prepares the scoring of the decoded trees (as
// DecodeTrees returns them), tree k with the graph half of a latent point
// zGraph[k*LatentGraph:(k+1)*LatentGraph], encoding them together: the
// messages of each tree are the ones it has encoded alone. A tree that is
// not a decoded tree is left out (Scorer returns its error); err is
// reserved for failures of the batch. Close releases every scorer.
func (m *Model) NewAssemblyScorers(trees []Tree, zGraph []float32) (*AssemblyScorers, error) {
	lg := m.cfg.LatentGraph()
	if len(zGraph) != len(trees)*lg {
		return nil, fmt.Errorf("jtvae assembly: %d graph latent values for %d trees of %d", len(zGraph), len(trees), lg)
	}
	g := &AssemblyScorers{m: m, sc: torch.NewScope(), scorers: make([]*AssemblyScorer, len(trees)), errs: make([]error, len(trees))}
	var exs []Example
	var of []int
	for k, t := range trees {
		if err := validateDecoded(t, m.cfg); err != nil {
			g.errs[k] = fmt.Errorf("jtvae assembly: %w", err)
			continue
		}
		exs, of = append(exs, Example{Tree: t}), append(of, k)
	}
	if len(exs) == 0 {
		return g, nil
	}
	bd := &builder{sc: g.sc, dev: m.Device()}
	g.tree = &Batch{n: len(exs)}
	ids := g.tree.collateTree(bd, m.cfg, exs)
	z := g.sc.Own(torch.FromFloat32(zGraph, int64(len(trees)), int64(lg))).To(m.Device())
	if bd.err != nil {
		g.Close()
		return nil, fmt.Errorf("jtvae assembly: %w", bd.err)
	}
	torch.NoGrad(func() {
		g.table = m.enc.gru.run(g.tree.tree, m.enc.emb, m.cfg.EncoderGRUTanh)
		g.tableH = m.jtmpn.Wh.Forward(g.table)
	})
	if err := g.tableH.Err(); err != nil {
		g.Close()
		return nil, fmt.Errorf("jtvae assembly: %w", err)
	}
	g.inputs = newRowCache[string](g.sc, g.tableH, 2, int64(m.cfg.Hidden))
	for j, k := range of {
		g.scorers[k] = &AssemblyScorer{g: g, rows: ids[j], zGraph: z.Narrow(0, int64(k), 1)}
	}
	return g, nil
}

// Scorer returns tree k's scorer, or why the tree has none.
func (g *AssemblyScorers) Scorer(k int) (*AssemblyScorer, error) {
	if k < 0 || k >= len(g.scorers) {
		return nil, fmt.Errorf("jtvae assembly: tree %d of %d", k, len(g.scorers))
	}
	if g.errs[k] != nil {
		return nil, g.errs[k]
	}
	return g.scorers[k], nil
}

// Close releases the scorers' tensors.
func (g *AssemblyScorers) Close() { g.sc.Close() }

// Score returns the scores of candidate attachments whose injections refer
// to the scorer's tree.
func (s *AssemblyScorer) Score(cands []Candidate) ([]float64, error) { return s.score(cands, true) }

// score is Score; cached false computes the JTMPN's products of the inputs
// afresh instead of taking them from the group's cache (tests).
func (s *AssemblyScorer) score(cands []Candidate, cached bool) ([]float64, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	tree := s.g.tree.tree
	n := len(tree.rows)
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
			inj = append(inj, injection{g: c, atom: int(j[0]), msg: tree.rows[id]})
		}
		gs = append(gs, cand.Graph)
	}
	sc := torch.NewScope()
	defer sc.Close()
	m := s.g.m
	bd := &builder{sc: sc, dev: m.Device()}
	gi := collateGraphs(bd, gs, CandAtomFeatures, CandBondFeatures, m.cfg.DepthG, inj)
	if bd.err != nil {
		return nil, fmt.Errorf("jtvae assembly: %w", bd.err)
	}
	var out []float64
	var err error
	torch.NoGrad(func() {
		var vec *torch.Tensor
		if cached {
			var input, first *torch.Tensor
			if input, first, err = s.g.inputTerms(bd, gi); err != nil {
				return
			}
			vec = m.jtmpn.forwardLevels(gi, input, first, s.g.table, s.g.tableH)
		} else {
			vec = m.jtmpn.forwardTree(gi, s.g.table, s.g.tableH)
		}
		z := s.zGraph
		if m.cfg.BilinearAssembly {
			if s.zA == nil { // the same for every call: computed once, alone as before
				s.zA = m.aAssm.Forward(s.zGraph)
			}
			z = s.zA
		} else {
			vec = m.gMean.Forward(vec)
		}
		out, err = vec.Mul(z).SumDims([]int64{1}, false).Float64s()
	})
	if err != nil {
		return nil, fmt.Errorf("jtvae assembly: %w", err)
	}
	return out, nil
}

// inputTerms returns the JTMPN's W_i image of the graphs' inputs and the
// first level's W_h of its ReLU, from the group's cache (the same bits as
// computing them for these inputs: rowCache).
func (g *AssemblyScorers) inputTerms(bd *builder, gi graphInput) (input, first *torch.Tensor, err error) {
	p := g.m.jtmpn
	n := int(gi.inputs.Shape()[0])
	width := len(gi.rows) / max(n, 1)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = string(float32Bytes(gi.rows[i*width : (i+1)*width]))
	}
	g.inputMu.Lock()
	defer g.inputMu.Unlock()
	views, rows, err := g.inputs.lookup(keys, func(batch []int) []*torch.Tensor {
		at := make([]int64, len(batch))
		for i, j := range batch {
			at[i] = int64(j)
		}
		in := p.Wi.Forward(gi.inputs.IndexSelect(0, bd.ints(at)))
		return []*torch.Tensor{in, p.Wh.Forward(in.Relu())}
	})
	if err != nil {
		return nil, nil, err
	}
	idx := bd.ints(rows)
	// views of the group's tables would join the group's scope, and so would
	// everything computed from them: the call's scope takes them
	for _, v := range views {
		bd.sc.Adopt(v)
	}
	input, first = views[0].IndexSelect(0, idx), views[1].IndexSelect(0, idx)
	return input, first, first.Err()
}

// Close releases the tensors of a scorer made by NewAssemblyScorer; one of
// AssemblyScorers is released with them.
func (s *AssemblyScorer) Close() {
	if s.own {
		s.g.Close()
	}
}
