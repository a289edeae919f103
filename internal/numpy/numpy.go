// Package numpy reads and writes NumPy .npy and .npz files of n-dimensional
// arrays through github.com/sbinet/npyio, adding what the project needs on top:
// arrays of any rank from flat row-major Go slices, arrays in file order, and
// atomic writes (temporary file, then rename).
package numpy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/sbinet/npyio/npy"
	"github.com/sbinet/npyio/npz"
)

// Array is an n-dimensional array: Data is a flat row-major slice ([]float32,
// []float64, []int64, []int32, []uint8, []bool or []string) holding the product
// of Shape elements. A scalar has an empty Shape and one element.
type Array struct {
	Name  string
	Shape []int
	Data  any
}

// Len returns the number of elements the shape holds.
func (a Array) Len() int {
	n := 1
	for _, s := range a.Shape {
		n *= s
	}
	return n
}

// check verifies that the data length matches the shape.
func (a Array) check() error {
	rv := reflect.ValueOf(a.Data)
	if rv.Kind() != reflect.Slice {
		return fmt.Errorf("array %q: data is %T, want a slice", a.Name, a.Data)
	}
	if rv.Len() != a.Len() {
		return fmt.Errorf("array %q: shape %v needs %d elements, data has %d", a.Name, a.Shape, a.Len(), rv.Len())
	}
	return nil
}

// shaped returns a value npyio writes with the given shape: the flat slice for
// rank 1, its element for rank 0, and for higher ranks a Go array type of that
// shape laid over the slice's memory (no copy).
func shaped(flat reflect.Value, shape []int) reflect.Value {
	switch {
	case len(shape) == 0:
		return flat.Index(0)
	case len(shape) == 1:
		return flat
	}
	typ := flat.Type().Elem()
	for i := len(shape) - 1; i >= 0; i-- {
		typ = reflect.ArrayOf(shape[i], typ)
	}
	if flat.Len() == 0 {
		return reflect.New(typ).Elem()
	}
	return reflect.NewAt(typ, flat.Index(0).Addr().UnsafePointer()).Elem()
}

// WriteNPZ writes arrays, in order, to an uncompressed .npz file at path, atomically.
func WriteNPZ(path string, arrays []Array) error {
	return atomicWrite(path, func(w io.Writer) error {
		zw := npz.NewWriter(w)
		for _, a := range arrays {
			if err := a.check(); err != nil {
				return err
			}
			if err := zw.Write(a.Name+".npy", shaped(reflect.ValueOf(a.Data), a.Shape).Interface()); err != nil {
				return fmt.Errorf("array %q: %w", a.Name, err)
			}
		}
		return zw.Close()
	})
}

// WriteNPY writes one array to a .npy file at path, atomically.
func WriteNPY(path string, a Array) error {
	if err := a.check(); err != nil {
		return err
	}
	return atomicWrite(path, func(w io.Writer) error {
		return npy.Write(w, shaped(reflect.ValueOf(a.Data), a.Shape).Interface())
	})
}

// atomicWrite writes through fill into a temporary file beside path and renames
// it into place, so that readers never see a half-written file.
func atomicWrite(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes 0600 files
		return fail(err)
	}
	if err := fill(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// AtomicWriteFile writes data to path through a temporary file and a rename.
func AtomicWriteFile(path string, fill func(io.Writer) error) error { return atomicWrite(path, fill) }

// ReadNPY reads a .npy file.
func ReadNPY(path string) (Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return Array{}, err
	}
	defer f.Close()
	a, err := readArray(bufio.NewReader(f))
	if err != nil {
		return Array{}, fmt.Errorf("%s: %w", path, err)
	}
	a.Name = strings.TrimSuffix(filepath.Base(path), ".npy")
	return a, nil
}

// ReadNPZ reads every array of a .npz file, in the order they are stored.
func ReadNPZ(path string) ([]Array, error) {
	r, err := npz.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: not a .npz file: %w", path, err)
	}
	defer r.Close()
	keys := r.Keys()
	out := make([]Array, 0, len(keys))
	for _, key := range keys {
		name := strings.TrimSuffix(key, ".npy")
		a, err := readEntry(r, key)
		if err != nil {
			return nil, fmt.Errorf("%s: array %q: %w", path, name, err)
		}
		a.Name = name
		out = append(out, a)
	}
	return out, nil
}

func readEntry(r *npz.Reader, key string) (Array, error) {
	rc, err := r.Open(key)
	if err != nil {
		return Array{}, err
	}
	defer rc.Close()
	return readArray(bufio.NewReader(rc))
}

// readArray reads one .npy stream into a flat slice.
func readArray(rd io.Reader) (Array, error) {
	r, err := npy.NewReader(rd)
	if err != nil {
		return Array{}, fmt.Errorf("not a .npy array: %w", err)
	}
	hdr := r.Header
	if hdr.Descr.Fortran {
		return Array{}, fmt.Errorf("Fortran-ordered arrays are not supported")
	}
	a := Array{Shape: append([]int{}, hdr.Descr.Shape...)}
	switch t := strings.TrimLeft(hdr.Descr.Type, "<>|="); {
	case t == "f4":
		var v []float32
		err, a.Data = r.Read(&v), v
	case t == "f8":
		var v []float64
		err, a.Data = r.Read(&v), v
	case t == "i8":
		var v []int64
		err, a.Data = r.Read(&v), v
	case t == "i4":
		var v []int32
		err, a.Data = r.Read(&v), v
	case t == "u1":
		var v []uint8
		err, a.Data = r.Read(&v), v
	case t == "b1":
		var v []bool
		err, a.Data = r.Read(&v), v
	case strings.HasPrefix(hdr.Descr.Type, "<U"):
		a.Data, err = readUnicode(rd, t, a.Len())
	default:
		return Array{}, fmt.Errorf("unsupported dtype %q", hdr.Descr.Type)
	}
	if err != nil && err != io.EOF {
		return Array{}, err
	}
	if err := a.check(); err != nil {
		return Array{}, err
	}
	return a, nil
}

// readUnicode decodes n little-endian UTF-32 strings of the numpy type "U<width>"
// (npyio's own string reader mis-decodes them).
func readUnicode(rd io.Reader, typ string, n int) ([]string, error) {
	width, err := strconv.Atoi(strings.TrimPrefix(typ, "U"))
	if err != nil || width < 0 {
		return nil, fmt.Errorf("bad string dtype %q", typ)
	}
	buf := make([]byte, 4*width)
	out := make([]string, n)
	for i := range out {
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, fmt.Errorf("string %d: %w", i, err)
		}
		var sb strings.Builder
		for k := 0; k < width; k++ {
			c := binary.LittleEndian.Uint32(buf[4*k:])
			if c == 0 {
				break
			}
			sb.WriteRune(rune(c))
		}
		out[i] = sb.String()
	}
	return out, nil
}

// Float64s returns the data of a numeric array converted to float64.
func (a Array) Float64s() ([]float64, error) {
	switch v := a.Data.(type) {
	case []float64:
		return v, nil
	case []float32:
		return convert(v), nil
	case []int64:
		return convert(v), nil
	case []int32:
		return convert(v), nil
	case []uint8:
		return convert(v), nil
	}
	return nil, fmt.Errorf("array %q: %T is not numeric", a.Name, a.Data)
}

func convert[T float32 | int64 | int32 | uint8](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
