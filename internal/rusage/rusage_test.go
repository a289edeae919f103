package rusage

import "testing"

// TestCPUSecondsGrows: spinning for a while adds CPU time, and the peak
// memory is positive.
func TestCPUSecondsGrows(t *testing.T) {
	before := CPUSeconds()
	x := 0.0
	for i := range 20_000_000 {
		x += float64(i % 7)
	}
	after := CPUSeconds()
	if !(after > before) || x == 0 {
		t.Errorf("CPU seconds %v then %v", before, after)
	}
	if !(PeakRSSMB() > 0) {
		t.Errorf("peak RSS %v MiB", PeakRSSMB())
	}
}

// TestThreadCPU: ThreadCPU counts the work of f's own thread, not that of
// another goroutine running meanwhile.
func TestThreadCPU(t *testing.T) {
	spin := func() float64 {
		x := 0.0
		for i := range 20_000_000 {
			x += float64(i % 7)
		}
		return x
	}
	var x float64
	if busy := ThreadCPU(func() { x = spin() }); !(busy > 0) || x == 0 {
		t.Errorf("a spin: %v CPU s", busy)
	}
	done := make(chan float64)
	before := CPUSeconds()
	idle := ThreadCPU(func() {
		go func() { done <- spin() }()
		x = <-done
	})
	other := CPUSeconds() - before
	if !(idle < other/2) {
		t.Errorf("waiting for another goroutine's spin: %v CPU s on the waiting thread, %v in the process", idle, other)
	}
}
