package jtvae

import (
	"math"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
)

// sum returns the aggregated rows of src: the flat form of the authors'
// padded neighbour gathers (their padding rows are zero messages and add
// nothing).
func (a agg) sum(src *torch.Tensor) *torch.Tensor { return src.EmbeddingBagSum(a.idx, a.offsets) }

// gruPass is the GRU of a schedule: the gate inputs that depend only on
// the sender's label are computed once per distinct label (W_z, W_h split
// into their label and message halves) and gathered per block.
type gruPass struct {
	g          *gru
	wzH, whH   *torch.Tensor // message halves of W_z, W_h
	xz, xr, xh *torch.Tensor // (labels, H): label halves with biases, W_r x
	tanh       bool
}

func (g *gru) pass(s schedule, emb *nn.Embedding, tanh bool) gruPass {
	x := emb.Forward(s.labels)
	h := x.Shape()[1]
	// Views of parameters join no scope: the ones used only here are
	// closed here, the message halves by close.
	wzX, whX := g.Wz.Weight.Narrow(1, 0, h), g.Wh.Weight.Narrow(1, 0, h)
	defer wzX.Close()
	defer whX.Close()
	return gruPass{
		g: g, wzH: g.Wz.Weight.Narrow(1, h, h), whH: g.Wh.Weight.Narrow(1, h, h), tanh: tanh,
		xz: torch.Linear(x, wzX, g.Wz.Bias),
		xr: g.Wr.Forward(x),
		xh: torch.Linear(x, whX, g.Wh.Bias),
	}
}

// close releases the pass's views of parameters (autograd keeps what it needs).
func (p gruPass) close() {
	p.wzH.Close()
	p.whH.Close()
}

// step is one GRU update of a block of messages (the authors' GraphGRU /
// nnutils.GRU) from the current table; tanh is the encoder's original
// squashing of the summed message.
func (p gruPass) step(table *torch.Tensor, b block) *torch.Tensor {
	// One gather from the table: sumH sums the gathered rows rather than
	// gathering again, so backward builds one table-sized gradient per block.
	hIn := table.IndexSelect(0, b.in.idx)
	sumH := hIn.EmbeddingBagSum(b.iota, b.in.offsets)
	if p.tanh {
		sumH = sumH.Tanh()
	}
	z := p.xz.IndexSelect(0, b.label).Add(torch.Linear(sumH, p.wzH, nil)).Sigmoid()
	r := p.xr.IndexSelect(0, b.pairLabel).Add(p.g.Ur.Forward(hIn)).Sigmoid()
	gated := r.Mul(hIn).EmbeddingBagSum(b.iota, b.in.offsets)
	pre := p.xh.IndexSelect(0, b.label).Add(torch.Linear(gated, p.whH, nil)).Tanh()
	return z.RSubScalar(1).Mul(sumH).Add(z.Mul(pre))
}

// run computes every message of a schedule and returns the table (row 0
// zero, distinct message i at row i+1): the levels in one fused operator,
// or the synchronous sweeps, each superseded table released at once
// (autograd keeps what it needs; Cat saves no input).
func (g *gru) run(s schedule, emb *nn.Embedding, tanh bool) *torch.Tensor {
	p := g.pass(s, emb, tanh)
	defer p.close()
	if s.iterations == 1 {
		xr := p.xr
		if g.Ur.Bias != nil { // the pairs' r gate takes U_r's bias with W_r x
			xr = xr.Add(g.Ur.Bias)
		}
		return torch.GraphGRU(p.xz, xr, p.xh, p.wzH, g.Ur.Weight, p.whH, s.levels, tanh)
	}
	hidden := p.xz.Shape()[1]
	zero := p.xz.NewZeros([]int64{1, hidden})
	table := torch.Cat([]*torch.Tensor{zero, p.xz.NewZeros([]int64{int64(s.n), hidden})}, 0)
	for range s.iterations {
		next := torch.Cat([]*torch.Tensor{zero, p.step(table, s.blocks[0])}, 0)
		table.Close()
		table = next
	}
	return table
}

// encodeTree returns the tree vectors (B, H) and the message table.
func (m *Model) encodeTree(b *Batch) (vecs, table *torch.Tensor) {
	e := m.enc
	table = e.gru.run(b.tree, e.emb, m.cfg.EncoderGRUTanh)
	root := e.emb.Forward(b.rootWid)
	in := b.rootIn.sum(table)
	return e.output.Forward(torch.Cat([]*torch.Tensor{root, in}, 1)), table
}

