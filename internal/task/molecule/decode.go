package molecule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// Decoding latent points into molecules as the authors' JTNNVAE.decode does
// with prob_decode false (their decode_deterministic, which their BO uses):
// greedy tree decoding (jtvae.DecodeTrees), then dfs_assemble, which
// attaches the clusters depth first from the root, trying each node's
// candidate attachments (enum_assemble) in the order of their JTMPN scores
// against z_graph plus check_aroma, backtracking when a subtree cannot be
// assembled, at most MaxAssemblySteps calls; a first pass that rejects a
// node whose candidates all fail the aromaticity check, then, if it fails, a
// second pass without that check, whose partial molecule is kept when it
// fails too. The result is canonical SMILES without atom maps (no stereo:
// their decode does not call decode_stereo); a tree of one node decodes to
// the cluster's vocabulary SMILES, as theirs.
//
// Ours only: a time cap per molecule (DecodeTimeLimit) over its share of
// tree decoding's chemistry and its assembly; a molecule that runs past it,
// or that cannot be assembled at all, is an invalid decode.

// MaxAssemblySteps is the authors' MAX_DFS: dfs_assemble calls per pass.
const MaxAssemblySteps = 1000

// DecodeTimeLimit is the default cap on one molecule's decoding.
const DecodeTimeLimit = 30 * time.Second

// errTimeUp is why a molecule past its time cap is invalid.
var errTimeUp = fmt.Errorf("decoding ran past its time limit: %w", jtvae.ErrGiveUp)

// clusterChem is the chemistry of one vocabulary that decoding needs: slots,
// the Vocab's aromatic rings, can_assemble with its answers cached (they
// depend on the clusters and leaf flags only), and the sanitised
// attachments that enumerations meet again (memo).
type clusterChem struct {
	vocab Vocab
	slots [][]jtvae.Slot
	aroma chem.AromaRings
	memo  *chem.AttachMemo
	nodes []nodeTemplate // by label, made on first use

	can    answers // canAssemble's answers by centre, neighbours and leaf flags
	parses answers // roundTrips' answers by SMILES
}

// answers remembers yes-or-no answers by key for concurrent use, and
// forgets them all once it holds chem.MaxAttachMemo.
type answers struct {
	mu sync.Mutex
	m  map[string]bool
}

// get returns the answer for key and whether there is one.
func (a *answers) get(key string) (ok, found bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ok, found = a.m[key]
	return ok, found
}

// put remembers the answer for key.
func (a *answers) put(key string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil || len(a.m) >= chem.MaxAttachMemo {
		a.m = map[string]bool{}
	}
	a.m[key] = ok
}

// reset forgets every answer.
func (a *answers) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.m = nil
}

var clusterChems struct {
	sync.Mutex
	byVocab map[string]*clusterChem
}

// chemistryOf returns the (shared) chemistry of a vocabulary.
func chemistryOf(v Vocab) (*clusterChem, error) {
	key := strings.Join(v, "\n")
	clusterChems.Lock()
	defer clusterChems.Unlock()
	if c, ok := clusterChems.byVocab[key]; ok {
		return c, nil
	}
	c := &clusterChem{vocab: v, slots: make([][]jtvae.Slot, len(v)), memo: chem.NewAttachMemo(),
		nodes: make([]nodeTemplate, len(v))}
	var err error
	if c.aroma, err = chem.VocabAroma(v); err != nil {
		return nil, err
	}
	for i, s := range v {
		if c.slots[i], err = clusterSlots(s); err != nil {
			return nil, err
		}
	}
	if clusterChems.byVocab == nil {
		clusterChems.byVocab = map[string]*clusterChem{}
	}
	clusterChems.byVocab[key] = c
	return c, nil
}

