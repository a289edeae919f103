package jtvae

import (
	"encoding/binary"
	"slices"
	"strings"
	"unsafe"

	"github.com/tlbo-native/tlbo-native/torch"
)

// The graph encoders (the authors' MPN and JTMPN) pass messages along
// directed bonds: a bond x -> y starts from W_i [features of x, bond
// features] and, depthG-1 times, adds W_h of the sum of the messages into x
// except the one from y (and, in the JTMPN, the tree messages injected into
// x); an atom's vector is ReLU(W_o [atom features, sum of the messages into
// it]); a graph's vector is its mean atom vector.
//
// A message depends only on its computation tree (the features within
// depthG-1 bonds and the injected tree messages), and candidate attachments
// of one node share most of theirs, so Collate interns computation trees
// level by level and the network computes each distinct message once. W_h is
// linear, so it is applied to the distinct messages of the previous level
// (and once to the tree messages) before summing instead of after. The
// result equals the authors' up to float rounding.

// injection is a tree message (by table row) added into an atom of graph g.
type injection struct {
	g, atom int
	msg     int64
}

// graphLevel is one message-passing iteration over distinct messages: the
// level-0 input of each, the previous level's messages and the tree rows it
// sums.
type graphLevel struct {
	base       *torch.Tensor // distinct message -> its distinct level-0 input
	prev, tree agg
}

// graphInput is a batch of graphs for the MPN or the JTMPN, interned.
type graphInput struct {
	inputs   *torch.Tensor // (distinct level-0 bonds, F+Fb)
	rows     []float32     // inputs on the host
	levels   []graphLevel  // depthG-1 iterations
	atoms    *torch.Tensor // (distinct atom feature rows, F)
	atomKind *torch.Tensor // each distinct atom's feature row in atoms
	atomIn   agg           // last level's messages into each distinct atom
	atomTree agg           // tree rows into each distinct atom
	graphOf  agg           // distinct atoms of each graph (with repeats)
	size     *torch.Tensor // (graphs, 1) atom counts
	graphs   int
}

// interner numbers distinct keys made of int64 parts.
type interner struct {
	ids map[string]int64
	buf []byte
}

// newInterner returns an interner sized for about n keys (growing the map
// rehashes every key).
func newInterner(n int) *interner { return &interner{ids: make(map[string]int64, n)} }

// id returns the number of the key made of the parts (each length-prefixed)
// and whether it is new.
func (in *interner) id(parts ...[]int64) (int64, bool) {
	in.buf = in.buf[:0]
	for _, p := range parts {
		in.buf = binary.AppendUvarint(in.buf, uint64(len(p)))
		for _, v := range p {
			in.buf = binary.AppendVarint(in.buf, v)
		}
	}
	if id, ok := in.ids[string(in.buf)]; ok {
		return id, false
	}
	id := int64(len(in.ids))
	in.ids[string(in.buf)] = id
	return id, true
}

// rowIDs numbers distinct feature rows by their exact bit patterns.
type rowIDs map[string]int64

func (r rowIDs) id(row []float32) int64 {
	key := unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(row))), 4*len(row))
	if id, ok := r[key]; ok {
		return id
	}
	id := int64(len(r))
	r[strings.Clone(key)] = id
	return id
}

// float32Bytes is the bytes of v (no copy).
func float32Bytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

// dirBond is a directed bond of the batch: source and target atoms (global)
// and the directed bonds it sums.
type dirBond struct {
	src, dst int
	in       []int64
}

// graphHost is a batch of graphs before interning.
type graphHost struct {
	atomRow  [][]float32 // per atom: its features
	atomKey  []int64     // per atom: the number of its feature row
	bondRow  [][]float32 // per directed bond: its bond features
	bondKey  [][2]int64  // per directed bond: source atom and bond feature numbers
	bonds    []dirBond
	into     [][]int64 // per atom: directed bonds into it
	treeInto [][]int64 // per atom: tree rows injected into it, sorted
	first    []int     // per graph: its first atom (its atoms run to the next graph's)
}

