package torch

import (
	"runtime/debug"
	"sync/atomic"
	"testing"
)

// churn allocates until stop is closed, so that with GOGC=1 the collector runs
// (and finalizers fire) while the test goroutine is inside C calls.
func churn(stop <-chan struct{}, sink *atomic.Pointer[[]byte]) {
	for {
		select {
		case <-stop:
			return
		default:
			b := make([]byte, 1<<10)
			sink.Store(&b)
		}
	}
}

// TestTemporariesUnderGOGC1 calls ops on temporaries (results never closed,
// operands dropped right after the call) with the collector running almost
// continuously. If a call did not keep its operands alive until C returns, a
// finalizer would free a handle C is reading: the test would crash or read
// wrong values. Every result is checked.
func TestTemporariesUnderGOGC1(t *testing.T) {
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	stop := make(chan struct{})
	defer close(stop)
	var sink atomic.Pointer[[]byte]
	go churn(stop, &sink)
	const parts = 256
	want := float64(parts * (parts - 1)) // 2 * (0 + 1 + ... + parts-1)
	for i := range iters {
		ts := make([]*Tensor, parts)
		for k := range ts {
			ts[k] = FromFloat32([]float32{float32(k)}, 1)
		}
		// Cat reads 256 handles from a list that only its argument list refers to:
		// without runtime.KeepAlive in op.call this fails in nearly every run.
		got, err := Cat(ts, 0).MulScalar(2).ToDType(Float64).Sum().Item()
		if err != nil || got != want {
			t.Fatalf("iteration %d: sum %v, %v; want %v", i, got, err, want)
		}
		v, err := FromFloat64([]float64{1, 2, 3}, 3).Add(FromFloat64([]float64{4, 5, 6}, 3)).Float64s()
		if err != nil || v[0] != 5 || v[1] != 7 || v[2] != 9 {
			t.Fatalf("iteration %d: add %v, %v", i, v, err)
		}
		if s := FromFloat32(make([]float32, 6), 2, 3).Transpose(0, 1).Shape(); len(s) != 2 || s[0] != 3 {
			t.Fatalf("iteration %d: shape %v", i, s)
		}
	}
}
