package expression

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

type opcode int

const (
	opConst opcode = iota
	opX
	opNeg
	opAdd
	opSub
	opMul
	opDiv
	opSin
	opExp
)

var opNames = [...]string{opNeg: "-", opAdd: "+", opSub: "-", opMul: "*", opDiv: "/", opSin: "sin", opExp: "exp"}

// node is a node of an arithmetic expression tree; a and b are the operands.
type node struct {
	op   opcode
	val  float64
	a, b *node
	hasX bool // whether the subtree depends on x; constant subtrees are evaluated once
}

// Expr is an arithmetic expression of x parsed by ParseExpr.
type Expr struct {
	text string
	root *node
}

// String returns the text the expression was parsed from.
func (e *Expr) String() string { return e.text }

// ParseExpr parses a general arithmetic expression of x with Python's syntax and
// precedence (this is how the reference scores its expressions: numpy evaluates the
// text with eval): binary + - * / (left-associative, * and / binding tighter than + and
// -), unary + and -, parentheses, decimal constants (2, 0.5, .5, 1e-3), the variable x,
// and the functions sin( ) and exp( ). Note that this precedence differs from the
// grammar's parse tree, where + * / have equal precedence; the score follows Python.
func ParseExpr(text string) (*Expr, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", text, err)
	}
	p := exprParser{toks: toks}
	root, err := p.parseSum()
	if err != nil {
		return nil, fmt.Errorf("expression %q: %w", text, err)
	}
	if p.i < len(p.toks) {
		t := p.toks[p.i]
		return nil, fmt.Errorf("expression %q: unexpected %q at offset %d", text, t.text, t.pos)
	}
	return &Expr{text: text, root: root}, nil
}

type exprParser struct {
	toks []token
	i    int
}

// acceptOp consumes the next token if it is one of the operator characters in ops.
func (p *exprParser) acceptOp(ops ...string) (string, bool) {
	if p.i >= len(p.toks) || p.toks[p.i].kind != tokOp {
		return "", false
	}
	for _, op := range ops {
		if p.toks[p.i].text == op {
			p.i++
			return op, true
		}
	}
	return "", false
}

func binaryNode(op opcode, a, b *node) *node {
	return &node{op: op, a: a, b: b, hasX: a.hasX || b.hasX}
}

func (p *exprParser) parseSum() (*node, error) {
	n, err := p.parseProduct()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := p.acceptOp("+", "-")
		if !ok {
			return n, nil
		}
		m, err := p.parseProduct()
		if err != nil {
			return nil, err
		}
		if op == "+" {
			n = binaryNode(opAdd, n, m)
		} else {
			n = binaryNode(opSub, n, m)
		}
	}
}

func (p *exprParser) parseProduct() (*node, error) {
	n, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := p.acceptOp("*", "/")
		if !ok {
			return n, nil
		}
		m, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		if op == "*" {
			n = binaryNode(opMul, n, m)
		} else {
			n = binaryNode(opDiv, n, m)
		}
	}
}

func (p *exprParser) parseUnary() (*node, error) {
	op, ok := p.acceptOp("+", "-")
	if !ok {
		return p.parsePrimary()
	}
	n, err := p.parseUnary()
	if err != nil || op == "+" {
		return n, err
	}
	return &node{op: opNeg, a: n, hasX: n.hasX}, nil
}

func (p *exprParser) parsePrimary() (*node, error) {
	if p.i >= len(p.toks) {
		return nil, errors.New("unexpected end of expression")
	}
	t := p.toks[p.i]
	p.i++
	switch {
	case t.kind == tokNumber:
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil || math.IsInf(v, 0) {
			return nil, fmt.Errorf("bad number %q at offset %d", t.text, t.pos)
		}
		return &node{op: opConst, val: v}, nil
	case t.kind == tokIdent && t.text == "x":
		return &node{op: opX, hasX: true}, nil
	case t.kind == tokIdent && (t.text == "sin" || t.text == "exp"):
		if _, ok := p.acceptOp("("); !ok {
			return nil, fmt.Errorf("%s at offset %d is not followed by '('", t.text, t.pos)
		}
		op := opSin
		if t.text == "exp" {
			op = opExp
		}
		return p.parseClosing(t, op)
	case t.kind == tokIdent:
		return nil, fmt.Errorf("unknown name %q at offset %d (allowed: x, sin, exp)", t.text, t.pos)
	case t.text == "(":
		return p.parseClosing(t, -1)
	}
	return nil, fmt.Errorf("unexpected %q at offset %d", t.text, t.pos)
}

