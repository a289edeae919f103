package bo

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// sentinelTask is lineTask whose objective returns -1e308 (a program's
// "failed" sentinel, finite) at its first two calls: two such targets
// overflowed the plain mean to -Inf (as one does once a known object's
// score joins the GP's data again at a new latent point).
type sentinelTask struct {
	lineTask
	calls *int
}

func (s sentinelTask) Score(x float64) (float64, error) {
	*s.calls++
	if *s.calls <= 2 {
		return -1e308, nil
	}
	return s.lineTask.Score(x)
}

// TestExtremeScoreKeepsTheGP: after the objective returns -1e308 once, the
// GP still fits on finite standardised targets (the sentinel clamped to the
// standardiser's fence, which the journal counts) and no later proposal is
// a random fallback; a resumed run reads the same queries back.
func TestExtremeScoreKeepsTheGP(t *testing.T) {
	for _, q := range []int{1, 2} {
		cfg := lineConfig()
		cfg.Q = q
		calls := 0
		dir := t.TempDir()
		data := Data[float64]{Objects: []float64{-2, -1, 0, 0.5, 2.5}, Scores: []float64{-9, -4, -1, -0.25, -2.25}}
		var logs []string
		logf := func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
		res, err := Run[float64](cfg, sentinelTask{calls: &calls}, lineModel{}, data, Options{Dir: dir, Logf: logf})
		if err != nil {
			t.Fatal(err)
		}
		sentinel, sentinels := -1, 0
		for i, qu := range res.Queries {
			if qu.Score == -1e308 {
				sentinel, sentinels = i, sentinels+1
			}
			if qu.Random {
				t.Errorf("q=%d: query %d is a random fallback: %s", q, qu.Index, qu.RandomReason)
			}
		}
		if sentinels != 2 || sentinel == len(res.Queries)-1 {
			t.Fatalf("q=%d: %d sentinels, the last query %d of %d: want two with queries after them", q, sentinels, sentinel,
				len(res.Queries))
		}
		clamped := false
		for _, qu := range res.Queries[sentinel+1:] {
			if qu.GP == nil {
				continue
			}
			clamped = clamped || qu.GP.Clamped > 0
			if math.IsNaN(qu.GP.LogLik) || math.IsInf(qu.GP.LogLik, 0) || !(qu.GP.Outputscale > 0) {
				t.Errorf("q=%d: query %d's GP fit: %+v", q, qu.Index, *qu.GP)
			}
		}
		if !clamped {
			t.Errorf("q=%d: no GP fit after the sentinel journals a clamped target", q)
		}
		if !strings.Contains(strings.Join(logs, "\n"), "clamped") {
			t.Errorf("q=%d: no note of the clamp in the log:\n%s", q, strings.Join(logs, "\n"))
		}
		again, err := Run[float64](cfg, sentinelTask{calls: new(int)}, lineModel{}, data, Options{Dir: dir, Resume: true})
		if err != nil {
			t.Fatalf("q=%d: resume: %v", q, err)
		}
		if len(again.Queries) != len(res.Queries) || again.Queries[sentinel].Score != -1e308 {
			t.Errorf("q=%d: resume read %d queries back, want %d with the sentinel", q, len(again.Queries), len(res.Queries))
		}
	}
}

// TestSurrogateExtremeTargets: the surrogate's standardised targets are
// finite and its GP fits whatever finite utilities it holds.
func TestSurrogateExtremeTargets(t *testing.T) {
	for _, u := range [][]float64{
		{-1e308, -9, -4, -1, -0.25, -2.25},
		{1e308, -9, -4, -1, -0.25, -2.25},
		{-math.MaxFloat64, math.MaxFloat64, -4, -1, -0.25, -2.25},
		{-1e308, -1e308, -1e308, -1e308, -1e308, -1e308},
	} {
		s := surrogate{cfg: lineConfig()}
		x := [][]float64{{-2}, {-1}, {0}, {0.5}, {2.5}, {1.2}}
		s.reset(x, u)
		f := s.fit(1)
		if f.err != nil || f.model == nil {
			t.Errorf("%v: GP fit failed: %v", u, f.err)
			continue
		}
		for i, y := range f.yStd {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				t.Errorf("%v: target %d standardises to %v", u, i, y)
			}
		}
	}
}
