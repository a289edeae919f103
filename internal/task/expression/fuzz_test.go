package expression

import (
	"slices"
	"testing"
)

// exprSeeds are grammar expressions from the generator, the data set's
// spaced form and the compact form, and broken text.
func exprSeeds() []string {
	seeds := Generate(16, 1)
	return append(seeds, "x + sin( x ) / 3", "x+sin(x)/3", "exp(x*2)", "1e-3*x", ".5", "((x)",
		"sin(", "x ** 2", "", "  ", "x + + x", "exp(exp(exp(exp(x))))", "3/0", "x\x00", "é")
}

// FuzzParse checks the grammar parser: an error, or rules that decode to text
// that parses to the same rules, and that the scorer's parser accepts.
func FuzzParse(f *testing.F) {
	for _, s := range exprSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		rules, err := Parse(text)
		if err != nil {
			return
		}
		printed, err := Decode(rules)
		if err != nil {
			t.Fatalf("%q parsed to %v, which does not decode: %v", text, rules, err)
		}
		again, err := Parse(printed)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", text, printed, err)
		}
		if !slices.Equal(rules, again) {
			t.Fatalf("%q: rules %v, printed %q, parsed again %v", text, rules, printed, again)
		}
		if _, err := OneHot(rules, nil); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if _, err := ParseExpr(printed); err != nil {
			t.Fatalf("grammar expression %q rejected by the scorer: %v", printed, err)
		}
	})
}

// FuzzParseExpr checks the scorer's parser: an error, or an expression that
// evaluates without panicking and keeps its text.
func FuzzParseExpr(f *testing.F) {
	for _, s := range exprSeeds() {
		f.Add(s)
	}
	xs := Points()
	f.Fuzz(func(t *testing.T, text string) {
		e, err := ParseExpr(text)
		if err != nil {
			return
		}
		if e.String() != text {
			t.Fatalf("parsed %q, String() is %q", text, e.String())
		}
		ys, err := e.Eval(xs)
		if err == nil && len(ys) != len(xs) {
			t.Fatalf("%q: %d values for %d points", text, len(ys), len(xs))
		}
	})
}
