package chem

import (
	"strconv"
	"sync"
)

// AttachMemo remembers what enum_assemble's sanitize made of local
// attachments (the canonical kekulé SMILES of the attached clusters, or
// that they do not sanitise), by the attachment's content: the centre's and
// the attached nodes' atoms (element, charge, atom map) and bonds, the
// nodes' IDs and the atom map. The same attachment comes up again and again
// while decoding (in can_assemble's enumerations and in assembly's, for
// every molecule with the same clusters and node IDs), and each answer costs
// RDKit a SMILES write, a parse with sanitisation, a kekulization and a
// second write; the memo's answer is the one RDKit gave, so enumerations
// with and without it are the same. It is safe for concurrent use, and it
// forgets everything once it holds MaxAttachMemo answers.
type AttachMemo struct {
	mu sync.Mutex
	m  map[string]sanitized
}

// MaxAttachMemo bounds an AttachMemo's answers (about 300 bytes each).
const MaxAttachMemo = 200000

type sanitized struct {
	smiles string
	ok     bool
}

// NewAttachMemo returns an empty memo.
func NewAttachMemo() *AttachMemo { return &AttachMemo{m: map[string]sanitized{}} }

// Len returns the number of answers held.
func (a *AttachMemo) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m)
}

// Reset forgets every answer.
func (a *AttachMemo) Reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.m)
}

func (a *AttachMemo) get(key string) (sanitized, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.m[key]
	return s, ok
}

func (a *AttachMemo) put(key string, s sanitized) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.m) >= MaxAttachMemo {
		clear(a.m)
	}
	a.m[key] = s
}

// sanitizedAttach is sanitize(local_attach(ctr, neighbors, prev, amap)):
// the attachment's canonical kekulé SMILES and whether it sanitises, from
// memo when it holds the answer (memo may be nil).
func sanitizedAttach(memo *AttachMemo, ctr *Node, neighbors, prev []*Node, amap []AtomPair) (string, bool, error) {
	var key string
	if memo != nil {
		key = attachKey(ctr, neighbors, prev, amap)
		if s, ok := memo.get(key); ok {
			return s.smiles, s.ok, nil
		}
	}
	m, err := localAttach(ctr, neighbors, prev, amap)
	if err != nil {
		return "", false, err
	}
	s, ok := sanitizedSmiles(m)
	m.Close()
	if memo != nil {
		memo.put(key, sanitized{s, ok})
	}
	return s, ok, nil
}

// attachKey describes everything localAttach reads: the centre's atoms and
// bonds, each previous then neighbouring node's ID, atoms and bonds, and the
// atom map.
func attachKey(ctr *Node, neighbors, prev []*Node, amap []AtomPair) string {
	b := make([]byte, 0, 256)
	b = appendNode(b, ctr)
	b = append(b, '|')
	for _, n := range prev {
		b = appendNode(b, n)
	}
	b = append(b, '|')
	for _, n := range neighbors {
		b = appendNode(b, n)
	}
	b = append(b, '|')
	for _, p := range amap {
		b = strconv.AppendInt(b, int64(p.Nei), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.CtrAtom), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.NeiAtom), 10)
		b = append(b, ';')
	}
	return string(b)
}

// appendNode appends a node's ID, atoms (element, charge, atom map) and
// bonds (ends, type).
func appendNode(b []byte, n *Node) []byte {
	b = strconv.AppendInt(b, int64(n.ID), 10)
	b = append(b, '[')
	for _, a := range n.atoms {
		b = strconv.AppendInt(b, int64(a.AtomicNum), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(a.FormalCharge), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(a.MapNum), 10)
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
