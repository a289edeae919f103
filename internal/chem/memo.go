package chem

import (
	"strconv"
	"sync"
)

// AttachMemo remembers what enum_assemble made of attachments: of a partial
// one, sanitize's answer (the canonical kekulé SMILES of the attached
// clusters, or that they do not sanitise), and of a complete one, the
// candidate (canonical SMILES, check_singleton, check_aroma). Attachments
// are known by their content: the centre's and the attached nodes' atoms
// (element, charge, atom map) and bonds, and the atom map with the nodes
// named by their place in the attachment (a node's ID is only how the atom
// map names it; check_aroma also reads the IDs, leaf flags and cluster
// SMILES, which a complete attachment's key adds). The same attachments
// come up again and again while decoding (in can_assemble's enumerations
// and in assembly's, for every molecule with the same clusters and atom
// maps), and each answer costs RDKit SMILES writes and parses with
// sanitisation; the memo's answers are the ones RDKit gave, so enumerations
// with and without it are the same. A memo serves the aromatic rings it
// first scored against and no others. It is safe for concurrent use, and
// it forgets everything once it holds MaxAttachMemo answers of a kind.
type AttachMemo struct {
	mu sync.Mutex
	// answers by attachment content ("a" + attachKey) and by the
	// attachment's first SMILES ("s" + SMILES), which catches attachments
	// that differ only by symmetry
	m                          map[string]sanitized
	requests, hits, smilesHits int
	// complete attachments asked for, and those answered by their content
	// and by their first SMILES
	doneRequests, doneHits, doneSmilesHits int
	// finished complete attachments (finishKey), with the rings they were
	// scored against
	done  map[string]finished
	aroma *AromaRings
}

// MaxAttachMemo bounds an AttachMemo's answers (about 300 bytes each).
const MaxAttachMemo = 200000

type sanitized struct {
	smiles string
	ok     bool
}

// NewAttachMemo returns an empty memo.
func NewAttachMemo() *AttachMemo {
	return &AttachMemo{m: map[string]sanitized{}, done: map[string]finished{}}
}

// Len returns the number of answers held.
func (a *AttachMemo) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m) + len(a.done)
}

// Counts returns, since the memo was made or reset, the number of
// attachments asked for, of those answered by their content, and of the
// others answered by their first SMILES (no parse, kekulization or second
// write).
func (a *AttachMemo) Counts() (requests, hits, smilesHits int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests, a.hits, a.smilesHits
}

// FinishedCounts returns, since the memo was made or reset, the number of
// complete attachments asked for, of those answered by their content, and
// of the others answered by their first SMILES.
func (a *AttachMemo) FinishedCounts() (requests, hits, smilesHits int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.doneRequests, a.doneHits, a.doneSmilesHits
}

// Reset forgets every answer and zeroes the counts.
func (a *AttachMemo) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.m)
	clear(a.done)
	a.aroma = nil
	a.requests, a.hits, a.smilesHits = 0, 0, 0
	a.doneRequests, a.doneHits, a.doneSmilesHits = 0, 0, 0
}

func (a *AttachMemo) get(key string, count *int) (sanitized, bool) {
	return memoGet(a, a.m, key, count)
}

func (a *AttachMemo) put(s sanitized, keys ...string) { memoPut(a, a.m, s, keys) }

// memoGet returns m[key] under a's lock, counting a hit into count.
func memoGet[T any](a *AttachMemo, m map[string]T, key string, count *int) (T, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := m[key]
	if ok {
		*count++
	}
	return v, ok
}

// memoPut stores v under keys in m under a's lock, emptying m first when
// it would outgrow MaxAttachMemo.
func memoPut[T any](a *AttachMemo, m map[string]T, v T, keys []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(m)+len(keys) > MaxAttachMemo {
		clear(m)
	}
	for _, k := range keys {
		m[k] = v
	}
}

