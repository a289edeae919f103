package expression

// Shape of the one-hot encoding of an expression.
const (
	// MaxRules is the maximum length of a leftmost derivation (rows of the one-hot matrix).
	MaxRules = 15
	// NumProductions is the number of productions including the padding production (columns).
	NumProductions = 12
	// PaddingProduction is the column of `Nothing -> None`, which fills the rows after the
	// end of a derivation.
	PaddingProduction = NumProductions - 1
)

// Nonterminal indices of the grammar.
const (
	// NonterminalS is the start symbol S (a sum, product or quotient of terms).
	NonterminalS = iota
	// NonterminalT is a term T (a parenthesised expression, sin, exp, x or a constant).
	NonterminalT
	// NonterminalNothing is the left-hand side of the padding production; a stack-based
	// decoder uses it when its stack of pending nonterminals is empty.
	NonterminalNothing
	// NumNonterminals is the number of nonterminals.
	NumNonterminals
)

// Production indices, in the column order of the one-hot encoding (Kusner et al. 2017).
const (
	ProdAdd     = iota // S -> S '+' T
	ProdMul            // S -> S '*' T
	ProdDiv            // S -> S '/' T
	ProdTerm           // S -> T
	ProdParen          // T -> '(' S ')'
	ProdSin            // T -> 'sin(' S ')'
	ProdExp            // T -> 'exp(' S ')'
	ProdX              // T -> 'x'
	ProdOne            // T -> '1'
	ProdTwo            // T -> '2'
	ProdThree          // T -> '3'
	ProdNothing        // Nothing -> None
)

// symbol is one right-hand-side symbol: a terminal token, or a nonterminal when nt >= 0.
type symbol struct {
	tok string
	nt  int
}

func term(tok string) symbol { return symbol{tok: tok, nt: -1} }
func nonterm(nt int) symbol  { return symbol{nt: nt} }

type production struct {
	lhs int
	rhs []symbol
}

// productions is the grammar in column order. The padding production has an empty
// right-hand side: nltk parses `None` as a nonterminal, which the reference decoder skips.
var productions = [NumProductions]production{
	ProdAdd:     {NonterminalS, []symbol{nonterm(NonterminalS), term("+"), nonterm(NonterminalT)}},
	ProdMul:     {NonterminalS, []symbol{nonterm(NonterminalS), term("*"), nonterm(NonterminalT)}},
	ProdDiv:     {NonterminalS, []symbol{nonterm(NonterminalS), term("/"), nonterm(NonterminalT)}},
	ProdTerm:    {NonterminalS, []symbol{nonterm(NonterminalT)}},
	ProdParen:   {NonterminalT, []symbol{term("("), nonterm(NonterminalS), term(")")}},
	ProdSin:     {NonterminalT, []symbol{term("sin("), nonterm(NonterminalS), term(")")}},
	ProdExp:     {NonterminalT, []symbol{term("exp("), nonterm(NonterminalS), term(")")}},
	ProdX:       {NonterminalT, []symbol{term("x")}},
	ProdOne:     {NonterminalT, []symbol{term("1")}},
	ProdTwo:     {NonterminalT, []symbol{term("2")}},
	ProdThree:   {NonterminalT, []symbol{term("3")}},
	ProdNothing: {NonterminalNothing, nil},
}

var nonterminalNames = [NumNonterminals]string{"S", "T", "Nothing"}

// Spec is the grammar's structure as plain data, for a grammar-masked decoder that must
// not import this package. A stack-based decoder starts with the stack [Start]; at each
// of the MaxRules steps it pops the top nonterminal (Padding when the stack is empty),
// restricts the logits to the productions p with Mask[nt][p], picks one, and pushes
// RHSNonterminals[p] in reverse order so that the leftmost one is on top.
type Spec struct {
	// LHS is the left-hand-side nonterminal of each production.
	LHS []int
	// RHSNonterminals lists, for each production, the nonterminals of its right-hand
	// side from left to right (terminals omitted).
	RHSNonterminals [][]int
	// NumNonterminals is the number of nonterminals (S, T, Nothing).
	NumNonterminals int
	// Start is the start nonterminal (S).
	Start int
	// Padding is the nonterminal to expand once the stack is empty (Nothing); its only
	// production is PaddingProduction.
	Padding int
	// Mask[nt][p] is true when production p has left-hand side nt.
	Mask [][]bool
	// Productions are the productions as text, for messages and plots.
	Productions []string
	// Nonterminals are the names of the nonterminals.
	Nonterminals []string
}

// GrammarSpec returns a fresh copy of the grammar's structure.
func GrammarSpec() Spec {
	s := Spec{
		LHS:             make([]int, NumProductions),
		RHSNonterminals: make([][]int, NumProductions),
		NumNonterminals: NumNonterminals,
		Start:           NonterminalS,
		Padding:         NonterminalNothing,
		Mask:            make([][]bool, NumNonterminals),
		Productions:     make([]string, NumProductions),
		Nonterminals:    append([]string(nil), nonterminalNames[:]...),
	}
	for nt := range s.Mask {
		s.Mask[nt] = make([]bool, NumProductions)
	}
	for p, prod := range productions {
		s.LHS[p] = prod.lhs
		s.RHSNonterminals[p] = []int{}
		for _, sym := range prod.rhs {
			if sym.nt >= 0 {
				s.RHSNonterminals[p] = append(s.RHSNonterminals[p], sym.nt)
			}
		}
		s.Mask[prod.lhs][p] = true
		s.Productions[p] = productionString(prod)
	}
	return s
}

// MaskFloat32 returns Mask as a row-major NumNonterminals x NumProductions matrix of 0/1.
func (s Spec) MaskFloat32() []float32 {
	out := make([]float32, 0, len(s.Mask)*NumProductions)
	for _, row := range s.Mask {
		for _, ok := range row {
			if ok {
				out = append(out, 1)
			} else {
				out = append(out, 0)
			}
		}
	}
	return out
}

func productionString(p production) string {
	s := nonterminalNames[p.lhs] + " ->"
	if len(p.rhs) == 0 {
		return s + " None"
	}
	for _, sym := range p.rhs {
		if sym.nt >= 0 {
			s += " " + nonterminalNames[sym.nt]
		} else {
			s += " '" + sym.tok + "'"
		}
	}
	return s
}