// clusterSlots is the authors' get_slots: element, formal charge and total
// hydrogens of each atom of the sanitised cluster.
func clusterSlots(smiles string) ([]jtvae.Slot, error) {
	m, err := chem.Smiles(smiles)
	if err != nil {
		return nil, fmt.Errorf("vocabulary cluster %q: %w", smiles, err)
	}
	defer m.Close()
	atoms, err := m.Atoms()
	if err != nil {
		return nil, err
	}
	out := make([]jtvae.Slot, len(atoms))
	for i, a := range atoms {
		out[i] = jtvae.Slot{Symbol: chem.ElementSymbol(a.AtomicNum), Charge: a.FormalCharge, Hs: a.TotalHs}
	}
	return out, nil
}

// nodeTemplate is a vocabulary cluster's node, copied for each use.
type nodeTemplate struct {
	mu sync.Mutex
	n  *chem.Node
}

// node returns a new node of cluster label with ID id (chem.NewNode),
// copied from the cluster's template.
func (c *clusterChem) node(label int64, id int) (*chem.Node, error) {
	t := &c.nodes[label]
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		n, err := chem.NewNode(c.vocab[label], 0)
		if err != nil {
			return nil, err
		}
		t.n = n
	}
	return t.n.Clone(id)
}

// canAssemble is the authors' can_assemble: the center with atom map 1 and
// ID 1, its neighbours with IDs 2, 3, ... and atom map 0 (leaves) or their
// ID, enumerated in assembly order; true when a candidate exists.
func (c *clusterChem) canAssemble(ctx context.Context, center int64, nbrs []int64, leaf []bool) (bool, error) {
	key := fmt.Sprint(center, nbrs, leaf)
	if ok, found := c.can.get(key); found {
		return ok, nil
	}
	ctr, err := c.node(center, 1)
	if err != nil {
		return false, err
	}
	defer ctr.Close()
	if err := ctr.SetAtomMap(1); err != nil {
		return false, err
	}
	neis := make([]*chem.Node, len(nbrs))
	for i, w := range nbrs {
		n, err := c.node(w, i+2)
		if err != nil {
			return false, err
		}
		defer n.Close()
		if !leaf[i] {
			if err := n.SetAtomMap(i + 2); err != nil {
				return false, err
			}
		}
		neis[i] = n
	}
	cands, err := chem.EnumOptions{Aroma: &c.aroma, Ctx: ctx, First: true, Memo: c.memo}.EnumAssemble(ctr, chem.AssemblyOrder(neis), nil, nil)
	if err != nil {
		return false, err
	}
	ok := len(cands) > 0
	c.can.put(key, ok)
	return ok, nil
}

// DecodeStats splits decoding time.
type DecodeStats struct {
	// Tree is the time of tree decoding (network and can_assemble),
	// Assembly that of assembly (enumeration, JTMPN scoring, attachment),
	// each summed over the workers (the wall time on one).
	Tree, Assembly time.Duration
	// Steps counts dfs_assemble calls, Retries the candidates tried after a
	// node's first, SecondPasses the molecules assembled again without the
	// aromaticity check, Partial those decoded to the second pass's partial
	// molecule, Timeouts those past their time limit.
	Steps, Retries, SecondPasses, Partial, Timeouts int
}

// add adds o's times and counts to s.
func (s *DecodeStats) add(o DecodeStats) {
	s.Tree += o.Tree
	s.Assembly += o.Assembly
	s.Steps += o.Steps
	s.Retries += o.Retries
	s.SecondPasses += o.SecondPasses
	s.Partial += o.Partial
	s.Timeouts += o.Timeouts
}

// Decoder decodes latent points into SMILES with a JT-VAE, on several
// goroutines (decode_parallel.go): its fields are read, not written, while
// Decode runs, and one Decoder serves one Decode call at a time.
type Decoder struct {
	m    *jtvae.Model
	chem *clusterChem
	// TimeLimit caps each molecule's decoding (0: no cap).
	TimeLimit time.Duration
	// Sampled makes decoding stochastic as the authors' prob_decode:
	// sampled trees (jtvae.DecodeTrees) and candidates tried in an order
	// drawn without replacement from softmax(scores) + 1e-7. Row i of a call
	// draws from its own stream of Seed (rowStream), so that its molecule
	// does not depend on the other rows or on Workers.
	Sampled bool
	// Seed seeds the streams of a sampled decoding.
	Seed uint64
	// Workers is the number of goroutines decoding at once (0: one per
	// CPU); the molecules do not depend on it.
	Workers int
	// Stats accumulates over calls of Decode.
	Stats DecodeStats
}

