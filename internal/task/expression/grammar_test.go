package expression

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestGrammarSpec(t *testing.T) {
	s := GrammarSpec()
	wantLHS := []int{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2}
	if !slices.Equal(s.LHS, wantLHS) {
		t.Errorf("LHS = %v, want %v", s.LHS, wantLHS)
	}
	wantRHS := [][]int{{0, 1}, {0, 1}, {0, 1}, {1}, {0}, {0}, {0}, {}, {}, {}, {}, {}}
	for p := range wantRHS {
		if !slices.Equal(s.RHSNonterminals[p], wantRHS[p]) {
			t.Errorf("RHSNonterminals[%d] = %v, want %v", p, s.RHSNonterminals[p], wantRHS[p])
		}
	}
	if s.Start != NonterminalS || s.Padding != NonterminalNothing || s.NumNonterminals != 3 {
		t.Errorf("Start %d Padding %d NumNonterminals %d", s.Start, s.Padding, s.NumNonterminals)
	}
	mask := s.MaskFloat32()
	for p := 0; p < NumProductions; p++ {
		var col float32
		for nt := 0; nt < NumNonterminals; nt++ {
			col += mask[nt*NumProductions+p]
		}
		if col != 1 || mask[s.LHS[p]*NumProductions+p] != 1 {
			t.Errorf("mask column %d is not the one-hot of its LHS", p)
		}
	}
	want := []string{"S -> S '+' T", "S -> S '*' T", "S -> S '/' T", "S -> T", "T -> '(' S ')'",
		"T -> 'sin(' S ')'", "T -> 'exp(' S ')'", "T -> 'x'", "T -> '1'", "T -> '2'", "T -> '3'", "Nothing -> None"}
	if !slices.Equal(s.Productions, want) {
		t.Errorf("Productions = %q", s.Productions)
	}
	// The spec is a copy: changing it leaves the grammar alone.
	s.LHS[0], s.RHSNonterminals[0][0] = 2, 2
	if g := GrammarSpec(); g.LHS[0] != 0 || g.RHSNonterminals[0][0] != 0 {
		t.Error("GrammarSpec shares memory with the grammar")
	}
}

// TestParseMatchesNLTK compares the one-hot encoding with the fixture from nltk's
// ChartParser (exact), and checks the round trip back to text.
func TestParseMatchesNLTK(t *testing.T) {
	exprs := fixtureStrings(t, "parse_expr")
	onehot := fixtureFloat32(t, "parse_onehot")
	const size = MaxRules * NumProductions
	if len(onehot) != len(exprs)*size {
		t.Fatalf("fixture: %d one-hot values for %d expressions", len(onehot), len(exprs))
	}
	for i, e := range exprs {
		got, err := Encode(e)
		if err != nil {
			t.Errorf("Encode(%q): %v", e, err)
			continue
		}
		if !slices.Equal(got, onehot[i*size:(i+1)*size]) {
			t.Errorf("Encode(%q) differs from nltk's parse", e)
		}
		rules, err := RulesFromOneHot(got)
		if err != nil {
			t.Errorf("RulesFromOneHot(%q): %v", e, err)
			continue
		}
		if back, err := Decode(rules); err != nil || back != e {
			t.Errorf("Decode(Parse(%q)) = %q, %v", e, back, err)
		}
	}
}

func TestParseForms(t *testing.T) {
	for _, tc := range []struct {
		text  string
		rules []int
	}{
		// Left-associative with equal precedence: (x + 1) * 2.
		{"x + 1 * 2", []int{ProdMul, ProdAdd, ProdTerm, ProdX, ProdOne, ProdTwo}},
		{"x+1*2", []int{ProdMul, ProdAdd, ProdTerm, ProdX, ProdOne, ProdTwo}},
		{"sin(x)*2", []int{ProdMul, ProdTerm, ProdSin, ProdTerm, ProdX, ProdTwo}},
		{" exp (3) ", []int{ProdTerm, ProdExp, ProdTerm, ProdThree}},
		{"( x )", []int{ProdTerm, ProdParen, ProdTerm, ProdX}},
	} {
		got, err := Parse(tc.text)
		if err != nil || !slices.Equal(got, tc.rules) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.text, got, err, tc.rules)
		}
	}
	if got, _ := Decode([]int{ProdMul, ProdTerm, ProdSin, ProdTerm, ProdX, ProdTwo, PaddingProduction}); got != "sin( x ) * 2" {
		t.Errorf("Decode gives %q, want the spaced form", got)
	}
}

