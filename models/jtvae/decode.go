package jtvae

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tlbo-native/tlbo-native/torch"
)

// MaxDecodeSteps is the authors' bound on the tree decoder's steps per
// molecule (MAX_DECODE_LEN).
const MaxDecodeSteps = 100

// Slot is one atom of a vocabulary cluster as the decoder matches
// attachments: element symbol, formal charge and total hydrogens (the
// authors' Vocab.get_slots).
type Slot struct {
	Symbol string
	Charge int
	Hs     int
}

// TreeChemistry is what greedy tree decoding needs of the chemistry.
type TreeChemistry interface {
	// Slots returns the slots of a vocabulary cluster (a fresh slice: the
	// decoder consumes it).
	Slots(label int64) []Slot
	// CanAssemble reports whether the cluster center can be attached to its
	// neighbours (the authors' can_assemble: enum_assemble finds at least one
	// candidate) while decoding molecule mol (the row of z); leaf[i] says
	// whether neighbour i is a leaf. An error wrapping ErrGiveUp ends that
	// molecule's decoding (Decoded.Err); any other error ends DecodeTrees.
	CanAssemble(mol int, center int64, neighbours []int64, leaf []bool) (bool, error)
}

// ErrGiveUp, wrapped by TreeChemistry.CanAssemble, gives up one molecule
// (e.g. its time is up) without failing the others.
var ErrGiveUp = errors.New("jtvae decode: gave up")

// Decoded is one molecule's decoded junction tree.
type Decoded struct {
	Tree
	// AtomMaps is the atom-map number each node's cluster is left with by
	// the authors' can_assemble, which sets it on the node objects that
	// assembly then uses: 1 on the node being expanded, on each of its
	// neighbours 0 (a leaf) or its position + 2. Assembly resets every node
	// that is not a leaf to its ID; a leaf keeps this value.
	AtomMaps []int
	// Err is set when the chemistry gave up on the molecule (ErrGiveUp).
	Err error
}

// decNode is a node of a tree being decoded.
type decNode struct {
	label     int64
	neighbors []int32 // the parent first, then children as they finish
}

// treeDecode is one molecule's decoding state.
type treeDecode struct {
	mol   int // row of z
	nodes []decNode
	amaps []int              // atom map left on each node's cluster (Decoded.AtomMaps)
	stack []int32            // node ids
	slots map[int32]*[]Slot  // remaining slots of the nodes on the stack
	msg   map[[2]int32]int64 // message x -> y: table row
	done  bool
	err   error // gave up
}

// DecodeTrees runs the authors' tree decoder (JTNNDecoder.decode) on the
// tree halves of z (n, latent: the first LatentTree columns are used), all
// molecules stepping together, for at most maxSteps steps (0:
// MaxDecodeSteps): greedy with nil rngs (prob_decode false), else sampled
// as theirs with prob_decode, molecule i drawing from rngs[i] only (expand
// with probability sigmoid(stop score), the five labels to try drawn
// without replacement from the softmax; the root is the most likely label
// either way), so that a molecule's tree does not depend on the others in
// the batch. It returns
// each molecule's junction tree: nodes in creation order (node 0 the root),
// each node's neighbours in the authors' order (parent, then children in the
// order they were finished).
func (m *Model) DecodeTrees(z []float32, chem TreeChemistry, maxSteps int, rngs []*rand.Rand) ([]Decoded, error) {
	if maxSteps <= 0 {
		maxSteps = MaxDecodeSteps
	}
	lat := m.cfg.Latent
	if len(z) == 0 || len(z)%lat != 0 {
		return nil, fmt.Errorf("jtvae decode: %d latent values are not whole rows of %d", len(z), lat)
	}
	n := len(z) / lat
	if rngs != nil && len(rngs) != n {
		return nil, fmt.Errorf("jtvae decode: %d random streams for %d molecules", len(rngs), n)
	}
	var out []Decoded
	var err error
	torch.NoGrad(func() {
		sc := torch.NewScope()
		defer sc.Close()
		zt := sc.Own(torch.FromFloat32(z, int64(n), int64(lat))).To(m.Device()).Narrow(1, 0, int64(m.cfg.LatentTree))
		out, err = m.decodeTrees(sc, zt, chem, maxSteps, rngs)
	})
	return out, err
}

