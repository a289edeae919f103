package torch

import (
	"runtime"
	"testing"
)

// TestNumThreadsEveryOSThread checks that SetNumThreads holds on every OS
// thread, not only the one that called it: with OpenMP, at::set_num_threads
// sets the calling thread's count, and an OS thread that had run parallel work
// kept its old count, so Go calls landing there ran on another number of
// threads (issue 49: a resumed training rounded differently under
// OMP_NUM_THREADS=2). Each goroutine below is locked to its own OS thread.
func TestNumThreadsEveryOSThread(t *testing.T) {
	before := NumThreads()
	defer SetNumThreads(before)
	type ask struct {
		fn   func() int
		done chan int
	}
	other := make(chan ask)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for a := range other {
			a.done <- a.fn()
		}
	}()
	defer close(other)
	onOther := func(fn func() int) int {
		a := ask{fn, make(chan int)}
		other <- a
		return <-a.done
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	// The other thread runs parallel work at 3 threads, then this one asks
	// for 2: the other thread must see 2 as well.
	onOther(func() int {
		if err := SetNumThreads(3); err != nil {
			t.Error(err)
		}
		// Large enough for libtorch to open a parallel region.
		x := Ones([]int64{1024, 1024}, Float32, CPU)
		defer x.Close()
		y := x.Mul(x)
		defer y.Close()
		return NumThreads()
	})
	if err := SetNumThreads(2); err != nil {
		t.Fatal(err)
	}
	if got := NumThreads(); got != 2 {
		t.Fatalf("on the calling thread: %d threads, want 2", got)
	}
	if got := onOther(NumThreads); got != 2 {
		t.Fatalf("on another OS thread that had run at 3: %d threads, want 2", got)
	}
}
