package jtvae

import (
	"fmt"
	"slices"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// agg sums rows of a source into rows of a result: result row k sums the
// source rows idx[offsets[k]:offsets[k+1]] (embedding-bag sums).
type agg struct {
	idx, offsets *torch.Tensor
}

// Batch is a mini-batch of molecules as index tensors on the network's device.
type Batch struct {
	n int
	// tree encoder
	tree    schedule
	rootWid *torch.Tensor
	rootIn  agg
	graph   graphInput
	// decoder (teacher-forced trace)
	dec                 schedule
	wordRow, wordMol    *torch.Tensor
	wordTarget          *torch.Tensor
	stopLabels          labelIndex
	stopIn              agg
	stopMol, stopTarget *torch.Tensor
	nWord, nStop        int
	// assembly
	cand                 graphInput
	candTree             *torch.Tensor // the encoder's table rows injected into candidates, in cand's numbering
	candMol              *torch.Tensor
	groupIdx, groupLabel *torch.Tensor
	nGroups              int

	treeMess *torch.Tensor // the encoder's message table, kept for the assembly loss
}

// Len is the number of molecules.
func (b *Batch) Len() int { return b.n }

// builder collects host arrays and makes tensors owned by a scope.
type builder struct {
	sc        *torch.Scope
	dev       torch.Device
	err       error
	sweepOnly bool // tests: the tree encoder's synchronous sweeps at any depth
}

func (b *builder) ints(v []int64, shape ...int64) *torch.Tensor {
	if shape == nil {
		shape = []int64{int64(len(v))}
	}
	t := b.onDevice(b.sc.Own(torch.FromInt64(v, shape...)))
	if b.err == nil {
		b.err = t.Err()
	}
	return t
}

func (b *builder) floats(v []float32, shape ...int64) *torch.Tensor {
	t := b.onDevice(b.sc.Own(torch.FromFloat32(v, shape...)))
	if b.err == nil {
		b.err = t.Err()
	}
	return t
}

// onDevice moves a tensor made on the host to the builder's device (a
// host tensor stays as it is: a move would cost a native call for nothing).
func (b *builder) onDevice(t *torch.Tensor) *torch.Tensor {
	if b.dev.Type == torch.CPUDevice {
		return t
	}
	return t.To(b.dev)
}

// agg makes the sums of source rows from[i] into result rows to[i], for
// rows result rows.
func (b *builder) agg(from, to []int64, rows int) agg {
	order := make([]int, len(from))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return int(to[i] - to[j]) })
	idx := make([]int64, len(from))
	offsets := make([]int64, rows)
	for k, i := range order {
		idx[k] = from[i]
	}
	k := 0
	for r := range offsets {
		for k < len(order) && to[order[k]] < int64(r) {
			k++
		}
		offsets[r] = int64(k)
	}
	return agg{idx: b.ints(idx), offsets: b.ints(offsets)}
}

func iotaTo(n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(i)
	}
	return v
}

// labelIndex lists the distinct labels of a batch (labels) and, for each
// item, the index of its label among them (of), so that label-only terms are
// computed once per label.
type labelIndex struct {
	labels, of *torch.Tensor
}

func (b *builder) labelIndex(items []int64) labelIndex {
	labels, of := distinctLabels(items)
	return labelIndex{labels: b.ints(labels), of: b.ints(of)}
}

// distinctLabels returns the distinct labels of items in order of first
// appearance and, for each item, the index of its label among them.
func distinctLabels(items []int64) (labels, of []int64) {
	seen := map[int64]int64{}
	for _, w := range items {
		k, ok := seen[w]
		if !ok {
			k = int64(len(labels))
			seen[w] = k
			labels = append(labels, w)
		}
		of = append(of, k)
	}
	return labels, of
}

// Collate turns examples into a batch on the network's device; its tensors
// belong to sc. Examples without Assembly give a batch that encodes but has
// no assembly loss.
func (m *Model) Collate(sc *torch.Scope, examples []Example) (models.Batch, error) {
	return collate(sc, m.Device(), m.cfg, examples)
}

func collate(sc *torch.Scope, dev torch.Device, cfg Config, examples []Example) (*Batch, error) {
	return collateWith(&builder{sc: sc, dev: dev}, cfg, examples)
}