func (m *Model) decodeTrees(sc *torch.Scope, zt *torch.Tensor, chem TreeChemistry, maxSteps int, rngs []*rand.Rand) ([]Decoded, error) {
	d := m.dec
	n := int(zt.Shape()[0])
	hidden := int64(m.cfg.Hidden)
	bd := &builder{sc: sc, dev: m.Device()}
	table := newMsgTable(zt.NewZeros([]int64{1 + 4*int64(n), hidden}))
	lt := newLabelTerms(m, bd)

	// root labels: the word head on the zero message
	scores := d.Wo.Forward(d.W.Forward(torch.Cat([]*torch.Tensor{zt.NewZeros([]int64{int64(n), hidden}), zt}, 1)).Relu())
	roots, err := scores.ArgMax(1, false).Int64s()
	if err != nil {
		return nil, fmt.Errorf("jtvae decode: %w", err)
	}
	dec := make([]*treeDecode, n)
	for i, r := range roots {
		s := chem.Slots(r)
		dec[i] = &treeDecode{mol: i, nodes: []decNode{{label: r}}, amaps: []int{0}, stack: []int32{0},
			slots: map[int32]*[]Slot{0: &s}, msg: map[[2]int32]int64{}}
	}
	for range maxSteps {
		var active []int
		for i, t := range dec {
			if !t.done {
				active = append(active, i)
			}
		}
		if len(active) == 0 {
			break
		}
		mark := sc.Mark()
		err = m.decodeStep(bd, lt, table, zt, dec, active, chem, rngs)
		sc.ReleaseSince(mark) // a step's tensors: only the tables it grew outlive it
		if err != nil {
			return nil, err
		}
		if bd.err != nil {
			return nil, fmt.Errorf("jtvae decode: %w", bd.err)
		}
	}
	out := make([]Decoded, n)
	for i, t := range dec {
		for _, nd := range t.nodes {
			out[i].Labels = append(out[i].Labels, nd.label)
			out[i].Neighbors = append(out[i].Neighbors, nd.neighbors)
		}
		out[i].AtomMaps, out[i].Err = t.amaps, t.err
	}
	return out, nil
}

// msgTable is the tree decoder's message table (row 0 the zero message):
// rows are appended in place into a buffer that doubles when full, as a
// concatenation per step would copy the whole table at every step.
type msgTable struct {
	buf  *torch.Tensor
	rows int64
}

// newMsgTable returns a table of one zero row in the zero buffer buf.
func newMsgTable(buf *torch.Tensor) *msgTable { return &msgTable{buf: buf, rows: 1} }

// view is the table's rows (a view of the buffer, valid until the next
// append).
func (t *msgTable) view() *torch.Tensor { return t.buf.Narrow(0, 0, t.rows) }

// append adds the rows of h.
func (t *msgTable) append(h *torch.Tensor) error {
	if err := h.Err(); err != nil {
		return err
	}
	k := h.Shape()[0]
	if size := t.buf.Shape(); t.rows+k > size[0] {
		buf := t.buf.NewZeros([]int64{max(2*size[0], t.rows+k), size[1]})
		if sc := buf.Scope(); sc != nil {
			sc.Keep(buf) // outlives the step that grew it (decodeTrees releases each step's tensors)
		}
		old := t.view()
		err := copyInto(buf.Narrow(0, 0, t.rows), old)
		old.Close()
		if err != nil {
			return err
		}
		t.buf.Close() // views handed out before keep their storage
		t.buf = buf
	}
	if err := copyInto(t.buf.Narrow(0, t.rows, k), h); err != nil {
		return err
	}
	t.rows += k
	return nil
}

