package expression

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Grammar is a context-free grammar as plain data, enough for grammar masking:
// the train command converts the expression task's grammar into it, so this
// package needs no task package. Productions are numbered by their column in
// the one-hot encoding.
type Grammar struct {
	// LHS is the left-hand-side nonterminal of each production.
	LHS []int `json:"lhs"`
	// RHSNonterminals lists, for each production, the nonterminals of its
	// right-hand side from left to right (terminals omitted).
	RHSNonterminals [][]int `json:"rhs_nonterminals"`
	// NumNonterminals is the number of nonterminals.
	NumNonterminals int `json:"num_nonterminals"`
	// Start is the start nonterminal.
	Start int `json:"start"`
	// Padding is the nonterminal expanded once the stack is empty; its only
	// production (with an empty right-hand side) pads the one-hot rows after the
	// end of a derivation.
	Padding int `json:"padding"`
	// Productions are the productions as text, for messages (optional).
	Productions []string `json:"productions,omitempty"`
}

// Validate checks that the grammar is usable for masking: indices in range,
// one production with an empty right-hand side for Padding, which no
// right-hand side contains, and a production for every nonterminal in use.
func (g Grammar) Validate() error {
	p := len(g.LHS)
	switch {
	case p == 0:
		return fmt.Errorf("grammar: no productions")
	case len(g.RHSNonterminals) != p:
		return fmt.Errorf("grammar: %d left-hand sides but %d right-hand sides", p, len(g.RHSNonterminals))
	case g.Productions != nil && len(g.Productions) != p:
		return fmt.Errorf("grammar: %d productions but %d production names", p, len(g.Productions))
	case g.NumNonterminals < 2:
		return fmt.Errorf("grammar: %d nonterminals, want at least a start and a padding one", g.NumNonterminals)
	case g.Start < 0 || g.Start >= g.NumNonterminals || g.Padding < 0 || g.Padding >= g.NumNonterminals || g.Start == g.Padding:
		return fmt.Errorf("grammar: start %d and padding %d must be distinct nonterminals in [0, %d)", g.Start, g.Padding, g.NumNonterminals)
	}
	has := make([]bool, g.NumNonterminals)
	used := []int{g.Start}
	for i, lhs := range g.LHS {
		if lhs < 0 || lhs >= g.NumNonterminals {
			return fmt.Errorf("grammar: production %d: left-hand side %d out of range [0, %d)", i, lhs, g.NumNonterminals)
		}
		has[lhs] = true
		for _, nt := range g.RHSNonterminals[i] {
			if nt < 0 || nt >= g.NumNonterminals || nt == g.Padding {
				return fmt.Errorf("grammar: production %d: right-hand nonterminal %d out of range or the padding one", i, nt)
			}
			used = append(used, nt)
		}
	}
	for _, nt := range used {
		if !has[nt] {
			return fmt.Errorf("grammar: nonterminal %d has no production", nt)
		}
	}
	if pp := g.PaddingProduction(); pp < 0 {
		return fmt.Errorf("grammar: want exactly one production for the padding nonterminal %d, with an empty right-hand side", g.Padding)
	}
	return nil
}

// PaddingProduction returns the production of the padding nonterminal, or -1
// when there is not exactly one, with an empty right-hand side.
func (g Grammar) PaddingProduction() int {
	found := -1
	for i, lhs := range g.LHS {
		if lhs != g.Padding {
			continue
		}
		if found >= 0 || len(g.RHSNonterminals[i]) != 0 {
			return -1
		}
		found = i
	}
	return found
}

// ruleMasks returns the P x P matrix (row-major, 0/1) whose row p allows the
// productions with the same left-hand side as production p: multiplying a
// one-hot matrix by it gives the teacher-forcing mask of each step.
func (g Grammar) ruleMasks() []float32 {
	p := len(g.LHS)
	out := make([]float32, p*p)
	for i := range p {
		for j := range p {
			if g.LHS[i] == g.LHS[j] {
				out[i*p+j] = 1
			}
		}
	}
	return out
}

// sample decodes one T x P logit matrix with the grammar's stack: at each step
// it pops the pending nonterminal (once the stack is empty only the padding
// production is left, so decoding stops), picks a
// production of it by Gumbel-max over the allowed logits (the largest logit
// when rng is nil), and pushes the production's nonterminals in reverse order.
// It returns the rules without padding and whether the derivation finished
// within T steps.
func (g Grammar) sample(logits []float32, steps int, rng *rand.Rand) ([]int, bool) {
	p := len(g.LHS)
	stack := []int{g.Start}
	rules := make([]int, 0, steps)
	for t := range steps {
		n := len(stack)
		if n == 0 {
			break // only padding is left
		}
		nt := stack[n-1]
		stack = stack[:n-1]
		best, bestV := -1, math.Inf(-1)
		for j, l := range logits[t*p : (t+1)*p] {
			if g.LHS[j] != nt {
				continue
			}
			v := float64(l)
			if rng != nil {
				v += gumbel(rng)
			}
			if best < 0 || v > bestV {
				best, bestV = j, v
			}
		}
		rules = append(rules, best)
		rhs := g.RHSNonterminals[best]
		for i := len(rhs) - 1; i >= 0; i-- {
			stack = append(stack, rhs[i])
		}
	}
	return rules, len(stack) == 0
}

// gumbel returns a standard Gumbel sample.
func gumbel(rng *rand.Rand) float64 {
	u := rng.Float64()
	for u == 0 {
		u = rng.Float64()
	}
	return -math.Log(-math.Log(u))
}
