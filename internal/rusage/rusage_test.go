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