// copyInto copies src into dst, a view of the table made for the copy, and
// closes dst (the table may outlive the caller's scope).
func copyInto(dst, src *torch.Tensor) error {
	defer dst.Close()
	return dst.Copy_(src)
}

// gruRows runs the decoder's GRU once on messages with the given sender
// labels and incoming table rows, and appends them to the table (their
// rows: old length + i).
func (m *Model) gruRows(bd *builder, lt *labelTerms, table *msgTable, labels []int64, in [][]int64) error {
	p, rows, err := lt.gruPass(labels)
	if err != nil {
		return err
	}
	return table.append(p.step(table.view(), makeBlock(bd, 0, rows, in)))
}

// decodeStep advances every active molecule by one step of the authors'
// loop: stop score of the node on top of the stack; when it says go on, the
// expansion message and the top five labels in order until one whose slots
// fit and that the chemistry can assemble becomes a child; otherwise
// backtrack to the parent (or finish at the root). As theirs, the
// expansion message and the labels are computed only for the molecules
// that go on.
func (m *Model) decodeStep(bd *builder, lt *labelTerms, table *msgTable, zt *torch.Tensor, dec []*treeDecode, active []int, chem TreeChemistry, rngs []*rand.Rand) error {
	labels, in, mols := make([]int64, len(active)), make([][]int64, len(active)), make([]int64, len(active))
	for k, i := range active {
		t := dec[i]
		x := t.stack[len(t.stack)-1]
		labels[k], mols[k] = t.nodes[x].label, int64(i)
		for _, y := range t.nodes[x].neighbors {
			in[k] = append(in[k], t.msg[[2]int32{y, x}])
		}
	}
	ctx := selectRows(bd, zt, mols)
	stop, err := m.stopScores(bd, lt, table.view(), ctx, labels, in)
	if err != nil {
		return err
	}
	var goOn []int // places in active of the molecules that go on
	for k, i := range active {
		expand := stop[k] >= 0
		if rngs != nil {
			expand = rngs[i].Float64() < 1/(1+math.Exp(-float64(stop[k])))
		}
		if expand {
			goOn = append(goOn, k)
		}
	}
	rows0 := table.rows
	ranked, err := m.expansions(bd, lt, table, ctx, labels, in, goOn, active, rngs)
	if err != nil {
		return err
	}
	next := 0 // index into goOn
	var backLabels []int64
	var backIn [][]int64
	var backOf []int
	for k, i := range active {
		t := dec[i]
		xID := t.stack[len(t.stack)-1]
		if next < len(goOn) && goOn[next] == k {
			j := next
			next++
			ok, err := t.expand(xID, ranked[5*j:5*j+5], rows0+int64(j), chem)
			if errors.Is(err, ErrGiveUp) {
				t.done, t.err = true, err
				continue
			}
			if err != nil {
				return err
			}
			if ok {
				continue
			}
		}
		if len(t.stack) == 1 {
			t.done = true
			continue
		}
		fa := t.stack[len(t.stack)-2]
		var rows []int64
		for _, y := range t.nodes[xID].neighbors {
			if y != fa {
				rows = append(rows, t.msg[[2]int32{y, xID}])
			}
		}
		backLabels, backIn, backOf = append(backLabels, labels[k]), append(backIn, rows), append(backOf, i)
	}
	if len(backOf) == 0 {
		return nil
	}
	rows1 := table.rows
	if err := m.gruRows(bd, lt, table, backLabels, backIn); err != nil {
		return fmt.Errorf("jtvae decode: %w", err)
	}
	for k, i := range backOf {
		t := dec[i]
		x, fa := t.stack[len(t.stack)-1], t.stack[len(t.stack)-2]
		t.msg[[2]int32{x, fa}] = rows1 + int64(k)
		t.nodes[fa].neighbors = append(t.nodes[fa].neighbors, x)
		delete(t.slots, x)
		t.stack = t.stack[:len(t.stack)-1]
	}
	return nil
}

