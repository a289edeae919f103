package torch

import (
	"cmp"
	"slices"
	"sync"
)

// Scope owns a group of tensors and releases them together, typically the
// intermediates of one training step. A tensor produced by an op joins the
// scope of its first operand that has one, so scoping the inputs of a step is
// enough to scope everything computed from them; module parameters stay out.
type Scope struct {
	mu      sync.Mutex
	tensors []*Tensor            // in the order they joined
	next    int                  // the number the next tensor to join gets (Tensor.seq)
	kept    map[*Tensor]struct{} // exempt from ReleaseSince
}

// NewScope returns an empty scope.
func NewScope() *Scope { return &Scope{} }

func (s *Scope) add(t *Tensor) {
	s.mu.Lock()
	t.scope, t.seq = s, s.next
	s.next++
	s.tensors = append(s.tensors, t)
	s.mu.Unlock()
}

// Own adopts t (for example a tensor made by a factory function) and returns it.
func (s *Scope) Own(t *Tensor) *Tensor {
	if t != nil && t.handle() != nil && t.scope == nil {
		s.add(t)
	}
	return t
}

// Len returns the number of tensors the scope holds.
func (s *Scope) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tensors)
}

// Close releases every tensor of the scope. The scope can be used again afterwards.
func (s *Scope) Close() {
	s.mu.Lock()
	ts := s.tensors
	s.tensors, s.kept = nil, nil
	for _, t := range ts {
		t.scope = nil // released here, not searched for by Close
	}
	s.mu.Unlock()
	for _, t := range ts {
		t.Close()
	}
}

// Mark returns a mark of the scope's present, for ReleaseSince: a loop
// whose steps make intermediates in a long-lived scope marks it before a
// step and releases the step's tensors after it.
func (s *Scope) Mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// Keep exempts t, a tensor of the scope, from ReleaseSince: it stays in the
// scope until Close (for a tensor made during a step that later steps read,
// such as a grown buffer).
func (s *Scope) Keep(t *Tensor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kept == nil {
		s.kept = map[*Tensor]struct{}{}
	}
	s.kept[t] = struct{}{}
}

// ReleaseSince closes the tensors that joined the scope after mark (a value
// of Mark), except those given to Keep, which stay in the scope.
func (s *Scope) ReleaseSince(mark int) {
	s.mu.Lock()
	first, _ := s.find(mark) // the tensors joined since mark are a suffix
	var drop []*Tensor
	stay := s.tensors[:first]
	for _, t := range s.tensors[first:] {
		if _, ok := s.kept[t]; ok {
			stay = append(stay, t)
		} else {
			t.scope = nil
			drop = append(drop, t)
		}
	}
	clear(s.tensors[len(stay):])
	s.tensors = stay
	s.mu.Unlock()
	for _, t := range drop {
		t.Close()
	}
}

// Adopt moves t into s and returns it, so that it is released with s: an
// op's result joins the scope of its first scoped operand, which for a
// product of a long-lived table (a cache, a decoding's message table) is
// the table's scope, where results would pile up until the table goes.
func (s *Scope) Adopt(t *Tensor) *Tensor {
	if t == nil || t.handle() == nil || t.scope == s {
		return t
	}
	if old := t.scope; old != nil {
		old.remove(t)
	}
	s.add(t)
	return t
}

// remove takes t out of the scope (Close, Adopt).
func (s *Scope) remove(t *Tensor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.find(t.seq); ok && s.tensors[i] == t {
		s.tensors = slices.Delete(s.tensors, i, i+1)
		delete(s.kept, t)
	}
}

// find returns the place of the first tensor numbered seq or later, and
// whether one is numbered seq: the tensors are in the order they joined, so
// by number. The caller holds s.mu.
func (s *Scope) find(seq int) (int, bool) {
	return slices.BinarySearchFunc(s.tensors, seq, func(t *Tensor, seq int) int { return cmp.Compare(t.seq, seq) })
}