// parseClosing parses the expression inside an opened parenthesis and its ')'; op is
// the function applied to it, or -1 for plain parentheses.
func (p *exprParser) parseClosing(open token, op opcode) (*node, error) {
	n, err := p.parseSum()
	if err != nil {
		return nil, err
	}
	if _, ok := p.acceptOp(")"); !ok {
		return nil, fmt.Errorf("missing ')' closing the '(' at offset %d", open.pos)
	}
	if op < 0 {
		return n, nil
	}
	return &node{op: op, a: n, hasX: n.hasX}, nil
}

// ErrNonFinite reports an evaluation that overflowed, divided by zero or produced NaN.
var ErrNonFinite = errors.New("non-finite value (overflow, division by zero or NaN)")

// Eval evaluates the expression at the points xs into a new slice. Evaluation is
// strict: any operation giving Inf or NaN at any point is an error wrapping ErrNonFinite.
func (e *Expr) Eval(xs []float64) ([]float64, error) {
	ev := evaluator{xs: xs}
	return ev.vector(e.root)
}

// evaluator evaluates expression trees over fixed points, reusing vector buffers.
type evaluator struct {
	xs   []float64
	free [][]float64
}

func (ev *evaluator) buffer() []float64 {
	if n := len(ev.free); n > 0 {
		b := ev.free[n-1]
		ev.free = ev.free[:n-1]
		return b
	}
	return make([]float64, len(ev.xs))
}

func (ev *evaluator) release(b []float64) { ev.free = append(ev.free, b) }

// vector returns the values of n at every point, broadcasting a constant; the caller
// owns the result and may release it.
func (ev *evaluator) vector(n *node) ([]float64, error) {
	if !n.hasX {
		v, err := scalar(n)
		if err != nil {
			return nil, err
		}
		out := ev.buffer()
		for i := range out {
			out[i] = v
		}
		return out, nil
	}
	switch n.op {
	case opX:
		out := ev.buffer()
		copy(out, ev.xs)
		return out, nil
	case opNeg, opSin, opExp:
		a, err := ev.vector(n.a)
		if err != nil {
			return nil, err
		}
		return a, checkFinite(n, unaryInPlace(n.op, a))
	}
	return ev.binaryVector(n)
}

// binaryVector evaluates a binary node with at least one operand depending on x; a
// constant operand stays a scalar.
func (ev *evaluator) binaryVector(n *node) ([]float64, error) {
	var a, b []float64
	var s float64
	var err error
	if n.a.hasX {
		if a, err = ev.vector(n.a); err != nil {
			return nil, err
		}
	} else if s, err = scalar(n.a); err != nil {
		return nil, err
	}
	if n.b.hasX {
		if b, err = ev.vector(n.b); err != nil {
			return nil, err
		}
	} else if s, err = scalar(n.b); err != nil {
		return nil, err
	}
	var out []float64
	switch {
	case a != nil && b != nil:
		out = a
		defer ev.release(b)
	case a != nil:
		out = a
	default:
		out = b
	}
	return out, checkFinite(n, binaryInPlace(n.op, out, a, b, s))
}

// unaryInPlace applies op to a in place and returns a*0 summed: NaN when any result is
// not finite.
func unaryInPlace(op opcode, a []float64) float64 {
	var bad float64
	for i, v := range a {
		switch op {
		case opNeg:
			v = -v
		case opSin:
			v = math.Sin(v)
		case opExp:
			v = math.Exp(v)
		}
		a[i] = v
		bad += v * 0
	}
	return bad
}

// binaryInPlace writes a op b into out, where a or b is nil for the scalar s (out
// aliases the non-nil operand, a when both are given), and returns the sum of out*0.
func binaryInPlace(op opcode, out, a, b []float64, s float64) float64 {
	var bad float64
	for i := range out {
		x, y := s, s
		if a != nil {
			x = a[i]
		}
		if b != nil {
			y = b[i]
		}
		v := apply(op, x, y)
		out[i] = v
		bad += v * 0
	}
	return bad
}

func apply(op opcode, x, y float64) float64 {
	switch op {
	case opAdd:
		return x + y
	case opSub:
		return x - y
	case opMul:
		return x * y
	case opDiv:
		return x / y
	case opNeg:
		return -x
	case opSin:
		return math.Sin(x)
	case opExp:
		return math.Exp(x)
	}
	return math.NaN() // unreachable: the parser builds only the opcodes above
}

func checkFinite(n *node, bad float64) error {
	if bad != 0 || math.IsNaN(bad) {
		return fmt.Errorf("%w in %s", ErrNonFinite, opNames[n.op])
	}
	return nil
}

// scalar evaluates a subtree that does not depend on x.
func scalar(n *node) (float64, error) {
	if n.op == opConst {
		return n.val, nil
	}
	x, err := scalar(n.a)
	if err != nil {
		return 0, err
	}
	var y float64
	if n.b != nil {
		if y, err = scalar(n.b); err != nil {
			return 0, err
		}
	}
	v := apply(n.op, x, y)
	return v, checkFinite(n, v*0)
}