// selectRows returns the rows of t (n rows) at rows; t itself when rows
// are 0, 1, ..., n-1 (every molecule active, or all going on: a selection
// would copy t for nothing).
func selectRows(bd *builder, t *torch.Tensor, rows []int64) *torch.Tensor {
	identity := int64(len(rows)) == t.Shape()[0]
	for k, r := range rows {
		identity = identity && r == int64(k)
	}
	if identity {
		return t
	}
	return t.IndexSelect(0, bd.ints(rows))
}

// stopScores are the stop scores of the nodes with the given labels and
// incoming message rows, ctx their molecules' tree latents.
func (m *Model) stopScores(bd *builder, lt *labelTerms, tab, ctx *torch.Tensor, labels []int64, in [][]int64) ([]float32, error) {
	d := m.dec
	var from, to []int64
	for k, rows := range in {
		for _, r := range rows {
			from, to = append(from, r), append(to, int64(k))
		}
	}
	sum := bd.agg(from, to, len(labels)).sum(tab)
	x, err := lt.stop(labels)
	if err != nil {
		return nil, fmt.Errorf("jtvae decode: %w", err)
	}
	h := x.Add(torch.Linear(sum, lt.uiH, nil))
	if d.stopReLU {
		h = h.Relu()
	}
	stop, err := d.Uo.Forward(d.U.Forward(torch.Cat([]*torch.Tensor{h, ctx}, 1)).Relu()).Float32s()
	if err != nil {
		return nil, fmt.Errorf("jtvae decode: %w", err)
	}
	return stop, nil
}

// expansions appends to the table the expansion messages of the rows goOn
// of the step (places in active), in that order, and returns each one's
// five labels to try: the most likely in order, or drawn from its
// molecule's stream.
func (m *Model) expansions(bd *builder, lt *labelTerms, table *msgTable, ctx *torch.Tensor, labels []int64, in [][]int64, goOn, active []int, rngs []*rand.Rand) ([]int64, error) {
	if len(goOn) == 0 {
		return nil, nil
	}
	d := m.dec
	gl, gin, gmol, gplace := make([]int64, len(goOn)), make([][]int64, len(goOn)), make([]int, len(goOn)), make([]int64, len(goOn))
	for j, k := range goOn {
		gl[j], gin[j], gmol[j], gplace[j] = labels[k], in[k], active[k], int64(k)
	}
	rows0 := table.rows
	if err := m.gruRows(bd, lt, table, gl, gin); err != nil {
		return nil, fmt.Errorf("jtvae decode: %w", err)
	}
	newH := table.view().Narrow(0, rows0, int64(len(goOn)))
	logits := d.Wo.Forward(d.W.Forward(torch.Cat([]*torch.Tensor{newH, selectRows(bd, ctx, gplace)}, 1)).Relu())
	var ranked []int64
	var err error
	if rngs == nil {
		_, order := logits.TopK(5, 1, true)
		ranked, err = order.Int64s()
	} else {
		ranked, err = sampleLabels(logits, gmol, rngs)
	}
	if err != nil {
		return nil, fmt.Errorf("jtvae decode: %w", err)
	}
	return ranked, nil
}

