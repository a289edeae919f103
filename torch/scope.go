package torch

import "sync"

// Scope owns a group of tensors and releases them together, typically the
// intermediates of one training step. A tensor produced by an op joins the
// scope of its first operand that has one, so scoping the inputs of a step is
// enough to scope everything computed from them; module parameters stay out.
type Scope struct {
	mu      sync.Mutex
	tensors []*Tensor
}

// NewScope returns an empty scope.
func NewScope() *Scope { return &Scope{} }

func (s *Scope) add(t *Tensor) {
	s.mu.Lock()
	t.scope = s
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
	s.tensors = nil
	s.mu.Unlock()
	for _, t := range ts {
		t.Close()
	}
}
