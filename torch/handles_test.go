package torch

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// settle lets the finalizers of tensors dropped by earlier tests run, so that
// the live count changes only through the test that follows.
func settle() {
	for {
		c := CollectedTensors()
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		if CollectedTensors() == c {
			return
		}
	}
}

func TestLiveTensorsCountsEveryHandleOnce(t *testing.T) {
	settle()
	base := LiveTensors()
	x := FromFloat32([]float32{1, 2, 3}, 3)
	y := x.Exp()
	if got := LiveTensors() - base; got != 2 {
		t.Fatalf("after two tensors: %d live, want 2", got)
	}
	w := FromFloat32([]float32{1}, 1, 1)
	if x.MatMul(w).Err() == nil { // fails: makes no handle
		t.Fatal("bad matmul succeeded")
	}
	y.Close()
	y.Close()
	if got := LiveTensors() - base; got != 2 {
		t.Fatalf("after closing one of three twice: %d live, want 2", got)
	}
	x.Close()
	w.Close()
	if got := LiveTensors() - base; got != 0 {
		t.Fatalf("after closing all: %d live", got)
	}
	sc := NewScope()
	a := sc.Own(FromFloat32([]float32{1}, 1))
	b := a.MulScalar(3).AddScalar(1) // joins the scope of a
	if b.Scope() != sc || sc.Len() != 3 {
		t.Fatalf("scope holds %d tensors", sc.Len())
	}
	settle()
	before := LiveTensors()
	sc.Close()
	b.Close()
	if got := before - LiveTensors(); got != 3 {
		t.Fatalf("scope close freed %d handles, want 3", got)
	}
}

func TestConcurrentCloseFreesOnce(t *testing.T) {
	settle()
	for range 50 {
		x := FromFloat32([]float32{1}, 1)
		before := LiveTensors()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(x.Close)
		}
		wg.Wait()
		if got := before - LiveTensors(); got != 1 {
			t.Fatalf("8 concurrent Close calls freed %d handles", got)
		}
	}
}

func TestFinalizerFreesDroppedTensors(t *testing.T) {
	live, collected := LiveTensors(), CollectedTensors()
	for range 100 {
		FromFloat32([]float32{1, 2}, 2).Neg() // both dropped unclosed
	}
	if LiveTensors() < live {
		t.Fatal("live count fell below its start")
	}
	deadline := time.Now().Add(10 * time.Second)
	for CollectedTensors()-collected < 200 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := CollectedTensors() - collected; got < 200 {
		t.Fatalf("finalizer freed %d of 200 dropped tensors", got)
	}
}

// TestArgumentBlocksBounded runs ops from many goroutines at once and checks
// that afterwards every C block of argument lists is back on the bounded free
// list or freed.
func TestArgumentBlocksBounded(t *testing.T) {
	x := FromFloat32([]float32{1, 2, 3}, 3)
	defer x.Close()
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			for range 20 {
				x.Add(x).Close()
			}
		})
	}
	wg.Wait()
	freeBlocks.Lock()
	live, listed := freeBlocks.live, len(freeBlocks.list)
	freeBlocks.Unlock()
	if live != listed || listed > maxFreeBlocks {
		t.Fatalf("%d blocks allocated, %d on the free list (at most %d)", live, listed, maxFreeBlocks)
	}
}
