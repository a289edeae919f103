package torch

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// TestLoadNPZDTypes: every numeric .npz dtype loads as the tensor dtype of
// the same name (int32 and uint8 were widened to int64), with its shape and
// values; a string array is refused naming the file and the array.
func TestLoadNPZDTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npz")
	arrays := []numpy.Array{
		{Name: "f4", Shape: []int{2, 2}, Data: []float32{1, -2, 3.5, 4}},
		{Name: "f8", Shape: []int{2, 2}, Data: []float64{1, -2, 3.5, 4}},
		{Name: "i8", Shape: []int{2, 2}, Data: []int64{1, -2, 3, 1 << 40}},
		{Name: "i4", Shape: []int{2, 2}, Data: []int32{1, -2, 3, -1 << 31}},
		{Name: "u1", Shape: []int{2, 2}, Data: []uint8{0, 1, 128, 255}},
		{Name: "b1", Shape: []int{2, 2}, Data: []bool{true, false, false, true}},
		{Name: "u1-scalar", Shape: []int{}, Data: []uint8{7}},
	}
	want := map[string]DType{"f4": Float32, "f8": Float64, "i8": Int64, "i4": Int32, "u1": Uint8, "b1": Bool, "u1-scalar": Uint8}
	must(t, numpy.WriteNPZ(path, arrays))
	sd, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer CloseNamed(sd)
	if len(sd) != len(arrays) {
		t.Fatalf("%d tensors, want %d", len(sd), len(arrays))
	}
	for i, n := range sd {
		a := arrays[i]
		if n.Name != a.Name || n.Tensor.DType() != want[a.Name] || !slices.Equal(n.Tensor.Shape(), toInt64s(a.Shape)) {
			t.Errorf("tensor %d: %s %s %v, want %s %s %v", i, n.Name, n.Tensor.DType(), n.Tensor.Shape(), a.Name, want[a.Name], a.Shape)
		}
		got, err := n.Tensor.Float64s()
		wantValues, _ := a.Float64s()
		if a.Name == "b1" {
			wantValues = []float64{1, 0, 0, 1}
		}
		if err != nil || !slices.Equal(got, wantValues) {
			t.Errorf("%s: %v (%v), want %v", a.Name, got, err, wantValues)
		}
	}
	must(t, numpy.WriteNPZ(path, []numpy.Array{{Name: "names", Shape: []int{1}, Data: []string{"x"}}}))
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path+`: array "names": []string is not numeric`) {
		t.Errorf("string array: %v", err)
	}
}