// NewDecoder returns a decoder for m over vocab (the checkpoint's own when
// nil), with DecodeTimeLimit.
func NewDecoder(m *jtvae.Model, vocab Vocab) (*Decoder, error) {
	if vocab == nil {
		vocab = m.Config().Vocab
	}
	if len(vocab) == 0 {
		return nil, errors.New("molecule decode: the checkpoint records no vocabulary")
	}
	if len(vocab) != m.Config().VocabSize {
		return nil, fmt.Errorf("molecule decode: a vocabulary of %d clusters for a network of %d", len(vocab), m.Config().VocabSize)
	}
	c, err := chemistryOf(vocab)
	if err != nil {
		return nil, fmt.Errorf("molecule decode: %w", err)
	}
	return &Decoder{m: m, chem: c, TimeLimit: DecodeTimeLimit}, nil
}

// Decode decodes the rows of z (n x latent), greedily unless Sampled is
// set, on Workers goroutines: smiles[i] is "" and errs[i] says why where
// row i gives no molecule (it cannot be assembled, ran past TimeLimit, or
// RDKit failed on it). err is reserved for failures of the whole batch.
func (d *Decoder) Decode(z []float32) (smiles []string, errs []error, err error) {
	lat := d.m.LatentDim()
	if len(z) == 0 || len(z)%lat != 0 {
		return nil, nil, fmt.Errorf("molecule decode: %d latent values are not whole rows of %d", len(z), lat)
	}
	c := d.newCall(len(z) / lat)
	defer c.close()
	trees, err := c.decodeTrees(z)
	if err == nil {
		smiles, errs = c.assembleAll(trees)
	}
	for _, s := range c.stats {
		d.Stats.add(s)
	}
	return smiles, errs, err
}

// assemble turns molecule mol's decoded tree into SMILES (JTNNVAE._decode
// after the tree decoder) with its scorer, counting into st.
func (c *decodeCall) assemble(mol int, tr jtvae.Decoded, st *DecodeStats) (string, error) {
	d := c.d
	if len(tr.Labels) == 1 {
		return d.chem.vocab[tr.Labels[0]], nil
	}
	ctx, cancel, _ := c.molContext(mol)
	defer cancel()
	a := &assembly{chem: d.chem, ctx: ctx, rng: c.rng(mol), enum: chem.EnumOptions{Aroma: &d.chem.aroma, Ctx: ctx, Memo: d.chem.memo}}
	defer a.close()
	if err := a.buildNodes(tr); err != nil {
		return "", err
	}
	if a.scorer = c.scorers[mol]; a.scorer == nil {
		return "", c.scorerErr[mol]
	}
	res, _, err := a.pass(true)
	if err == nil && res == nil {
		st.SecondPasses++
		var pre *chem.Mol
		if res, pre, err = a.pass(false); res == nil && pre != nil {
			res = pre
			st.Partial++
		}
	}
	st.Steps += a.total
	st.Retries += a.retries
	if err != nil {
		if ctx.Err() != nil {
			return "", errTimeUp
		}
		return "", fmt.Errorf("assembly: %w", err)
	}
	if res == nil {
		return "", errors.New("the tree cannot be assembled")
	}
	if err := res.SetAllAtomMaps(0); err != nil {
		return "", fmt.Errorf("assembly: %w", err)
	}
	s, err := res.SmilesWith(chem.DefaultSmiles)
	if err != nil {
		return "", fmt.Errorf("assembly: %w", err)
	}
	out, err := chem.Smiles(s)
	if err != nil {
		return "", fmt.Errorf("assembled molecule %s does not sanitise: %w", s, err)
	}
	defer out.Close()
	return out.SmilesWith(chem.DefaultSmiles)
}

