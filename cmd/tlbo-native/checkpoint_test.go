package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/zipcrc/ziptest"
)

// TestCheckpointInspect: inspect lists an .npz's int32 and uint8 arrays
// with their own dtypes, and refuses a copy with bytes overwritten inside
// one array, naming the file and the entry.
func TestCheckpointInspect(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.npz")
	err := numpy.WriteNPZ(path, []numpy.Array{
		{Name: "counts", Shape: []int{2, 3}, Data: []int32{1, 2, 3, 4, 5, 6}},
		{Name: "mask", Shape: []int{300}, Data: make([]uint8, 300)},
		{Name: "w", Shape: []int{1}, Data: []float32{0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := runOut("checkpoint", "inspect", path)
	if want := "counts int32 [2, 3]\nmask uint8 [300]\nw float32 [1]\n"; err != nil || out != want {
		t.Errorf("inspect: %q, %v; want %q", out, err, want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.npz")
	if err := os.WriteFile(bad, ziptest.Overwrite(t, ziptest.Deflate(t, data), "mask.npy", 8), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runOut("checkpoint", "inspect", bad)
	if want := bad + `: entry "mask.npy": CRC-32 mismatch`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("corrupt file: %v, want %s", err, want)
	}
}
