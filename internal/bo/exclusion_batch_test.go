package bo

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// rowModel hides a model's batched gradients: an acquisition of it
// evaluates a batch row by row, as Eval.
type rowModel struct{ acq.Model }

// TestExclusionGradBatch: the penalised acquisition's batch of values and
// gradients (the maximiser's restarts in lockstep) is Eval's at each row,
// bit for bit when the inner acquisition's rows are Eval's, and to the
// rounding of the GP's reordered dot products when they come from its
// batched prediction (at most a few units in the last place of values of
// order 1 on this 6-point posterior: 1e-12 relative).
func TestExclusionGradBatch(t *testing.T) {
	x := mat.NewDense(6, 2, []float64{0.1, 0.2, 0.3, 0.9, 0.5, 0.5, 0.7, 0.1, 0.9, 0.8, 0.2, 0.6})
	y := []float64{-1, 0.5, 1.2, -0.3, 0.8, 0.1}
	m, err := gp.Fit(x, y, gp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nz := gp.Normalizer{Lower: []float64{-2, -1}, Upper: []float64{2, 3}}
	tried := []triedPoint{{z: []float64{0, 1}, radius: 0.1}, {z: []float64{0.4, 1.2}, radius: 0.2}}
	pts := mat.NewDense(4, 2, []float64{0.55, 0.52, 0.3, 0.7, 0.51, 0.505, 0.95, 0.05})
	for _, model := range []acq.Model{rowModel{m}, m} {
		_, exact := model.(rowModel)
		tol := 1e-12
		if exact {
			tol = 0
		}
		for _, log := range []bool{false, true} {
			inner := acq.NewEI(model, 0.5)
			if log {
				inner = acq.NewLogEI(model, 0.5)
			}
			e := newExclusion(inner, log, nz, tried)
			vals, grads := make([]float64, 4), mat.NewDense(4, 2, nil)
			e.EvalGradBatch(pts, vals, grads)
			for i := 0; i < 4; i++ {
				g := make([]float64, 2)
				v := e.Eval(pts.RawRowView(i), g)
				if math.Abs(vals[i]-v) > tol*math.Max(1, math.Abs(v)) {
					t.Errorf("exact %v log %v row %d: batch value %v, Eval %v", exact, log, i, vals[i], v)
				}
				for k := range g {
					if math.Abs(grads.At(i, k)-g[k]) > tol*math.Max(1, math.Abs(g[k])) {
						t.Errorf("exact %v log %v row %d: batch gradient %v, Eval %v", exact, log, i, grads.RawRowView(i), g)
					}
				}
			}
		}
	}
}
