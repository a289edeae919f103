package torch

import (
	"runtime"
	"testing"
)

// TestReleaseFreeMemory frees every other one of many 64 KiB tensors, so
// that the freed ones are holes free() cannot hand back by itself, and
// checks that ReleaseFreeMemory returns their pages.
func TestReleaseFreeMemory(t *testing.T) {
	runtime.LockOSThread() // one arena
	defer runtime.UnlockOSThread()
	ts := make([]*Tensor, 2000)
	for i := range ts {
		ts[i] = Zeros([]int64{8192}, Float64, CPU)
	}
	for i := 0; i < len(ts); i += 2 {
		ts[i].Close()
	}
	if !ReleaseFreeMemory() {
		t.Error("no free pages released after freeing 1000 tensors of 64 KiB between live ones")
	}
	for i := 1; i < len(ts); i += 2 {
		ts[i].Close()
	}
}
