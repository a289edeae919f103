package jtvae

import (
	"fmt"
	"slices"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
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

// schedule is a set of GRU messages ordered by dependency level: row 0 of the
// message table is the zero message, message i (in row order) is row i+1.
// The levels run as one fused operator (levels); the synchronous sweeps of
// a deep tree as one block swept iterations times.
type schedule struct {
	labels     *torch.Tensor // distinct sender labels (embedding indices)
	levels     torch.GRUSchedule
	blocks     []block // the sweeps' block
	iterations int     // 1: the levels, in order; >1: blocks[0] swept synchronously
	rows       []int64 // message id -> table row (shared by identical messages)
	n          int     // distinct messages
}

// levelCount is the number of levels of a level schedule.
func (s *schedule) levelCount() int { return len(s.levels.Levels) - 1 }

// block is one level: messages start..start+count-1 (row order), with their
// incoming messages as (table row, message within the block) pairs sorted by
// message: in.idx are the rows, in.offsets each message's first pair and
// iota 0..pairs-1 (bags over gathered rows). label is each message's index
// among the schedule's labels and pairLabel that of each pair's message:
// the GRU gathers its label terms per block, so that backward touches
// label-sized gradients, not message-sized ones.
type block struct {
	start, count     int64
	in               agg
	iota             *torch.Tensor
	label, pairLabel *torch.Tensor
}

// makeBlock builds the block of messages start.. whose k-th message has
// label index label[k] and sums the table rows in[k].
func makeBlock(bd *builder, start int64, label []int64, in [][]int64) block {
	var from, to, iota, pairLabel []int64
	for k, rows := range in {
		for _, r := range rows {
			from, to = append(from, r), append(to, int64(k))
			iota, pairLabel = append(iota, int64(len(iota))), append(pairLabel, label[k])
		}
	}
	return block{start: start, count: int64(len(in)), in: bd.agg(from, to, len(in)), iota: bd.ints(iota),
		label: bd.ints(label), pairLabel: bd.ints(pairLabel)}
}

// agg sums rows of a source into rows of a result: result row k sums the
// source rows idx[offsets[k]:offsets[k+1]] (embedding-bag sums).
type agg struct {
	idx, offsets *torch.Tensor
}

// msgSpec is a message before scheduling: the sender's embedding index and
// the ids of the messages it sums.
type msgSpec struct {
	wid int64
	in  []int64
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
	sync := cfg.DepthT
	if bd.sweepOnly {
		sync = -cfg.DepthT
	}
	b.tree = buildSchedule(bd, msgs, sync)
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

// levels returns each message's dependency level: 1 without inputs, else 1 +
// the largest level of its inputs (the inputs form a DAG: tree messages from
// the other side, or earlier trace steps).
func levels(msgs []msgSpec) []int {
	lv := make([]int, len(msgs))
	var visit func(i int) int
	visit = func(i int) int {
		if lv[i] > 0 {
			return lv[i]
		}
		l := 1
		for _, j := range msgs[i].in {
			l = max(l, visit(int(j))+1)
		}
		lv[i] = l
		return l
	}
	for i := range msgs {
		visit(i)
	}
	return lv
}

// buildSchedule orders messages by level and keeps one of each set of
// identical messages (same sender label, same incoming messages: the same
// computation tree, so the same value in every sweep); every message's row is
// its representative's. With a depth limit (sync > 0) and a level above it,
// it returns one block swept sync times instead (-sync times for sync < 0):
// the synchronous iterations,
// exact for any tree.
func buildSchedule(bd *builder, msgs []msgSpec, sync int) schedule {
	lv := levels(msgs)
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return lv[a] - lv[b] })
	s := schedule{rows: make([]int64, len(msgs)), iterations: 1}
	keys := newInterner()
	var distinct []int // representative message of each row (row = index+1)
	var wid []int64
	for _, id := range order {
		in := make([]int64, len(msgs[id].in))
		for i, j := range msgs[id].in {
			in[i] = s.rows[j]
		}
		k, fresh := keys.id([]int64{msgs[id].wid}, sorted(in))
		if fresh {
			distinct = append(distinct, id)
			wid = append(wid, msgs[id].wid)
		}
		s.rows[id] = k + 1
	}
	s.n = len(distinct)
	labels, of := distinctLabels(wid)
	s.labels = bd.ints(labels)
	maxLevel := 0
	if len(distinct) > 0 {
		maxLevel = lv[distinct[len(distinct)-1]]
	}
	if sync < 0 || (sync > 0 && maxLevel > sync) {
		s.iterations = max(sync, -sync)
		s.blocks = []block{s.block(bd, msgs, distinct, of, 0, len(distinct))}
		return s
	}
	s.levels = s.fusedLevels(bd, msgs, distinct, of, lv)
	return s
}

// fusedLevels lays out the distinct messages order (label indices of) by
// level lv for torch.GraphGRU.
func (s *schedule) fusedLevels(bd *builder, msgs []msgSpec, order []int, of []int64, lv []int) torch.GRUSchedule {
	var src, dst []int64
	levels, pairs := []int64{0}, []int64{0}
	for lo := 0; lo < len(order); {
		hi := lo
		for hi < len(order) && lv[order[hi]] == lv[order[lo]] {
			hi++
		}
		for k, id := range order[lo:hi] {
			for _, j := range msgs[id].in {
				src, dst = append(src, s.rows[j]), append(dst, int64(k))
			}
		}
		levels, pairs = append(levels, int64(hi)), append(pairs, int64(len(src)))
		lo = hi
	}
	return torch.GRUSchedule{Label: bd.ints(of), Src: bd.ints(src), Dst: bd.ints(dst), Levels: levels, PairLevels: pairs}
}

// block is the block of the distinct messages order[lo:hi], whose label
// indices are of[lo:hi].
func (s *schedule) block(bd *builder, msgs []msgSpec, order []int, of []int64, lo, hi int) block {
	in := make([][]int64, hi-lo)
	for k, id := range order[lo:hi] {
		for _, j := range msgs[id].in {
			in[k] = append(in[k], s.rows[j])
		}
	}
	return makeBlock(bd, int64(lo), of[lo:hi], in)
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