// TestDataSetRoundTrip parses every expression of the data set: text -> rules ->
// one-hot -> rules -> text, and compares the one-hot of the whole data set with the
// sha256 of nltk's (fixture).
func TestDataSetRoundTrip(t *testing.T) {
	path := dataFile(t)
	exprs, err := ReadExpressions(path) // parses every line within MaxRules or fails
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	h := sha256.New()
	buf := make([]float32, MaxRules*NumProductions)
	raw := make([]byte, 4*len(buf))
	longest := 0
	for i, line := range lines {
		rules, err := Parse(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		longest = max(longest, len(rules))
		if _, err := OneHot(rules, buf); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		back, err := RulesFromOneHot(buf)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		text, err := Decode(back)
		if err != nil || text != line || exprs[i] != line {
			t.Fatalf("line %d: %q round-trips to %q (%v)", i+1, line, text, err)
		}
		for j, v := range buf {
			binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(v))
		}
		h.Write(raw)
	}
	if got, want := hex.EncodeToString(h.Sum(nil)), fixtureStrings(t, "full_onehot_sha256")[0]; got != want {
		t.Errorf("one-hot of the data set: sha256 %s, nltk's %s", got, want)
	}
	t.Logf("%d of %d expressions parse within %d rules (longest %d)", len(exprs), len(lines), MaxRules, longest)
}

// readLines returns the file's lines as they are, without the final newline.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, msg string }{
		{"x - 1", "'-'"},
		{"4 + x", "constant 4"},
		{"x + 0.5", "constant 0.5"},
		{"y", `name "y"`},
		{"sin x", "not followed by '('"},
		{"( x", "missing ')'"},
		{"x )", `unexpected ")"`},
		{"x ( x )", `unexpected "("`},
		{"", "unexpected end"},
		{"x +", "unexpected end"},
		{"x $ 1", "unexpected character"},
	} {
		_, err := Parse(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Parse(%q) error %v, want one mentioning %s", tc.text, err, tc.msg)
		}
	}
	// 8 terms: 7 x (S -> S '+' T), S -> T and 8 x T -> 'x' = 16 rules.
	if _, err := Parse("x + x + x + x + x + x + x + x"); !errors.Is(err, ErrTooManyRules) {
		t.Errorf("16-rule expression: %v, want ErrTooManyRules", err)
	}
	if _, err := Parse("x + x + x + x + x + x + x"); err != nil {
		t.Errorf("14-rule expression: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		rules []int
		msg   string
	}{
		{[]int{ProdTerm}, "incomplete"},
		{[]int{ProdTerm, PaddingProduction, ProdX}, "incomplete"},
		{[]int{ProdX}, "does not expand S"},
		{[]int{ProdTerm, ProdX, ProdX}, "after the end"},
		{[]int{ProdTerm, 12}, "out of range"},
		{slices.Repeat([]int{ProdTerm}, 16), "longer than 15"},
	} {
		_, err := Decode(tc.rules)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Decode(%v) error %v, want one mentioning %q", tc.rules, err, tc.msg)
		}
	}
}

func TestOneHotErrors(t *testing.T) {
	if _, err := OneHot(make([]int, 16), nil); !errors.Is(err, ErrTooManyRules) {
		t.Errorf("16 rules: %v", err)
	}
	if _, err := OneHot([]int{-1}, nil); err == nil {
		t.Error("negative production accepted")
	}
	if _, err := OneHot([]int{ProdX}, make([]float32, 3)); err == nil {
		t.Error("short buffer accepted")
	}
	m, _ := OneHot([]int{ProdTerm, ProdX}, nil)
	if _, err := RulesFromOneHot(m[:10]); err == nil {
		t.Error("short matrix accepted")
	}
	m[5] = 1 // second 1 in row 0
	if _, err := RulesFromOneHot(m); err == nil || !strings.Contains(err.Error(), "row 0") {
		t.Errorf("two ones in a row: %v", err)
	}
	m2, _ := OneHot([]int{ProdTerm, ProdX}, nil)
	m2[NumProductions+ProdX] = 0
	if _, err := RulesFromOneHot(m2); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("empty row: %v", err)
	}
}
