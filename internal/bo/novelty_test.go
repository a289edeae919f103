package bo

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// gridTask scores points of R^1 by -(x-1)^2 (maximised).
type gridTask struct{}

func (gridTask) Score(x float64) (float64, error) { return -(x - 1) * (x - 1), nil }
func (gridTask) FailureScore() float64            { return -10 }
func (gridTask) Maximize() bool                   { return true }
func (gridTask) Deterministic() bool              { return true }
func (gridTask) Key(x float64) string             { return formatFloat(x) }
func (gridTask) Parse(k string) (float64, error)  { return parseFloat(k) }

// gridModel is the identity map of R^1 rounded to a grid of step `step`
// and clamped to [lo, hi]: nearby latent points decode to the same object.
type gridModel struct{ step, lo, hi float64 }

func (gridModel) LatentDim() int       { return 1 }
func (gridModel) Accept(float64) error { return nil }
func (gridModel) Encode(xs []float64) (*mat.Dense, error) {
	return mat.NewDense(len(xs), 1, append([]float64(nil), xs...)), nil
}
func (m gridModel) Decode(z *mat.Dense, _ uint64) ([]float64, []bool, error) {
	n, _ := z.Dims()
	xs, ok := make([]float64, n), make([]bool, n)
	for i := range xs {
		x := math.Round(z.At(i, 0)/m.step) * m.step
		xs[i], ok[i] = math.Round(math.Max(m.lo, math.Min(m.hi, x))*1e6)/1e6, true
	}
	return xs, ok, nil
}
func (gridModel) Retrain(RetrainRequest[float64]) (map[string]float64, error) { return nil, nil }
func (gridModel) Save(string) error                                           { return nil }
func (gridModel) Load(string) error                                           { return nil }

func gridRun(t *testing.T, cfg Config, m gridModel) *Result {
	t.Helper()
	data := Data[float64]{Objects: []float64{-2, -1, 0, 0.5, 1, 2.5}}
	for _, x := range data.Objects {
		data.Scores = append(data.Scores, -(x-1)*(x-1))
	}
	res, err := Run[float64](cfg, gridTask{}, m, data, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestNoveltyRedoExhausted: every decode is a seen object (the grid is
// clamped onto the data), so each query perturbs 10 times in each of its
// 1 + 3 attempts and then evaluates the duplicate.
func TestNoveltyRedoExhausted(t *testing.T) {
	cfg := lineConfig()
	cfg.Repeats = RepeatsAuthors
	res := gridRun(t, cfg, gridModel{step: 1, lo: 1, hi: 1})
	for _, q := range res.Queries {
		if !q.Duplicate || q.Redos != 3 || q.Perturbations != 40 || q.Proposed != nil || q.Object != "1" {
			t.Errorf("query %d: duplicate %v, %d redos, %d perturbations, proposed %v, object %q; want a duplicate of 1 after 3 redos and 40 perturbations, z unperturbed",
				q.Index, q.Duplicate, q.Redos, q.Perturbations, q.Proposed, q.Object)
		}
	}
}

// TestNoveltyRedoCoarse: on a 0.1 grid the proposals near the best point
// decode to seen objects; the perturbations and redos record what they
// did, and an accepted perturbation records the proposal it came from.
func TestNoveltyRedoCoarse(t *testing.T) {
	cfg := lineConfig()
	cfg.Repeats = RepeatsAuthors
	cfg.Budget, cfg.RetrainEvery = 12, 12
	res := gridRun(t, cfg, gridModel{step: 0.1, lo: -3, hi: 3})
	seen := map[string]bool{"-2": true, "-1": true, "0": true, "0.5": true, "1": true, "2.5": true}
	checked := 0
	for _, q := range res.Queries {
		t.Logf("query %d: z %.4f proposed %v object %s perturbations %d redos %d duplicate %v", q.Index, q.Z[0], q.Proposed, q.Object, q.Perturbations, q.Redos, q.Duplicate)
		switch {
		case q.Duplicate != seen[q.Object]:
			t.Errorf("query %d: duplicate flag %v for object %s (seen %v)", q.Index, q.Duplicate, q.Object, seen[q.Object])
		case q.Duplicate && (q.Redos != 3 || q.Perturbations != 40):
			t.Errorf("query %d: a duplicate after %d redos and %d perturbations, want 3 and 40", q.Index, q.Redos, q.Perturbations)
		case q.Perturbations > 10*(q.Redos+1) || q.Perturbations < 10*q.Redos:
			t.Errorf("query %d: %d perturbations in %d attempts", q.Index, q.Perturbations, q.Redos+1)
		case q.Proposed != nil && (q.Perturbations == 0 || math.Abs(q.Proposed[0]-q.Z[0]) > 0.1):
			t.Errorf("query %d: z %v perturbed from %v after %d perturbations", q.Index, q.Z, q.Proposed, q.Perturbations)
		}
		if q.Perturbations > 0 {
			checked++
		}
		seen[q.Object] = true
	}
	if checked == 0 {
		t.Error("no query needed the novelty check; the test checks nothing")
	}
}

// TestExclusionPenalty checks the penalised acquisition: zero (EI) or very
// low (log-EI) at a tried point, unchanged far from it, and gradients that
// match finite differences.
func TestExclusionPenalty(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{0.1, 0.2, 0.3, 0.9, 0.5, 0.5, 0.7, 0.1, 0.9, 0.8, 0.2, 0.6})
	y := []float64{-1, 0.5, 1.2, -0.3, 0.8, 0.1}
	m, err := gp.Fit(x, y, gp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nz := gp.Normalizer{Lower: []float64{-2, -1}, Upper: []float64{2, 3}}
	tried := []triedPoint{{z: []float64{0, 1}, radius: 0.1}, {z: []float64{0.4, 1.2}, radius: 0.2}}
	for _, log := range []bool{false, true} {
		inner := acq.NewEI(m, 0.5)
		if log {
			inner = acq.NewLogEI(m, 0.5)
		}
		e := newExclusion(inner, log, nz, tried)
		at := []float64{0.5, 0.5} // the unit-box image of the first tried point
		v := e.Eval(at, nil)
		if (!log && v > 1e-300) || (log && v > inner.Eval(at, nil)-100) {
			t.Errorf("log %v: value %v at a tried point (unpenalised %v)", log, v, inner.Eval(at, nil))
		}
		far := []float64{0.95, 0.05}
		if got, want := e.Eval(far, nil), inner.Eval(far, nil); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("log %v: value %v far from the tried points, want %v", log, got, want)
		}
		for _, p := range [][]float64{{0.51, 0.505}, {0.6, 0.56}, {0.3, 0.7}} {
			grad := make([]float64, 2)
			e.Eval(p, grad)
			for k := range p {
				const h = 1e-6
				hi, lo := append([]float64(nil), p...), append([]float64(nil), p...)
				hi[k] += h
				lo[k] -= h
				fd := (e.Eval(hi, nil) - e.Eval(lo, nil)) / (2 * h)
				if math.Abs(fd-grad[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("log %v at %v: gradient %d is %v, finite difference %v", log, p, k, grad[k], fd)
				}
			}
		}
		batch := make([]float64, 2)
		e.EvalBatch(mat.NewDense(2, 2, []float64{0.55, 0.52, 0.3, 0.7}), batch)
		for i, p := range [][]float64{{0.55, 0.52}, {0.3, 0.7}} {
			if want := e.Eval(p, nil); math.Abs(batch[i]-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("log %v: EvalBatch gives %v at %v, Eval %v", log, batch[i], p, want)
			}
		}
	}
}
