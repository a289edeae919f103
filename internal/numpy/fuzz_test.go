package numpy

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/zipcrc"
	"github.com/tlbo-native/tlbo-native/internal/zipcrc/ziptest"
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
	f.Add(ziptest.Overwrite(f, own, "x.npy", 2))
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
		ziptest.CheckIntact(t, data)
	})
}

// FuzzReadNPZEntry wraps a .npy stream, stored or deflated, in a zip with
// the right CRC-32 (mutating a whole .npz rarely gets past its CRC-32s to
// the array parser): the archive reads as the stream does, to the same
// array or to an error.
func FuzzReadNPZEntry(f *testing.F) {
	for _, s := range npySeeds(f) {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, npy []byte, deflate bool) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		method := zip.Store
		if deflate {
			method = zip.Deflate
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "a.npy", Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(npy)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		arrays, err := readNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		want, wantErr := readArray(bytes.NewReader(npy), int64(len(npy)))
		switch {
		case (err == nil) != (wantErr == nil):
			t.Fatalf("in a zip: %v; alone: %v", err, wantErr)
		case err != nil:
			if errors.As(err, new(*zipcrc.Error)) {
				t.Fatalf("an intact entry refused: %v", err)
			}
			return
		}
		want.Name = "a"
		// Printed, as NaNs are not DeepEqual to themselves.
		if len(arrays) != 1 || fmt.Sprintf("%#v", arrays[0]) != fmt.Sprintf("%#v", want) {
			t.Fatalf("in a zip %v, alone %v", arrays, want)
		}
	})
}