// enumerated is one node's candidates and the order to try them in.
type enumerated struct {
	cands []chem.Candidate
	order []int
}

// assembly is one molecule's dfs_assemble state.
type assembly struct {
	chem   *clusterChem
	ctx    context.Context
	rng    *rand.Rand // nil: greedy
	enum   chem.EnumOptions
	nodes  []*chem.Node
	scorer *jtvae.AssemblyScorer
	// enumerations and orders by (node, father, father's atom map): the
	// same in both passes and on every retry, as the nodes do not change
	memo    map[string]enumerated
	steps   int // dfs calls of this pass
	total   int
	retries int
	mols    []*chem.Mol // every molecule made, closed at the end
}

// buildNodes makes the tree's nodes as _decode leaves them: IDs from 1,
// leaves flagged, nodes that are not leaves atom-mapped by ID, leaves with
// the atom map tree decoding left.
func (a *assembly) buildNodes(tr jtvae.Decoded) error {
	for i, w := range tr.Labels {
		n, err := a.chem.node(w, i+1)
		if err != nil {
			return err
		}
		a.nodes = append(a.nodes, n)
		n.IsLeaf = len(tr.Neighbors[i]) == 1
		num := tr.AtomMaps[i]
		if len(tr.Neighbors[i]) > 1 {
			num = i + 1
		}
		if err := n.SetAtomMap(num); err != nil {
			return err
		}
	}
	for i, nb := range tr.Neighbors {
		for _, y := range nb {
			a.nodes[i].Neighbors = append(a.nodes[i].Neighbors, a.nodes[y])
		}
	}
	return nil
}

func (a *assembly) close() {
	for _, n := range a.nodes {
		n.Close()
	}
	for _, m := range a.mols {
		m.Close()
	}
}

func (a *assembly) keep(m *chem.Mol) *chem.Mol {
	a.mols = append(a.mols, m)
	return m
}

// pass is one call of dfs_assemble from the root.
func (a *assembly) pass(checkAroma bool) (res, pre *chem.Mol, err error) {
	root := a.nodes[0]
	cur, err := root.Mol.CopyEdit()
	if err != nil {
		return nil, nil, err
	}
	a.keep(cur)
	global := chem.AtomMaps{}
	for _, n := range a.nodes {
		global[n.ID] = map[int]int{}
	}
	for i := range root.NumAtoms() {
		global[root.ID][i] = i
	}
	a.steps = 0
	res, pre, err = a.dfs(cur, global, nil, root, nil, checkAroma)
	a.total += a.steps
	return res, pre, err
}