func collateWith(bd *builder, cfg Config, examples []Example) (*Batch, error) {
	if len(examples) == 0 {
		return nil, fmt.Errorf("jtvae batch: no examples")
	}
	examples, err := unpackAll(examples)
	if err != nil {
		return nil, fmt.Errorf("jtvae batch: %w", err)
	}
	if examples, err = relabel(cfg, examples); err != nil {
		return nil, fmt.Errorf("jtvae batch: %w", err)
	}
	for i := range examples {
		if err := examples[i].validate(cfg); err != nil {
			return nil, fmt.Errorf("jtvae batch: example %d: %w", i, err)
		}
	}
	out := &Batch{n: len(examples)}
	encIDs := out.collateTree(bd, cfg, examples)
	out.graph = collateGraphs(bd, graphsOf(examples), AtomFeatures, BondFeatures, cfg.DepthG, nil)
	out.collateDecoder(bd, examples)
	out.collateAssembly(bd, cfg, examples, encIDs)
	if bd.err != nil {
		return nil, fmt.Errorf("jtvae batch: %w", bd.err)
	}
	return out, nil
}

func graphsOf(examples []Example) []Graph {
	gs := make([]Graph, len(examples))
	for i := range examples {
		gs[i] = examples[i].Graph
	}
	return gs
}

// edgeIDs numbers a tree's directed edges (x -> y) in the authors' order
// (nodes in order, each node's neighbours in order), from first.
type edgeIDs map[[2]int32]int64

func numberEdges(t Tree, first int64) edgeIDs {
	ids := edgeIDs{}
	for x, nb := range t.Neighbors {
		for _, y := range nb {
			ids[[2]int32{int32(x), y}] = first
			first++
		}
	}
	return ids
}

// collateTree builds the encoder's message schedule and root aggregation; it
// returns each example's edge numbering (message ids).
func (b *Batch) collateTree(bd *builder, cfg Config, examples []Example) []edgeIDs {
	var msgs []msgSpec
	all := make([]edgeIDs, len(examples))
	var rootWid, rootIn, rootTo []int64
	for i, ex := range examples {
		t := ex.Tree
		ids := numberEdges(t, int64(len(msgs)))
		all[i] = ids
		into := incoming(t)
		for x, nb := range t.Neighbors {
			for _, y := range nb {
				var in []int64
				for _, z := range into[x] {
					if z != y {
						in = append(in, ids[[2]int32{z, int32(x)}])
					}
				}
				msgs = append(msgs, msgSpec{wid: t.Labels[x], in: in})
			}
		}
		rootWid = append(rootWid, t.Labels[0])
		for _, z := range into[0] {
			rootIn = append(rootIn, ids[[2]int32{z, 0}])
			rootTo = append(rootTo, int64(i))
		}
	}
	depth := cfg.DepthT
	if bd.sweepOnly {
		depth = -cfg.DepthT
	}
	b.tree = buildSchedule(bd, msgs, depth)
	b.rootWid = bd.ints(rootWid)
	b.rootIn = bd.agg(mapRows(rootIn, b.tree.rows), rootTo, len(examples))
	return all
}

// incoming lists, for each node x, the nodes z whose adjacency lists x (the
// senders of the messages z -> x), in the order their messages are numbered.
// In a junction tree of a molecule it is the node's own adjacency; a
// decoded tree cut by the step cap lists some children only on the child's
// side, and the authors' encoder then passes only the messages that exist.
func incoming(t Tree) [][]int32 {
	into := make([][]int32, len(t.Neighbors))
	for z, nb := range t.Neighbors {
		for _, x := range nb {
			into[x] = append(into[x], int32(z))
		}
	}
	return into
}

func mapRows(ids, rows []int64) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = rows[id]
	}
	return out
}

// traceStep is one step of the authors' depth-first trace: the message x -> y,
// downwards (expand) or back up.
type traceStep struct {
	x, y   int32
	expand bool
}

func trace(t Tree) []traceStep {
	var steps []traceStep
	var dfs func(x, parent int32)
	dfs = func(x, parent int32) {
		for _, y := range t.Neighbors[x] {
			if y == parent {
				continue
			}
			steps = append(steps, traceStep{x, y, true})
			dfs(y, x)
			steps = append(steps, traceStep{y, x, false})
		}
	}
	dfs(0, -1)
	return steps
}

