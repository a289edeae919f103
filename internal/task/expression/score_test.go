package expression

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestPointsMatchNumpy(t *testing.T) {
	want := fixtureFloat64(t, "x")
	got := Points()
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] { // bit-identical to numpy.linspace
			t.Fatalf("point %d = %.17g, numpy %.17g", i, got[i], want[i])
		}
	}
}

// Tolerances against numpy: Go's math.Sin and numpy's libm sin may differ in the last
// bit, which moves values by a few ulps and scores by about 1e-15.
const (
	valueTol = 4e-15 // relative, target values
	scoreTol = 1e-12 // absolute, scores in [0, 7]
)

func TestTargetMatchesNumpy(t *testing.T) {
	want := fixtureFloat64(t, "target_default")
	e, err := ParseExpr(DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Eval(Points())
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i := range got {
		d := math.Abs(got[i]-want[i]) / math.Max(1, math.Abs(want[i]))
		worst = max(worst, d)
		if d > valueTol {
			t.Errorf("target at point %d = %.17g, numpy %.17g", i, got[i], want[i])
		}
	}
	t.Logf("largest relative difference from numpy: %.3g", worst)
}

// TestScoresMatchNumpy compares scores with the reference's numpy evaluation of the same
// texts (fixture): data set samples and edge cases, for both targets.
func TestScoresMatchNumpy(t *testing.T) {
	exprs := fixtureStrings(t, "score_expr")
	for _, tc := range []struct{ target, key string }{
		{"", "score_default"},
		{"1/3 * x * sin(x*x)", "score_paper"},
	} {
		want := fixtureFloat64(t, tc.key)
		o, err := NewObjective(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		all := o.ScoreAll(exprs)
		failures, worst := 0, 0.0
		for i, e := range exprs {
			got := o.Score(e)
			if math.IsNaN(want[i]) {
				// numpy.minimum(7, NaN) is NaN in the reference; here every failure scores 7.
				want[i] = FailureScore
			}
			worst = max(worst, math.Abs(got-want[i]))
			if !(math.Abs(got-want[i]) <= scoreTol) || all[i] != got {
				t.Errorf("%s: score(%q) = %.17g (ScoreAll %.17g), numpy %.17g", tc.key, e, got, all[i], want[i])
			}
			if got == FailureScore {
				failures++
			}
		}
		t.Logf("%s: %d expressions, %d score %g, largest difference from numpy %.3g", tc.key, len(exprs), failures, FailureScore, worst)
	}
}

func TestTryScoreReasons(t *testing.T) {
	o, err := NewObjective("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want error
	}{
		{"exp( exp( exp( x ) ) )", ErrNonFinite},
		{"x / ( x - x )", ErrNonFinite},
		{"1 / ( 1 / 0 )", ErrDivisionByZero},
	} {
		s, err := o.TryScore(tc.text)
		if s != FailureScore || !errors.Is(err, tc.want) {
			t.Errorf("TryScore(%q) = %g, %v; want %g, %v", tc.text, s, err, FailureScore, tc.want)
		}
	}
	if s, err := o.TryScore("x +"); s != FailureScore || err == nil {
		t.Errorf("syntax error scores %g, %v", s, err)
	}
	// Overflow absorbed by a later operation is not a failure, as in numpy.
	if s, err := o.TryScore("1 / exp( exp( x ) )"); err != nil || s >= FailureScore {
		t.Errorf("1 / exp( exp( x ) ) scores %g, %v", s, err)
	}
	if s := o.Score(DefaultTarget); s != 0 {
		t.Errorf("target scores %g against itself", s)
	}
	if o.Target() != DefaultTarget || !LowerIsBetter {
		t.Error("default target or direction changed")
	}
}

func TestObjectiveBadTarget(t *testing.T) {
	for _, tc := range []struct{ target, msg string }{
		{"1 / 0", "division by zero"},
		{"exp( x * x * x )", "non-finite"},
		{"z + 1", `unknown name "z"`},
		{"1 +", "unexpected end"},
	} {
		_, err := NewObjective(tc.target)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("NewObjective(%q) error %v, want one mentioning %q", tc.target, err, tc.msg)
		}
	}
}

func TestParseExprPrecedence(t *testing.T) {
	xs := []float64{-2, 0.5, 3}
	for _, tc := range []struct {
		text string
		f    func(x float64) float64
	}{
		{"x + 1 * 2", func(x float64) float64 { return x + 2 }},
		{"1 / 3 * x", func(x float64) float64 { return 1.0 / 3 * x }},
		{"x - x - 1", func(x float64) float64 { return -1 }},
		{"2 * -x", func(x float64) float64 { return -2 * x }},
		{"--x", func(x float64) float64 { return x }},
		{"-x*x", func(x float64) float64 { return -x * x }},
		{"+.5e1 - x/2", func(x float64) float64 { return 5 - x/2 }},
		{"exp(sin(x))", func(x float64) float64 { return math.Exp(math.Sin(x)) }},
	} {
		e, err := ParseExpr(tc.text)
		if err != nil {
			t.Errorf("ParseExpr(%q): %v", tc.text, err)
			continue
		}
		got, err := e.Eval(xs)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		for i, x := range xs {
			if got[i] != tc.f(x) {
				t.Errorf("%q at %g = %g, want %g", tc.text, x, got[i], tc.f(x))
			}
		}
	}
}

func TestPairwiseSum(t *testing.T) {
	// Against a plain sum of values whose partial sums are exact.
	for _, n := range []int{0, 1, 7, 8, 9, 127, 128, 129, 1000} {
		a := make([]float64, n)
		want := 0.0
		for i := range a {
			a[i] = float64(i%13) - 4
			want += a[i]
		}
		if got := pairwiseSum(a); got != want {
			t.Errorf("n=%d: %g, want %g", n, got, want)
		}
	}
}

// BenchmarkScore scores one data set expression.
func BenchmarkScore(b *testing.B) {
	o, err := NewObjective("")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		o.Score("x + x + ( x ) + sin( x + x ) / exp( 2 * x )")
	}
}