// dfs is the authors' JTNNVAE.dfs_assemble: it returns the molecule with
// node's subtree attached, or nil and the partial molecule their code
// keeps for the second pass's fallback. cur is never modified.
func (a *assembly) dfs(cur *chem.Mol, global chem.AtomMaps, faAmap []chem.AtomPair, node, fa *chem.Node, checkAroma bool) (*chem.Mol, *chem.Mol, error) {
	if a.steps++; a.steps > MaxAssemblySteps {
		return nil, nil, nil
	}
	if err := a.ctx.Err(); err != nil {
		return nil, nil, err
	}
	faID := -1
	var prev []*chem.Node
	if fa != nil {
		faID, prev = fa.ID, []*chem.Node{fa}
	}
	var children []*chem.Node
	for _, n := range node.Neighbors {
		if n.ID != faID {
			children = append(children, n)
		}
	}
	var curAmap []chem.AtomPair
	for _, p := range faAmap {
		if p.Nei == node.ID {
			curAmap = append(curAmap, chem.AtomPair{Nei: faID, CtrAtom: p.NeiAtom, NeiAtom: p.CtrAtom})
		}
	}
	key := fmt.Sprint(node.ID, faID, curAmap)
	e, seen := a.memo[key]
	var err error
	if !seen {
		if e.cands, err = a.enum.EnumAssemble(node, chem.AssemblyOrder(children), prev, curAmap); err != nil {
			return nil, nil, err
		}
		if a.memo == nil {
			a.memo = map[string]enumerated{}
		}
		a.memo[key] = e
	}
	cands := e.cands
	aroma := 0.0
	for _, c := range cands {
		aroma += c.Aroma
	}
	if len(cands) == 0 || (aroma < 0 && checkAroma) {
		return nil, cur, nil
	}
	if e.order == nil || a.rng != nil { // prob_decode draws a new order on every call
		if e.order, err = a.order(cands); err != nil {
			return nil, nil, err
		}
		a.memo[key] = e
	}
	order := e.order
	pre := cur
	for i, k := range order {
		if i > 0 {
			a.retries++
		}
		m, err := cur.Copy()
		if err != nil {
			return nil, nil, err
		}
		a.keep(m)
		amap := cands[k].Amap
		g := global.Clone()
		for _, p := range amap {
			if p.Nei == faID {
				continue
			}
			at, ok := g[node.ID][p.CtrAtom]
			if !ok {
				return nil, nil, fmt.Errorf("node %d: atom %d is not in the molecule", node.ID, p.CtrAtom)
			}
			g[p.Nei][p.NeiAtom] = at
		}
		if err := chem.Attach(m, children, g); err != nil {
			return nil, nil, err
		}
		if !a.chem.roundTrips(m) {
			continue
		}
		failed := false
		for _, ch := range children {
			if ch.IsLeaf {
				continue
			}
			res, partial, err := a.dfs(m, g, amap, ch, node, checkAroma)
			if err != nil {
				return nil, nil, err
			}
			if res == nil {
				failed = true
				if i == 0 {
					pre = partial
				}
				break
			}
			m = res
		}
		if !failed {
			if a.steps > MaxAssemblySteps {
				return nil, nil, nil
			}
			return m, m, nil
		}
	}
	if a.steps > MaxAssemblySteps {
		return nil, nil, nil
	}
	return nil, pre, nil
}

// order returns the candidates' indices by decreasing score (sampled with
// rng), the score being the JTMPN
// score against z_graph plus the aromaticity score, in float32 as theirs
// (a lone candidate is not scored).
func (a *assembly) order(cands []chem.Candidate) ([]int, error) {
	scores := []float32{1}
	if len(cands) > 1 {
		graphs := make([]jtvae.Candidate, len(cands))
		adjacent := func(x, y int) bool { return slices.Contains(a.nodes[x].Neighbors, a.nodes[y]) }
		for i, c := range cands {
			var err error
			if graphs[i], err = candidate(c.Smiles, len(a.nodes), adjacent); err != nil {
				return nil, fmt.Errorf("candidate %s: %w", c.Smiles, err)
			}
		}
		s, err := a.scorer.Score(graphs)
		if err != nil {
			return nil, err
		}
		scores = make([]float32, len(s))
		for i, v := range s {
			scores[i] = float32(v) + float32(cands[i].Aroma)
		}
	}
	if a.rng != nil {
		top := slices.Max(scores)
		p := make([]float64, len(scores))
		sum := 0.0
		for i, v := range scores {
			p[i] = math.Exp(float64(v - top))
			sum += p[i]
		}
		for i := range p {
			p[i] = p[i]/sum + 1e-7
		}
		return jtvae.SampleWithoutReplacement(p, len(p), a.rng), nil
	}
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(scores[y], scores[x]) })
	return idx, nil
}

// roundTrips is the authors' validity check of a partial molecule:
// MolFromSmiles(MolToSmiles(mol)) is not None, the answer for a SMILES
// remembered (bounded by chem.MaxAttachMemo).
func (c *clusterChem) roundTrips(m *chem.Mol) bool {
	s, err := m.SmilesWith(chem.DefaultSmiles)
	if err != nil {
		return false
	}
	if ok, seen := c.parses.get(s); seen {
		return ok
	}
	p, err := chem.Smiles(s)
	ok := err == nil
	if ok {
		p.Close()
	}
	c.parses.put(s, ok)
	return ok
}