// expand tries the ranked labels as a child of node x (message row row) and
// reports whether one was added.
func (t *treeDecode) expand(x int32, ranked []int64, row int64, chem TreeChemistry) (bool, error) {
	fa := t.slots[x]
	for _, w := range ranked {
		s := chem.Slots(w)
		if !haveSlots(fa, &s) {
			continue
		}
		nbrs := append(slices.Clone(t.nodes[x].neighbors), -1)
		labels := make([]int64, len(nbrs))
		leaf := make([]bool, len(nbrs))
		for i, y := range nbrs {
			if y < 0 {
				labels[i], leaf[i] = w, true
				continue
			}
			labels[i], leaf[i] = t.nodes[y].label, len(t.nodes[y].neighbors) <= 1
		}
		// can_assemble leaves its atom maps on the nodes it was given
		t.amaps[x] = 1
		for i, y := range nbrs[:len(nbrs)-1] {
			t.amaps[y] = 0
			if !leaf[i] {
				t.amaps[y] = i + 2
			}
		}
		ok, err := chem.CanAssemble(t.mol, t.nodes[x].label, labels, leaf)
		if err != nil {
			return false, fmt.Errorf("jtvae decode: %w", err)
		}
		if !ok {
			continue
		}
		y := int32(len(t.nodes))
		t.nodes = append(t.nodes, decNode{label: w, neighbors: []int32{x}})
		t.amaps = append(t.amaps, 0)
		t.msg[[2]int32{x, y}] = row
		t.slots[y] = &s
		t.stack = append(t.stack, y)
		return true, nil
	}
	return false, nil
}

// sampleLabels draws, for each row k of logits (molecule mols[k]), five
// labels without replacement in proportion to the softmax
// (torch.multinomial(softmax, 5)) from that molecule's stream.
func sampleLabels(logits *torch.Tensor, mols []int, rngs []*rand.Rand) ([]int64, error) {
	probs, err := logits.Softmax(1).Float64s()
	if err != nil {
		return nil, err
	}
	v := int(logits.Shape()[1])
	var out []int64
	for k, i := range mols {
		p := slices.Clone(probs[k*v : (k+1)*v])
		for _, w := range SampleWithoutReplacement(p, 5, rngs[i]) {
			out = append(out, int64(w))
		}
	}
	return out, nil
}

// SampleWithoutReplacement draws n indices of weights without replacement,
// each in proportion to the weights left (torch.multinomial without
// replacement); it zeroes the drawn weights. Where fewer than n weights are
// positive, the rest follow in index order.
func SampleWithoutReplacement(weights []float64, n int, rng *rand.Rand) []int {
	out := make([]int, 0, n)
	for len(out) < n && len(out) < len(weights) {
		total := 0.0
		for _, w := range weights {
			total += w
		}
		k := -1
		if total > 0 {
			u := rng.Float64() * total
			for i, w := range weights {
				if w <= 0 {
					continue
				}
				k = i
				if u -= w; u < 0 {
					break
				}
			}
		}
		if k < 0 {
			for i := range weights {
				if !slices.Contains(out, i) {
					k = i
					break
				}
			}
		}
		out = append(out, k)
		weights[k] = 0
	}
	return out
}

// haveSlots is the authors' have_slots: whether a child cluster can attach
// to its parent by slots; it consumes the matched slot of a one- or two-atom
// side when only one of its slots matches, as theirs does.
func haveSlots(fa, ch *[]Slot) bool {
	if len(*fa) > 2 && len(*ch) > 2 {
		return true
	}
	var faMatch, chMatch []int
	for i, a := range *fa {
		for j, b := range *ch {
			if a.Symbol == b.Symbol && a.Charge == b.Charge && (a.Symbol != "C" || a.Hs+b.Hs >= 4) {
				faMatch, chMatch = append(faMatch, i), append(chMatch, j)
			}
		}
	}
	if len(faMatch) == 0 {
		return false
	}
	pop := func(s *[]Slot, match []int) {
		if distinct(match) == 1 && len(*s) > 1 && len(*s) <= 2 {
			*s = slices.Delete(slices.Clone(*s), match[0], match[0]+1)
		}
	}
	pop(fa, faMatch)
	pop(ch, chMatch)
	return true
}

func distinct(v []int) int {
	seen := map[int]bool{}
	for _, x := range v {
		seen[x] = true
	}
	return len(seen)
}