// Encode returns the tree and graph vectors (B, H) of a batch and keeps the
// tree messages for the assembly loss.
func (m *Model) Encode(b *Batch) (tree, graph *torch.Tensor) {
	tree, b.treeMess = m.encodeTree(b)
	return tree, m.mpn.forward(b.graph, nil)
}

// EncodeParams returns the mean (B, latent: tree columns, then graph) and
// the log standard deviation, -|W_var h| / 2 (Mueller et al., as the authors).
func (m *Model) EncodeParams(mb models.Batch) (mu, logStd *torch.Tensor) {
	b := mb.(*Batch)
	return m.latentParams(m.Encode(b))
}

// latentParams maps the tree and graph vectors to EncodeParams' mean and
// log standard deviation.
func (m *Model) latentParams(tree, graph *torch.Tensor) (mu, logStd *torch.Tensor) {
	mu = torch.Cat([]*torch.Tensor{m.tMean.Forward(tree), m.gMean.Forward(graph)}, 1)
	logVar := torch.Cat([]*torch.Tensor{m.tVar.Forward(tree), m.gVar.Forward(graph)}, 1)
	return mu, logVar.Abs().MulScalar(-0.5)
}

// Losses are the reconstruction terms of a batch (sums over the batch
// divided by its size, as the authors) and the accuracies (detached scalars:
// labels predicted right, stop/expand decisions right, groups whose true
// candidate scores highest).
type Losses struct {
	Word, Topo, Assm          *torch.Tensor
	WordAcc, TopoAcc, AssmAcc *torch.Tensor
}

// ReconstructionLoss is word + topology + assembly loss for latent samples z
// (B, latent).
func (m *Model) ReconstructionLoss(z *torch.Tensor, mb models.Batch) *torch.Tensor {
	total, _, _ := m.ReconstructionTerms(z, mb)
	return total
}

// ReconstructionTerms is ReconstructionLoss with its terms for the
// training report: the word, topology and assembly losses and accuracies.
func (m *Model) ReconstructionTerms(z *torch.Tensor, mb models.Batch) (*torch.Tensor, []string, []*torch.Tensor) {
	l := m.Losses(z, mb.(*Batch))
	total := l.Word.Add(l.Topo)
	assm, assmAcc := l.Assm, l.AssmAcc
	if assm != nil {
		total = total.Add(assm)
	} else { // a batch without assembly groups: nothing to score
		assm, assmAcc = l.Word.MulScalar(0), l.WordAcc.MulScalar(0)
	}
	names := []string{"word", "topo", "assm", "word_acc", "topo_acc", "assm_acc"}
	terms := []*torch.Tensor{l.Word, l.Topo, assm, l.WordAcc, l.TopoAcc, assmAcc}
	for i, t := range terms {
		terms[i] = t.Detach()
	}
	return total, names, terms
}

// Losses returns the three reconstruction terms; Assm is nil for a batch
// without assembly groups.
func (m *Model) Losses(z *torch.Tensor, b *Batch) Losses {
	lt := int64(m.cfg.LatentTree)
	zTree := z.Narrow(1, 0, lt)
	zGraph := z.Narrow(1, lt, int64(m.cfg.LatentGraph()))
	var l Losses
	l.Word, l.Topo, l.WordAcc, l.TopoAcc = m.decoderLoss(zTree, b)
	l.Assm, l.AssmAcc = m.assemblyLoss(zGraph, b)
	return l
}

// fractionTrue is the share of true elements of a boolean tensor, detached.
func fractionTrue(t *torch.Tensor) *torch.Tensor {
	return t.Detach().ToDType(torch.Float32).Mean()
}

// decoderLoss is the authors' JTNNDecoder.forward: teacher-forced messages,
// label cross-entropy and stop/expand BCE, both summed and divided by B.
func (m *Model) decoderLoss(zTree *torch.Tensor, b *Batch) (word, topo, wordAcc, topoAcc *torch.Tensor) {
	d := m.dec
	table := d.gru.run(b.dec, d.emb, false)
	n := float64(b.n)

	hidden := table.Shape()[1]
	hid := table.IndexSelect(0, b.wordRow)
	scores := d.Wo.Forward(splitLinear(d.W, hidden, hid, zTree, b.wordMol).Relu())
	word = torch.CrossEntropyLoss(scores, b.wordTarget, torch.ReduceSum).DivScalar(n)
	wordAcc = fractionTrue(scores.ArgMax(1, false).Eq(b.wordTarget))

	stop := d.Uo.Forward(d.stopHidden(table, zTree, b).Relu()).Squeeze(1)
	topo = torch.BCEWithLogitsLoss(stop, b.stopTarget, nil, torch.ReduceSum).DivScalar(n)
	topoAcc = fractionTrue(stop.GeScalar(0).Eq(b.stopTarget.GtScalar(0.5)))
	return word, topo, wordAcc, topoAcc
}