// flatten lists the atoms and directed bonds of the graphs in the authors'
// order (each bond as begin -> end, then end -> begin). The per-atom and
// per-bond lists share backing arrays sized up front: collation runs every
// training step, and growing thousands of small slices was most of its time.
func flatten(gs []Graph, fa, fb int, inj []injection) graphHost {
	atoms, bonds := 0, 0
	for _, gr := range gs {
		atoms += len(gr.Atoms) / fa
		bonds += 2 * len(gr.Bonds)
	}
	h := graphHost{
		atomRow: make([][]float32, 0, atoms), atomKey: make([]int64, 0, atoms),
		bondRow: make([][]float32, 0, bonds), bondKey: make([][2]int64, 0, bonds), bonds: make([]dirBond, 0, bonds),
		into: make([][]int64, atoms), treeInto: make([][]int64, atoms), first: make([]int, len(gs)+1),
	}
	atomRows, bondRows := rowIDs{}, rowIDs{}
	degree := make([]int, atoms)
	for g, gr := range gs {
		base := len(h.atomRow)
		h.first[g] = base
		for a := range len(gr.Atoms) / fa {
			row := gr.Atoms[a*fa : (a+1)*fa]
			h.atomRow = append(h.atomRow, row)
			h.atomKey = append(h.atomKey, atomRows.id(row))
		}
		for _, bond := range gr.Bonds {
			degree[base+int(bond[0])]++
			degree[base+int(bond[1])]++
		}
	}
	h.first[len(gs)] = len(h.atomRow)
	intoBuf := make([]int64, 0, bonds)
	for a, d := range degree {
		h.into[a] = intoBuf[len(intoBuf) : len(intoBuf) : len(intoBuf)+d]
		intoBuf = intoBuf[:len(intoBuf)+d]
	}
	inSize := 0
	for g, gr := range gs {
		base := h.first[g]
		for k, bond := range gr.Bonds {
			feat := gr.BondFeatures[k*fb : (k+1)*fb]
			featKey := bondRows.id(feat)
			for _, dir := range [2][2]int32{{bond[0], bond[1]}, {bond[1], bond[0]}} {
				src, dst := base+int(dir[0]), base+int(dir[1])
				h.into[dst] = append(h.into[dst], int64(len(h.bonds)))
				h.bonds = append(h.bonds, dirBond{src: src, dst: dst})
				h.bondRow = append(h.bondRow, feat)
				h.bondKey = append(h.bondKey, [2]int64{h.atomKey[src], featKey})
				inSize += degree[src] - 1
			}
		}
	}
	inBuf := make([]int64, 0, inSize)
	for d := range h.bonds {
		b := &h.bonds[d]
		start := len(inBuf)
		for _, d2 := range h.into[b.src] {
			if h.bonds[d2].src != b.dst {
				inBuf = append(inBuf, d2)
			}
		}
		b.in = inBuf[start:len(inBuf):len(inBuf)]
	}
	for _, j := range inj {
		a := h.first[j.g] + j.atom
		h.treeInto[a] = append(h.treeInto[a], j.msg)
	}
	for _, t := range h.treeInto {
		slices.Sort(t)
	}
	return h
}

// collateGraphs interns the graphs' computation trees for depth-1
// iterations and makes the index tensors.
func collateGraphs(bd *builder, gs []Graph, fa, fb, depth int, inj []injection) graphInput {
	h := flatten(gs, fa, fb, inj)
	gi := graphInput{graphs: len(gs)}

	// level 0: the inputs
	in0 := newInterner(len(h.bonds))
	var inputs []float32
	key := make([]int64, len(h.bonds))
	for d := range h.bonds {
		id, fresh := in0.id(h.bondKey[d][:])
		if fresh {
			inputs = append(inputs, h.atomRow[h.bonds[d].src]...)
			inputs = append(inputs, h.bondRow[d]...)
		}
		key[d] = id
	}
	gi.inputs = bd.floats(inputs, int64(len(in0.ids)), int64(fa+fb))
	gi.rows = inputs
	base := slices.Clone(key)

	var prev []int64 // scratch
	for range depth - 1 {
		lv := newInterner(len(h.bonds))
		next := make([]int64, len(h.bonds))
		var baseOf, prevFrom, prevTo, treeFrom, treeTo []int64
		for d, b := range h.bonds {
			prev = prev[:0]
			for _, d2 := range b.in {
				prev = append(prev, key[d2])
			}
			slices.Sort(prev)
			tree := h.treeInto[b.src]
			id, fresh := lv.id(base[d:d+1], prev, tree)
			if fresh {
				baseOf = append(baseOf, base[d])
				for _, p := range prev {
					prevFrom, prevTo = append(prevFrom, p), append(prevTo, id)
				}
				for _, r := range tree {
					treeFrom, treeTo = append(treeFrom, r), append(treeTo, id)
				}
			}
			next[d] = id
		}
		n := len(lv.ids)
		gi.levels = append(gi.levels, graphLevel{base: bd.ints(baseOf),
			prev: bd.agg(prevFrom, prevTo, n), tree: bd.agg(treeFrom, treeTo, n)})
		key = next
	}

	ia := newInterner(len(h.atomRow))
	var atoms []float32
	var kind []int64
	kinds := map[int64]int64{} // atom feature row number -> row of atoms
	var inFrom, inTo, treeFrom, treeTo []int64
	atomID := make([]int64, len(h.atomRow))
	var msgs []int64 // scratch
	for a := range h.atomRow {
		msgs = msgs[:0]
		for _, d := range h.into[a] {
			msgs = append(msgs, key[d])
		}
		slices.Sort(msgs)
		tree := h.treeInto[a]
		id, fresh := ia.id(h.atomKey[a:a+1], msgs, tree)
		if fresh {
			k, seen := kinds[h.atomKey[a]]
			if !seen {
				k = int64(len(kinds))
				kinds[h.atomKey[a]] = k
				atoms = append(atoms, h.atomRow[a]...)
			}
			kind = append(kind, k)
			for _, m := range msgs {
				inFrom, inTo = append(inFrom, m), append(inTo, id)
			}
			for _, r := range tree {
				treeFrom, treeTo = append(treeFrom, r), append(treeTo, id)
			}
		}
		atomID[a] = id
	}
	n := len(ia.ids)
	gi.atoms, gi.atomKind = bd.floats(atoms, int64(len(kinds)), int64(fa)), bd.ints(kind)
	gi.atomIn = bd.agg(inFrom, inTo, n)
	gi.atomTree = bd.agg(treeFrom, treeTo, n)
	var of, graph []int64
	sizes := make([]float32, len(gs))
	for g := range gs {
		for a := h.first[g]; a < h.first[g+1]; a++ {
			of, graph = append(of, atomID[a]), append(graph, int64(g))
		}
		sizes[g] = float32(h.first[g+1] - h.first[g])
	}
	gi.graphOf = bd.agg(of, graph, len(gs))
	gi.size = bd.floats(sizes, int64(len(gs)), 1)
	return gi
}