// collateDecoder builds the teacher-forced trace of the authors' decoder: a
// message x -> y sums the messages x has received so far except y's; the
// stop prediction at a step sums all of them; labels are predicted for the
// root (from the zero message) and for every expanded child.
func (b *Batch) collateDecoder(bd *builder, examples []Example) {
	var msgs []msgSpec
	var wordMsg, wordMol, wordTarget []int64 // wordMsg -1: the root (zero row)
	var stopWid, stopIn, stopTo, stopMol []int64
	var stopTarget []float32
	stop := func(i int, wid int64, in []int64, target float32) {
		for _, id := range in {
			stopIn = append(stopIn, id)
			stopTo = append(stopTo, int64(len(stopWid)))
		}
		stopWid = append(stopWid, wid)
		stopMol = append(stopMol, int64(i))
		stopTarget = append(stopTarget, target)
	}
	for i, ex := range examples {
		t := ex.Tree
		wordMsg, wordMol, wordTarget = append(wordMsg, -1), append(wordMol, int64(i)), append(wordTarget, t.Labels[0])
		received := make([][]int32, len(t.Labels)) // senders, in arrival order
		ids := map[[2]int32]int64{}
		into := func(x, except int32) []int64 {
			var in []int64
			for _, z := range received[x] {
				if z != except {
					in = append(in, ids[[2]int32{z, x}])
				}
			}
			return in
		}
		for _, st := range trace(t) {
			id := int64(len(msgs))
			msgs = append(msgs, msgSpec{wid: t.Labels[st.x], in: into(st.x, st.y)})
			target := float32(0)
			if st.expand {
				target = 1
				wordMsg, wordMol, wordTarget = append(wordMsg, id), append(wordMol, int64(i)), append(wordTarget, t.Labels[st.y])
			}
			stop(i, t.Labels[st.x], into(st.x, -1), target)
			ids[[2]int32{st.x, st.y}] = id
			received[st.y] = append(received[st.y], st.x)
		}
		stop(i, t.Labels[0], into(0, -1), 0)
	}
	b.dec = buildSchedule(bd, msgs, 0)
	wordRow := make([]int64, len(wordMsg))
	for k, id := range wordMsg {
		if id >= 0 {
			wordRow[k] = b.dec.rows[id]
		}
	}
	b.wordRow, b.wordMol, b.wordTarget = bd.ints(wordRow), bd.ints(wordMol), bd.ints(wordTarget)
	b.stopLabels, b.stopIn = bd.labelIndex(stopWid), bd.agg(mapRows(stopIn, b.dec.rows), stopTo, len(stopWid))
	b.stopMol, b.stopTarget = bd.ints(stopMol), bd.floats(stopTarget, int64(len(stopTarget)))
	b.nWord, b.nStop = len(wordRow), len(stopWid)
}

// collateAssembly batches every candidate of every group; injections refer
// to the encoder's message table rows that some candidate takes (candTree),
// so that the JTMPN maps only those.
func (b *Batch) collateAssembly(bd *builder, cfg Config, examples []Example, encIDs []edgeIDs) {
	var gs []Graph
	var inj []injection
	var candMol, groupLabel []int64
	var groups [][]int64
	var treeRows []int64
	compact := map[int64]int64{} // table row -> its number among the injected rows
	for i, ex := range examples {
		for _, grp := range ex.Assembly {
			var idx []int64
			for _, c := range grp.Candidates {
				for _, j := range c.Injections {
					id := encIDs[i][[2]int32{j[1], j[2]}]
					row := b.tree.rows[id]
					k, ok := compact[row]
					if !ok {
						k = int64(len(treeRows))
						compact[row] = k
						treeRows = append(treeRows, row)
					}
					inj = append(inj, injection{g: len(gs), atom: int(j[0]), msg: k})
				}
				idx = append(idx, int64(len(gs)))
				gs = append(gs, c.Graph)
				candMol = append(candMol, int64(i))
			}
			groups = append(groups, idx)
			groupLabel = append(groupLabel, int64(grp.Label))
		}
	}
	b.nGroups = len(groups)
	if len(groups) == 0 {
		return
	}
	b.cand = collateGraphs(bd, gs, CandAtomFeatures, CandBondFeatures, cfg.DepthG, inj)
	b.candMol, b.candTree = bd.ints(candMol), bd.ints(treeRows)
	width := 0
	for _, g := range groups {
		width = max(width, len(g))
	}
	pad := make([]int64, 0, len(groups)*width)
	for _, g := range groups {
		pad = append(pad, g...)
		for range width - len(g) {
			pad = append(pad, int64(len(gs))) // the -inf score
		}
	}
	b.groupIdx = bd.ints(pad, int64(len(groups)), int64(width))
	b.groupLabel = bd.ints(groupLabel)
}