// sanitizedAttach is sanitize(local_attach(ctr, neighbors, prev, amap)) as
// the search of enum_assemble uses it with a memo: whether the attachment
// sanitises, and a SMILES that tells distinct attachments apart (the search
// keeps the first of each); g is local_attach's molecule, which it
// relabels. The atom maps are numbered 1, 2, ... in order of appearance
// (mapLabels) before the molecule is written, so that the same clusters
// attached the same way under other node IDs (another place in the tree,
// another molecule) are one answer; numbering the maps one to one changes
// neither whether two attachments are the same molecule nor whether one
// sanitises.
func sanitizedAttach(memo *AttachMemo, ctr *Node, neighbors, prev []*Node, amap []AtomPair, g *molGraph) (string, bool, error) {
	labels := mapLabels(ctr, neighbors, prev)
	k, keyed := attachKey(ctr, neighbors, prev, amap, labels)
	key := "a" + k
	memo.mu.Lock()
	memo.requests++
	memo.mu.Unlock()
	if g.overValent() {
		return "", false, nil
	}
	if keyed {
		if s, ok := memo.get(key, &memo.hits); ok {
			return s.smiles, s.ok, nil
		}
	}
	g.relabel(labels)
	m, err := g.Build()
	if err != nil {
		return "", false, err
	}
	first, err := m.SmilesWith(KekuleSmiles)
	m.Close()
	if err != nil {
		return "", false, nil
	}
	if s, ok := memo.get("s"+first, &memo.smilesHits); ok {
		if keyed {
			memo.put(s, key)
		}
		return s.smiles, s.ok, nil
	}
	s, ok := resanitized(first)
	keys := []string{"s" + first}
	if keyed {
		keys = append(keys, key)
	}
	memo.put(sanitized{s, ok}, keys...)
	return s, ok, nil
}

// mapLabels numbers the distinct non-zero atom maps of the centre, the
// previous and the neighbouring nodes 1, 2, ... in order of appearance.
func mapLabels(ctr *Node, neighbors, prev []*Node) map[int]int {
	labels := map[int]int{}
	for _, ns := range [][]*Node{{ctr}, prev, neighbors} {
		for _, n := range ns {
			for _, a := range n.atoms {
				if _, ok := labels[a.MapNum]; !ok && a.MapNum != 0 {
					labels[a.MapNum] = len(labels) + 1
				}
			}
		}
	}
	return labels
}

// label is map number v under labels (v itself when labels is nil, 0 for 0).
func label(labels map[int]int, v int) int {
	if labels == nil || v == 0 {
		return v
	}
	return labels[v]
}

// finishedAttach is one complete attachment finished (attachedSmiles, then
// finishSmiles), from memo when it holds the answer (memo may be nil; a memo
// serves the rings it first finished with and no others).
// The memo knows a complete attachment by its content and, as
// sanitizedAttach, by its first SMILES: the candidate is made from that
// SMILES alone, and check_singleton and check_aroma read besides it only
// what finishKey adds, so attachments that differ by symmetry but write the
// same SMILES are one answer (no parse, second write or checks).
func finishedAttach(memo *AttachMemo, aroma *AromaRings, node *Node, neighbors, prev []*Node, amap []AtomPair) (finished, error) {
	var key string
	if memo != nil {
		k, keyed := attachKey(node, neighbors, prev, amap, nil)
		memo.mu.Lock()
		if memo.aroma == nil {
			memo.aroma = aroma
		}
		same := memo.aroma == aroma
		if keyed && same {
			memo.doneRequests++
		}
		memo.mu.Unlock()
		if !keyed || !same {
			memo = nil
		} else {
			key = finishKey(k, node, neighbors)
			if f, ok := memo.finished(key, &memo.doneHits); ok {
				return f, nil
			}
		}
	}
	s, err := attachedSmiles(node, neighbors, prev, amap)
	if err != nil {
		return finished{}, err
	}
	var smilesKey string
	if memo != nil {
		// "s" keeps these apart from the content keys, which start with "["
		smilesKey = finishKey("s"+s, node, neighbors)
		if f, ok := memo.finished(smilesKey, &memo.doneSmilesHits); ok {
			memo.putFinished(f, key)
			return f, nil
		}
	}
	f, err := finishSmiles(aroma, s, node, neighbors)
	if err == nil && memo != nil {
		memo.putFinished(f, key, smilesKey)
	}
	return f, err
}