// forward runs the MPN (tree == nil) or the JTMPN (tree: the encoder's
// message table) on distinct messages and returns each graph's mean atom
// vector.
func (p *mpn) forward(g graphInput, tree *torch.Tensor) *torch.Tensor {
	var treeH *torch.Tensor
	if tree != nil && len(g.levels) > 0 {
		treeH = p.Wh.Forward(tree)
	}
	return p.forwardTree(g, tree, treeH)
}

// forwardTree is forward with the tree messages' W_h images, treeH =
// W_h(tree), given (the same for every group of candidates scored against
// one table, so an assembly computes it once).
func (p *mpn) forwardTree(g graphInput, tree, treeH *torch.Tensor) *torch.Tensor {
	input := p.Wi.Forward(g.inputs)
	var first *torch.Tensor
	if len(g.levels) > 0 {
		first = p.Wh.Forward(input.Relu())
	}
	return p.forwardLevels(g, input, first, tree, treeH)
}

// addSum returns x plus a's sums of the rows of table, the sums in x's
// scope: they would join table's, which may outlive the call (an assembly's
// scorers share one table over a whole decoding).
func addSum(x *torch.Tensor, a agg, table *torch.Tensor) *torch.Tensor {
	s := a.sum(table)
	if sc := x.Scope(); sc != nil {
		sc.Adopt(s)
	} else {
		defer s.Close()
	}
	return x.Add(s)
}

// forwardLevels is forwardTree from the inputs' W_i image and, when there
// are levels, the first level's W_h(ReLU(input)).
func (p *mpn) forwardLevels(g graphInput, input, first, tree, treeH *torch.Tensor) *torch.Tensor {
	var msg *torch.Tensor
	if len(g.levels) == 0 {
		msg = input.Relu()
	}
	for i, l := range g.levels {
		wh := first
		if i > 0 {
			wh = p.Wh.Forward(msg)
		}
		nei := l.prev.sum(wh)
		if treeH != nil {
			nei = addSum(nei, l.tree, treeH)
		}
		msg = input.IndexSelect(0, l.base).Add(nei).Relu()
	}
	nei := g.atomIn.sum(msg)
	if tree != nil {
		nei = addSum(nei, g.atomTree, tree)
	}
	// W_o [features, nei]: the feature half once per distinct feature row
	f, h := g.atoms.Shape()[1], nei.Shape()[1]
	woF, woN := p.Wo.Weight.Narrow(1, 0, f), p.Wo.Weight.Narrow(1, f, h) // parameter views: no scope
	defer woF.Close()
	defer woN.Close()
	feat := torch.Linear(g.atoms, woF, p.Wo.Bias).IndexSelect(0, g.atomKind)
	atoms := feat.Add(torch.Linear(nei, woN, nil)).Relu()
	return g.graphOf.sum(atoms).Div(g.size)
}
