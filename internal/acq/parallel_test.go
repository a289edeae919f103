package acq_test

import (
	"slices"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/openblas"
)

// batchSizes records the sizes of the batches asked of f, safely from
// several goroutines.
type batchSizes struct {
	acq.Acquisition
	raw, grad atomic.Int64 // calls
	largest   atomic.Int64 // rows of the largest gradient batch
}

func (b *batchSizes) EvalBatch(x *mat.Dense, dst []float64) {
	b.raw.Add(1)
	b.Acquisition.EvalBatch(x, dst)
}

func (b *batchSizes) EvalGradBatch(x *mat.Dense, dst []float64, grad *mat.Dense) {
	b.grad.Add(1)
	q, _ := x.Dims()
	for {
		l := b.largest.Load()
		if int64(q) <= l || b.largest.CompareAndSwap(l, int64(q)) {
			break
		}
	}
	b.Acquisition.EvalGradBatch(x, dst, grad)
}

// TestMaximizeWorkers: the maximiser's point and evaluations are the same
// bit for bit on 1, 2 and 4 workers, and whatever OpenBLAS's thread count
// was when it was called (it runs OpenBLAS on one thread and gives the
// count back): the raw samples and the restarts are split into chunks
// that do not depend on the workers, and so are the restarts' ends
// (Result.Ends). The value is f.Eval's at the point
// on the caller's threads. 121 starts (120 restarts and
// an extra start) make 3 lockstep chunks of 41, 40 and 40, and 600 raw
// samples 5 batches; EI, log-EI and UCB of an SGPR posterior, whose batch
// rows differ from one another's by rounding with the batch's size.
func TestMaximizeWorkers(t *testing.T) {
	const d = 6
	model := benchPosterior(t, 600, d, 80).Model
	lower, upper := unitBounds(d)
	before := openblas.Threads()
	defer openblas.SetThreads(before)
	for _, f := range []acq.Acquisition{acq.NewEI(model, 0.8), acq.NewLogEI(model, 1.5), acq.NewUCB(model, 2)} {
		opts := acq.Options{RawSamples: 600, Restarts: 120, Seed: 5, Starts: [][]float64{{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}}}
		var want acq.Result
		for _, w := range []int{1, 2, 4} {
			openblas.SetThreads(w)
			opts.Workers = w
			b := &batchSizes{Acquisition: f}
			got, err := acq.Maximize(b, lower, upper, opts)
			if err != nil {
				t.Fatal(err)
			}
			if n := openblas.Threads(); n != w {
				t.Fatalf("%v on %d workers: OpenBLAS has %d threads after Maximize, want %d back", f.Kind, w, n, w)
			}
			if raw, largest := b.raw.Load(), b.largest.Load(); raw != 5 || largest != 41 {
				t.Errorf("%v on %d workers: %d raw-sample batches and gradient batches of up to %d rows, want 5 and 41", f.Kind, w, raw, largest)
			}
			if v := f.Eval(got.X, nil); got.Value != v {
				t.Errorf("%v on %d workers: value %.17g, f.Eval %.17g at its point", f.Kind, w, got.Value, v)
			}
			if w == 1 {
				want = got
				continue
			}
			if !slices.Equal(got.X, want.X) || got.Evaluations != want.Evaluations {
				t.Errorf("%v: %d workers X %v after %d evaluations, 1 worker %v after %d", f.Kind, w, got.X, got.Evaluations, want.X, want.Evaluations)
			}
			// The restarts' ends too (the loop's warm starts).
			if len(got.Ends) != 121 || !slices.EqualFunc(got.Ends, want.Ends, slices.Equal) || !slices.Equal(got.EndValues, want.EndValues) {
				t.Errorf("%v: %d workers' %d restart ends differ from 1 worker's %d", f.Kind, w, len(got.Ends), len(want.Ends))
			}
		}
	}
}

// TestWorkersDefault: Options.Workers 0 takes SetWorkers' count, and
// SetWorkers(0) all of GOMAXPROCS.
func TestWorkersDefault(t *testing.T) {
	before := acq.Workers()
	defer acq.SetWorkers(before)
	acq.SetWorkers(3)
	if acq.Workers() != 3 {
		t.Fatalf("SetWorkers(3): Workers() = %d", acq.Workers())
	}
	acq.SetWorkers(0)
	if acq.Workers() < 1 {
		t.Fatalf("SetWorkers(0): Workers() = %d", acq.Workers())
	}
}
