package acq_test

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
)

// rowModel hides a model's batched gradients, so that an acquisition of it
// evaluates a batch row by row, exactly as Eval.
type rowModel struct{ acq.Model }

// countingBatch counts the batches of gradients asked of f and their sizes.
type countingBatch struct {
	acq.Acquisition
	calls, largest int
}

func (c *countingBatch) EvalGradBatch(x *mat.Dense, dst []float64, grad *mat.Dense) {
	q, _ := x.Dims()
	c.calls++
	c.largest = max(c.largest, q)
	c.Acquisition.EvalGradBatch(x, dst, grad)
}

// unitBounds returns the bounds of [0,1]^d.
func unitBounds(d int) (lower, upper []float64) {
	lower, upper = make([]float64, d), make([]float64, d)
	for k := range upper {
		upper[k] = 1
	}
	return lower, upper
}

// TestLockstepSameAsSequential: with batches whose rows are Eval's, the
// restarts refined in lockstep end exactly where the sequential path's do
// (EI, log-EI and UCB of an SGPR posterior; extra starts included), in one
// batch a step for all the restarts (13 starts make one chunk).
func TestLockstepSameAsSequential(t *testing.T) {
	const d = 6
	model := benchPosterior(t, 300, d, 40).Model
	lower, upper := unitBounds(d)
	for _, f := range []acq.Acquisition{acq.NewEI(rowModel{model}, 0.8), acq.NewLogEI(rowModel{model}, 1.5), acq.NewUCB(rowModel{model}, 2)} {
		opts := acq.Options{RawSamples: 200, Restarts: 12, Seed: 4, Starts: [][]float64{{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}}}
		c := &countingBatch{Acquisition: f}
		got, err := acq.Maximize(c, lower, upper, opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.Sequential = true
		want, err := acq.Maximize(f, lower, upper, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.X, want.X) || got.Value != want.Value || got.Evaluations != want.Evaluations {
			t.Errorf("%v: lockstep %+v, sequential %+v", f.Kind, got, want)
		}
		if c.calls == 0 || c.largest != opts.Restarts+1 {
			t.Errorf("%v: %d batches of at most %d points, want batches of all %d restarts", f.Kind, c.calls, c.largest, opts.Restarts+1)
		}
	}
}

// TestLockstepGPModel: with an SGPR posterior's batched gradients, whose
// rows differ from Eval's by the rounding of reordered dot products
// (internal/gp's TestPredictGradBatch), the lockstep maximisation finds
// the sequential one's maximiser: every decision of a restart (the Armijo
// test, the stopping tests) is the same unless a comparison falls within
// that rounding of its threshold, and a restart that then stops a step
// earlier or later has met the projected-gradient test (Tol 1e-6 of the
// box) near the same optimum. At an interior optimum the value is flat, so
// a rounding of about 1e-16 in it moves the point by up to about its square
// root (1e-8 is seen here); the values agree to 1e-12 relative and the
// points to 1e-6. It is deterministic.
func TestLockstepGPModel(t *testing.T) {
	for _, d := range []int{5, 25} {
		f := benchPosterior(t, 600, d, 80)
		lower, upper := unitBounds(d)
		for seed := uint64(1); seed <= 3; seed++ {
			opts := acq.Options{RawSamples: 300, Restarts: 20, Seed: seed}
			got, err := acq.Maximize(f, lower, upper, opts)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := acq.Maximize(f, lower, upper, opts)
			if !slices.Equal(got.X, again.X) || got.Value != again.Value {
				t.Errorf("d=%d seed %d: lockstep not deterministic: %v then %v", d, seed, got, again)
			}
			opts.Sequential = true
			want, err := acq.Maximize(f, lower, upper, opts)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Value-want.Value) > 1e-12*math.Abs(want.Value) {
				t.Errorf("d=%d seed %d: lockstep value %.17g, sequential %.17g", d, seed, got.Value, want.Value)
			}
			for k := range got.X {
				if math.Abs(got.X[k]-want.X[k]) > 1e-6 {
					t.Errorf("d=%d seed %d: lockstep maximiser %v, sequential %v", d, seed, got.X, want.X)
					break
				}
			}
		}
	}
}
