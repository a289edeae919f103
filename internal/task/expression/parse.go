package expression

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTooManyRules reports an expression of the grammar whose derivation is longer than MaxRules.
var ErrTooManyRules = errors.New("derivation longer than 15 rules")

// grammarTokens lexes text into the grammar's terminals: "sin(" and "exp(" are single
// tokens, the only constants are 1, 2 and 3, and there is no '-'.
func grammarTokens(text string) ([]token, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	out := toks[:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tokOp && t.text == "-":
			return nil, fmt.Errorf("'-' at offset %d is not in the grammar (operators are + * /)", t.pos)
		case t.kind == tokNumber && (t.text == "1" || t.text == "2" || t.text == "3"):
		case t.kind == tokNumber:
			return nil, fmt.Errorf("constant %s at offset %d is not in the grammar (only 1, 2, 3)", t.text, t.pos)
		case t.kind == tokIdent && t.text == "x":
		case t.kind == tokIdent && (t.text == "sin" || t.text == "exp"):
			if i+1 >= len(toks) || toks[i+1].text != "(" {
				return nil, fmt.Errorf("%s at offset %d is not followed by '('", t.text, t.pos)
			}
			t.text += "("
			i++
		case t.kind == tokIdent:
			return nil, fmt.Errorf("name %q at offset %d is not in the grammar (x, sin, exp)", t.text, t.pos)
		}
		out = append(out, t)
	}
	return out, nil
}

// derivation is a node of a parse tree: a production and the subtrees of the
// nonterminals of its right-hand side, left to right.
type derivation struct {
	prod     int
	children []*derivation
}

// grammarParser is a recursive-descent parser for the grammar. The grammar is
// unambiguous: S is a left-associative chain of terms joined by + * / with equal
// precedence, so `a + b * c` is (a + b) * c, the tree nltk's ChartParser returns.
type grammarParser struct {
	toks []token
	i    int
}

func (p *grammarParser) peek() *token {
	if p.i < len(p.toks) {
		return &p.toks[p.i]
	}
	return nil
}

func (p *grammarParser) parseS() (*derivation, error) {
	t, err := p.parseT()
	if err != nil {
		return nil, err
	}
	s := &derivation{prod: ProdTerm, children: []*derivation{t}}
	for {
		op := p.peek()
		if op == nil || op.kind != tokOp {
			return s, nil
		}
		var prod int
		switch op.text {
		case "+":
			prod = ProdAdd
		case "*":
			prod = ProdMul
		case "/":
			prod = ProdDiv
		default:
			return s, nil
		}
		p.i++
		t, err := p.parseT()
		if err != nil {
			return nil, err
		}
		s = &derivation{prod: prod, children: []*derivation{s, t}}
	}
}

var termProductions = map[string]int{
	"(": ProdParen, "sin(": ProdSin, "exp(": ProdExp,
	"x": ProdX, "1": ProdOne, "2": ProdTwo, "3": ProdThree,
}

func (p *grammarParser) parseT() (*derivation, error) {
	t := p.peek()
	if t == nil {
		return nil, errors.New("unexpected end of expression, expected a term")
	}
	prod, ok := termProductions[t.text]
	if !ok {
		return nil, fmt.Errorf("unexpected %q at offset %d, expected a term", t.text, t.pos)
	}
	p.i++
	d := &derivation{prod: prod}
	if prod == ProdParen || prod == ProdSin || prod == ProdExp {
		s, err := p.parseS()
		if err != nil {
			return nil, err
		}
		closing := p.peek()
		if closing == nil || closing.text != ")" {
			return nil, fmt.Errorf("missing ')' closing %q at offset %d", t.text, t.pos)
		}
		p.i++
		d.children = []*derivation{s}
	}
	return d, nil
}

// appendRules appends the leftmost derivation of d (its tree in preorder).
func (d *derivation) appendRules(rules []int) []int {
	rules = append(rules, d.prod)
	for _, c := range d.children {
		rules = c.appendRules(rules)
	}
	return rules
}

// Parse returns the leftmost derivation of an expression of the grammar as production
// indices. The text may separate tokens by spaces, as the data set does
// (`x + sin( x ) / 3`), or not (`x+sin(x)/3`). Derivations longer than MaxRules give an
// error wrapping ErrTooManyRules.
func Parse(text string) ([]int, error) {
	toks, err := grammarTokens(text)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", text, err)
	}
	p := grammarParser{toks: toks}
	d, err := p.parseS()
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", text, err)
	}
	if t := p.peek(); t != nil {
		return nil, fmt.Errorf("expression %q: unexpected %q at offset %d", text, t.text, t.pos)
	}
	rules := d.appendRules(make([]int, 0, MaxRules))
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("expression %q: %w (%d rules)", text, ErrTooManyRules, len(rules))
	}
	return rules, nil
}

