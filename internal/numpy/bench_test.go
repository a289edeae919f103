package numpy

import (
	"path/filepath"
	"testing"
)

// BenchmarkReadNPY reads a 1,000,000-element float32 array (4 MB).
func BenchmarkReadNPY(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.npy")
	data := make([]float32, 1_000_000)
	for i := range data {
		data[i] = float32(i)
	}
	if err := WriteNPY(path, Array{Shape: []int{1000, 1000}, Data: data}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 * int64(len(data)))
	for b.Loop() {
		if _, err := ReadNPY(path); err != nil {
			b.Fatal(err)
		}
	}
}