// stopHidden is U [U_i [x, o], z] of every stop decision (x the node's
// label embedding, o the sum of the messages it has received), before U's
// ReLU. U_i's label half runs once per distinct label, its message half
// once per table row (fewer than the decisions, whose o sums them). Without
// the ReLU after U_i (the authors' setting), U's hidden half composes with
// U_i's message half into one (H, H) matrix that maps the table rows, so
// that no product runs once per decision.
func (d *treeDecoder) stopHidden(table, zTree *torch.Tensor, b *Batch) *torch.Tensor {
	hidden := table.Shape()[1]
	uiX, uiO := d.Ui.Weight.Narrow(1, 0, hidden), d.Ui.Weight.Narrow(1, hidden, hidden) // parameter views: no scope
	defer uiX.Close()
	defer uiO.Close()
	x := torch.Linear(d.emb.Forward(b.stopLabels.labels), uiX, d.Ui.Bias)
	if d.stopReLU {
		h := x.IndexSelect(0, b.stopLabels.of).Add(b.stopIn.sum(torch.Linear(table, uiO, nil))).Relu()
		return splitLinear(d.U, hidden, h, zTree, b.stopMol)
	}
	w := d.U.Weight.Shape()
	uH, uZ := d.U.Weight.Narrow(1, 0, hidden), d.U.Weight.Narrow(1, hidden, w[1]-hidden)
	defer uH.Close()
	defer uZ.Close()
	m := uH.MatMul(uiO) // of views only: no scope, and autograd keeps what it needs
	defer m.Close()
	msg := torch.Linear(table, m, nil)
	h := torch.Linear(x, uH, nil).IndexSelect(0, b.stopLabels.of).Add(b.stopIn.sum(msg))
	return h.Add(torch.Linear(zTree, uZ, d.U.Bias).IndexSelect(0, b.stopMol))
}

// splitLinear is l([x, z[mol]]) for l's first k input columns taking x:
// the z half once per molecule, then gathered, instead of a concatenation.
func splitLinear(l *nn.Linear, k int64, x, z, mol *torch.Tensor) *torch.Tensor {
	w := l.Weight.Shape()
	wx, wz := l.Weight.Narrow(1, 0, k), l.Weight.Narrow(1, k, w[1]-k) // parameter views: no scope
	defer wx.Close()
	defer wz.Close()
	return torch.Linear(x, wx, l.Bias).Add(torch.Linear(z, wz, nil).IndexSelect(0, mol))
}

// assemblyLoss is the authors' JTNNVAE.assm: candidate vectors from the JTMPN
// scored against the graph latent, cross-entropy over each group's
// candidates, summed and divided by B.
func (m *Model) assemblyLoss(zGraph *torch.Tensor, b *Batch) (loss, acc *torch.Tensor) {
	if b.nGroups == 0 {
		return nil, nil
	}
	if b.treeMess == nil {
		_, b.treeMess = m.encodeTree(b)
	}
	cand := m.jtmpn.forward(b.cand, b.treeMess.IndexSelect(0, b.candTree))
	mol := zGraph.IndexSelect(0, b.candMol)
	if m.cfg.BilinearAssembly {
		mol = m.aAssm.Forward(mol)
	} else {
		cand = m.gMean.Forward(cand)
	}
	scores := cand.Mul(mol).SumDims([]int64{1}, false)
	padded := torch.Cat([]*torch.Tensor{scores, scores.NewZeros([]int64{1}).AddScalar(math.Inf(-1))}, 0)
	logits := padded.IndexSelect(0, b.groupIdx.Flatten(0, -1)).View(b.groupIdx.Shape()...)
	maxScore, _ := logits.MaxDim(1, false)
	best := logits.Gather(1, b.groupLabel.Unsqueeze(1)).Squeeze(1).Ge(maxScore)
	return torch.CrossEntropyLoss(logits, b.groupLabel, torch.ReduceSum).DivScalar(float64(b.n)), fractionTrue(best)
}