// finished returns the answer for a finished attachment's key, counting a
// hit into count.
func (a *AttachMemo) finished(key string, count *int) (finished, bool) {
	return memoGet(a, a.done, key, count)
}

// putFinished remembers a finished attachment's answer under the keys.
func (a *AttachMemo) putFinished(f finished, keys ...string) { memoPut(a, a.done, f, keys) }

// finishKey adds to an attachment's key what check_singleton and
// check_aroma read besides the candidate: the centre's and neighbours' IDs
// (matched against atom maps), leaf flags, cluster SMILES and atom counts.
func finishKey(attach string, node *Node, neighbors []*Node) string {
	b := []byte(attach)
	for _, n := range append([]*Node{node}, neighbors...) {
		b = append(b, '|')
		b = strconv.AppendInt(b, int64(n.ID), 10)
		b = strconv.AppendBool(b, n.IsLeaf)
		b = strconv.AppendInt(b, int64(len(n.atoms)), 10)
		b = append(b, ',')
		b = append(b, n.Smiles...)
	}
	return string(b)
}

// attachKey describes everything localAttach's molecule depends on: the
// centre's atoms and bonds, each previous then neighbouring node's atoms and
// bonds (atom maps under labels, nil: as they are), and the atom map naming
// each node by its place in that list (an ID it lacks as itself). It reports false, no key, when two of the nodes
// share an ID (then localAttach's maps are not one per node).
func attachKey(ctr *Node, neighbors, prev []*Node, amap []AtomPair, labels map[int]int) (string, bool) {
	b := make([]byte, 0, 256)
	b = appendNode(b, ctr, labels)
	b = append(b, '|')
	place := make(map[int]int, len(prev)+len(neighbors))
	for _, n := range prev {
		place[n.ID] = len(place)
		b = appendNode(b, n, labels)
	}
	b = append(b, '|')
	for _, n := range neighbors {
		place[n.ID] = len(place)
		b = appendNode(b, n, labels)
	}
	b = append(b, '|')
	for _, p := range amap {
		if k, ok := place[p.Nei]; ok {
			b = strconv.AppendInt(b, int64(k), 10)
		} else {
			b = append(b, "id"...)
			b = strconv.AppendInt(b, int64(p.Nei), 10)
		}
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.CtrAtom), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.NeiAtom), 10)
		b = append(b, ';')
	}
	return string(b), len(place) == len(prev)+len(neighbors)
}

// appendNode appends a node's atoms (element, charge, atom map under
// labels) and bonds (ends, type).
func appendNode(b []byte, n *Node, labels map[int]int) []byte {
	b = append(b, '[')
	for _, a := range n.atoms {
		b = strconv.AppendInt(b, int64(a.AtomicNum), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(a.FormalCharge), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(label(labels, a.MapNum)), 10)
		b = append(b, ';')
	}
	b = append(b, '/')
	for _, o := range n.bonds {
		b = strconv.AppendInt(b, int64(o.Begin), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(o.End), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(o.Type), 10)
		b = append(b, ';')
	}
	return append(b, ']')
}

// fragmentAnswers and labelAnswers remember, for the process, what
// decomposition and recovery make of a SMILES string with RDKit alone (the
// same string, the same answer): the sanitised kekulé SMILES of a cluster's
// fragment (cliqueSmiles after its first write) and the canonical SMILES of
// a recovered label. Clusters, and so their fragments, repeat across
// molecules; labels less so.
var (
	fragmentAnswers = newSmilesMemo[sanitized]()
	labelAnswers    = newSmilesMemo[string]()
)

// maxSmilesMemo bounds a smilesMemo's answers (about 200 bytes each).
const maxSmilesMemo = 50000

// smilesMemo is a bounded map of answers by SMILES string, safe for
// concurrent use; it forgets everything once full.
type smilesMemo[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

func newSmilesMemo[T any]() *smilesMemo[T] { return &smilesMemo[T]{m: map[string]T{}} }

func (c *smilesMemo[T]) get(key string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

func (c *smilesMemo[T]) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

func (c *smilesMemo[T]) put(key string, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxSmilesMemo {
		clear(c.m)
	}
	c.m[key] = v
}
