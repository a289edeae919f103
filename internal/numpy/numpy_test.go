package numpy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

func TestRoundTripNPZ(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npz")
	in := []Array{
		{Name: "w", Shape: []int{2, 3, 2}, Data: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{Name: "b", Shape: []int{3}, Data: []float64{1.5, -2, 3}},
		{Name: "n", Shape: []int{}, Data: []int64{7}},
		{Name: "m", Shape: []int{2, 2}, Data: []bool{true, false, false, true}},
		{Name: "s", Shape: []int{2}, Data: []string{"x + 1", "sin(x)"}},
	}
	if err := WriteNPZ(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d arrays, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i].Name != in[i].Name || !reflect.DeepEqual(out[i].Shape, in[i].Shape) ||
			!reflect.DeepEqual(out[i].Data, in[i].Data) {
			t.Errorf("array %d: got %+v want %+v", i, out[i], in[i])
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	if err := WriteNPZ(filepath.Join(dir, "x.npz"), []Array{{Name: "a", Shape: []int{3}, Data: []float32{1}}}); err == nil {
		t.Fatal("shape mismatch accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.npz")); err == nil {
		t.Fatal("half-written file left behind")
	}
	bad := filepath.Join(dir, "bad.npz")
	os.WriteFile(bad, []byte("not a zip"), 0o644)
	if _, err := ReadNPZ(bad); err == nil {
		t.Fatal("garbage accepted")
	}
	if _, err := ReadNPY(filepath.Join(dir, "missing.npy")); err == nil {
		t.Fatal("missing file accepted")
	}
}

// TestRoundTripEdgeCases covers what npyio's writer got wrong: empty arrays
// of rank 2 (written with shape (0,)) and non-ASCII strings (sized in bytes).
func TestRoundTripEdgeCases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.npz")
	in := []Array{
		{Name: "empty", Shape: []int{0, 3}, Data: []float64{}},
		{Name: "text", Shape: []int{3}, Data: []string{"é∑ x", "", "sin(x)"}},
		{Name: "scalar", Shape: []int{}, Data: []string{"ü"}},
	}
	if err := WriteNPZ(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if !reflect.DeepEqual(in[i].Shape, out[i].Shape) || !reflect.DeepEqual(in[i].Data, out[i].Data) {
			t.Errorf("%s: wrote %v %q, read %v %q", in[i].Name, in[i].Shape, in[i].Data, out[i].Shape, out[i].Data)
		}
	}
}

// TestAtomicWriteFullDisk: a write that fails as on a full disk (the
// *fs.PathError os.File.Write returns, on the temporary file, wrapped by
// a writer) is reported on the file asked for, as "no space left on
// device", recognisable with errors.Is; no temporary file is left and the
// file there before is untouched.
func TestAtomicWriteFullDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "scores.npz")
	if err := os.WriteFile(path, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := AtomicWriteFile(path, func(w io.Writer) error {
		f := w.(*os.File)
		return fmt.Errorf("array %q: %w", "score", &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC})
	})
	if want := "write " + path + ": no space left on device"; err == nil || err.Error() != want || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("got %v, want %s and errors.Is ENOSPC", err, want)
	}
	entries, _ := os.ReadDir(dir)
	if b, _ := os.ReadFile(path); len(entries) != 1 || string(b) != "before" {
		t.Errorf("after the failure: %d files, %q at %s", len(entries), b, path)
	}
	// Other errors keep their context.
	err = AtomicWriteFile(path, func(io.Writer) error { return errors.New("array \"x\": unsupported") })
	if want := "write " + path + `: array "x": unsupported`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