// OneHot writes the MaxRules x NumProductions one-hot matrix (row-major) of a rule
// sequence into dst, which must have MaxRules*NumProductions elements; rows after the
// derivation's end hold the padding production. It returns dst, or a new slice when dst
// is nil.
func OneHot(rules []int, dst []float32) ([]float32, error) {
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("%w (%d rules)", ErrTooManyRules, len(rules))
	}
	if dst == nil {
		dst = make([]float32, MaxRules*NumProductions)
	}
	if len(dst) != MaxRules*NumProductions {
		return nil, fmt.Errorf("one-hot buffer has %d elements, want %d", len(dst), MaxRules*NumProductions)
	}
	clear(dst)
	for row := 0; row < MaxRules; row++ {
		p := PaddingProduction
		if row < len(rules) {
			p = rules[row]
			if p < 0 || p >= NumProductions {
				return nil, fmt.Errorf("rule %d: production index %d out of range [0, %d)", row, p, NumProductions)
			}
		}
		dst[row*NumProductions+p] = 1
	}
	return dst, nil
}

// Encode parses an expression and returns its one-hot matrix (see Parse and OneHot).
func Encode(text string) ([]float32, error) {
	rules, err := Parse(text)
	if err != nil {
		return nil, err
	}
	return OneHot(rules, nil)
}

// RulesFromOneHot reads the rule sequence back from a MaxRules x NumProductions one-hot
// matrix, dropping the trailing padding rows. Every row must hold exactly one 1.
func RulesFromOneHot(m []float32) ([]int, error) {
	if len(m) != MaxRules*NumProductions {
		return nil, fmt.Errorf("one-hot matrix has %d elements, want %d", len(m), MaxRules*NumProductions)
	}
	rules := make([]int, 0, MaxRules)
	for row := 0; row < MaxRules; row++ {
		hot := -1
		for p, v := range m[row*NumProductions : (row+1)*NumProductions] {
			switch {
			case v == 0:
			case v == 1 && hot < 0:
				hot = p
			default:
				return nil, fmt.Errorf("one-hot row %d is not one-hot (value %v in column %d)", row, v, p)
			}
		}
		if hot < 0 {
			return nil, fmt.Errorf("one-hot row %d has no 1", row)
		}
		rules = append(rules, hot)
	}
	for len(rules) > 0 && rules[len(rules)-1] == PaddingProduction {
		rules = rules[:len(rules)-1]
	}
	return rules, nil
}

// Decode replays a leftmost derivation and returns the expression in the data set's
// spaced form (`x + sin( x ) / 3`). The sequence may end with padding productions; each
// rule must expand the leftmost pending nonterminal, and the derivation must be complete.
func Decode(rules []int) (string, error) {
	if len(rules) > MaxRules {
		return "", fmt.Errorf("%w (%d rules)", ErrTooManyRules, len(rules))
	}
	var out []string
	stack := []symbol{nonterm(NonterminalS)} // top is the end of the slice
	next := 0
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if top.nt < 0 {
			out = append(out, top.tok)
			continue
		}
		if next >= len(rules) || rules[next] == PaddingProduction {
			return "", fmt.Errorf("derivation incomplete after %d rules: %s still to expand", next, nonterminalNames[top.nt])
		}
		p := rules[next]
		if p < 0 || p >= NumProductions {
			return "", fmt.Errorf("rule %d: production index %d out of range [0, %d)", next, p, NumProductions)
		}
		if productions[p].lhs != top.nt {
			return "", fmt.Errorf("rule %d: production %q does not expand %s", next, productionString(productions[p]), nonterminalNames[top.nt])
		}
		rhs := productions[p].rhs
		for i := len(rhs) - 1; i >= 0; i-- {
			stack = append(stack, rhs[i])
		}
		next++
	}
	for ; next < len(rules); next++ {
		if rules[next] != PaddingProduction {
			return "", fmt.Errorf("rule %d: production %d after the end of the derivation (only padding allowed)", next, rules[next])
		}
	}
	return strings.Join(out, " "), nil
}
