package numpy

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// npySeeds returns .npy streams: the arrays of a committed fixture written by
// WriteNPY, each kind of dtype, and broken variants.
func npySeeds(f *testing.F) [][]byte {
	dir := f.TempDir()
	arrays := []Array{
		{Name: "f4", Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}},
		{Name: "f8", Shape: []int{}, Data: []float64{1.5}},
		{Name: "i8", Shape: []int{0, 4}, Data: []int64{}},
		{Name: "b1", Shape: []int{2}, Data: []bool{true, false}},
		{Name: "u", Shape: []int{2}, Data: []string{"x + 1", "sin(x)"}},
	}
	fx, err := ReadNPZ(filepath.Join("..", "..", "testdata", "gp", "ei_ref.npz"))
	if err == nil && len(fx) > 0 {
		arrays = append(arrays, fx[0])
	}
	var seeds [][]byte
	for i, a := range arrays {
		path := filepath.Join(dir, a.Name+".npy")
		if err := WriteNPY(path, a); err != nil {
			f.Fatalf("seed %d: %v", i, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	first := seeds[0]
	return append(seeds, nil, first[:10], first[:len(first)-3],
		[]byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'}"),
		[]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"))
}

func FuzzReadNPY(f *testing.F) {
	for _, s := range npySeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := readArray(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if err := a.check(); err != nil {
			t.Fatalf("invalid array read: %v", err)
		}
		// A valid array writes and reads back the same.
		path := filepath.Join(t.TempDir(), "a.npy")
		if err := WriteNPY(path, a); err != nil {
			t.Fatalf("writing back %v %T: %v", a.Shape, a.Data, err)
		}
		b, err := ReadNPY(path)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if !reflect.DeepEqual(a.Shape, b.Shape) || !reflect.DeepEqual(a.Data, b.Data) {
			t.Fatalf("round trip changed %v %v into %v %v", a.Shape, a.Data, b.Shape, b.Data)
		}
	})
}

func FuzzReadNPZ(f *testing.F) {
	dir := f.TempDir()
	for _, a := range []string{"gp/ei_ref.npz", "torch/mse.npz", "expression/fixtures.npz"} {
		if data, err := os.ReadFile(filepath.Join("..", "..", "testdata", a)); err == nil {
			f.Add(data)
			f.Add(data[:len(data)/2])
		}
	}
	path := filepath.Join(dir, "own.npz")
	if err := WriteNPZ(path, []Array{{Name: "x", Shape: []int{2}, Data: []int32{1, 2}}}); err != nil {
		f.Fatal(err)
	}
	own, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(own)
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Fuzz(func(t *testing.T, data []byte) {
		arrays, err := readNPZ(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, a := range arrays {
			if err := a.check(); err != nil {
				t.Fatalf("invalid array read: %v", err)
			}
		}
	})
}
