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

// ErrNonFinite reports an expression whose value is Inf or NaN at some point.
var ErrNonFinite = errors.New("non-finite value (overflow, division by zero or NaN)")

// ErrDivisionByZero reports a constant divided by a constant zero, which Python's
// evaluation rejects (ZeroDivisionError).
var ErrDivisionByZero = errors.New("division by zero")

// Eval evaluates the expression at the points xs into a new slice, as numpy evaluates
// the text in the reference: IEEE float64 arithmetic at each point, so an overflow that
// a later operation absorbs (1 / exp(exp(x)) is 0 where exp(exp(x)) overflows) is not a
// failure. It fails when a value is Inf or NaN at some point (ErrNonFinite), and when a
// constant is divided by a constant zero (ErrDivisionByZero).
func (e *Expr) Eval(xs []float64) ([]float64, error) {
	ev := evaluator{xs: xs}
	y, err := ev.vector(e.root)
	if err != nil {
		return nil, err
	}
	if !allFinite(y) {
		return nil, ErrNonFinite
	}
	return y, nil
}

// allFinite reports whether no value is Inf or NaN: v*0 is NaN exactly for those.
func allFinite(y []float64) bool {
	var s float64
	for _, v := range y {
		s += v * 0
	}
	return s == 0
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
		for i, v := range a {
			a[i] = apply(n.op, v, 0)
		}
		return a, nil
	}
	return ev.binaryVector(n)
}

// binaryVector evaluates a binary node with at least one operand depending on x; a
// constant operand stays a scalar, as in numpy's broadcasting.
func (ev *evaluator) binaryVector(n *node) ([]float64, error) {
	if !n.a.hasX {
		s, err := scalar(n.a)
		if err != nil {
			return nil, err
		}
		b, err := ev.vector(n.b)
		if err != nil {
			return nil, err
		}
		for i, v := range b {
			b[i] = apply(n.op, s, v)
		}
		return b, nil
	}
	a, err := ev.vector(n.a)
	if err != nil {
		return nil, err
	}
	if !n.b.hasX {
		s, err := scalar(n.b)
		if err != nil {
			return nil, err
		}
		for i, v := range a {
			a[i] = apply(n.op, v, s)
		}
		return a, nil
	}
	b, err := ev.vector(n.b)
	if err != nil {
		return nil, err
	}
	for i, v := range a {
		a[i] = apply(n.op, v, b[i])
	}
	ev.release(b)
	return a, nil
}

// apply computes one operation; unary operations ignore y.
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
		if n.op == opDiv && y == 0 {
			return 0, ErrDivisionByZero
		}
	}
	return apply(n.op, x, y), nil
}
