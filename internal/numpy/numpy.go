// Package numpy reads and writes NumPy .npy and .npz files of n-dimensional
// arrays: arrays of any rank as flat row-major Go slices, arrays in file order,
// and atomic writes (temporary file, then rename). Writing goes through
// github.com/sbinet/npyio; reading has its own header parser, because npyio's
// panics on malformed headers and trusts the sizes a header claims, while
// .npy and .npz files are untrusted input here.
package numpy

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sbinet/npyio/npy"
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

// WriteNPZ writes arrays, in order, to a .npz file at path (a zip archive of
// .npy entries, as numpy.savez_compressed writes), atomically.
func WriteNPZ(path string, arrays []Array) error {
	return atomicWrite(path, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for _, a := range arrays {
			ew, err := zw.Create(a.Name + ".npy")
			if err != nil {
				return fmt.Errorf("array %q: %w", a.Name, err)
			}
			if err := writeArray(ew, a); err != nil {
				return err
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
	return atomicWrite(path, func(w io.Writer) error { return writeArray(w, a) })
}

// writeArray writes a as a .npy stream.
func writeArray(w io.Writer, a Array) error {
	if err := a.check(); err != nil {
		return err
	}
	var err error
	switch strs, isStrings := a.Data.([]string); {
	case isStrings:
		err = writeStrings(w, a.Shape, strs) // npyio sizes strings in bytes, not characters
	case a.Len() == 0 && len(a.Shape) > 1:
		err = writeEmpty(w, a) // npyio derives the shape from a Go array type, which loses it when empty
	default:
		err = npy.Write(w, shaped(reflect.ValueOf(a.Data), a.Shape).Interface())
	}
	if err != nil {
		return fmt.Errorf("array %q: %w", a.Name, err)
	}
	return nil
}

// emptyDescr is the numpy type of each element type, for empty arrays.
var emptyDescr = map[reflect.Type]string{
	reflect.TypeFor[float32](): "<f4", reflect.TypeFor[float64](): "<f8", reflect.TypeFor[int64](): "<i8",
	reflect.TypeFor[int32](): "<i4", reflect.TypeFor[uint8](): "|u1", reflect.TypeFor[bool](): "|b1",
}

// writeEmpty writes an array without elements: its header only.
func writeEmpty(w io.Writer, a Array) error {
	descr, ok := emptyDescr[reflect.TypeOf(a.Data).Elem()]
	if !ok {
		return fmt.Errorf("unsupported element type %T", a.Data)
	}
	return writeHeader(w, descr, a.Shape)
}

// writeStrings writes strings as numpy's "<U<n>": n UTF-32LE code points
// each, NUL-padded, n the longest string's length in characters.
func writeStrings(w io.Writer, shape []int, strs []string) error {
	width := 1
	for _, s := range strs {
		width = max(width, utf8.RuneCountInString(s))
	}
	if err := writeHeader(w, fmt.Sprintf("<U%d", width), shape); err != nil {
		return err
	}
	buf := make([]byte, 4*width)
	bw := bufio.NewWriter(w)
	for _, s := range strs {
		clear(buf)
		k := 0
		for _, r := range s {
			binary.LittleEndian.PutUint32(buf[4*k:], uint32(r))
			k++
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeHeader writes the preamble and header of a C-ordered .npy array,
// padded as numpy pads it (to a multiple of 64 bytes with the preamble).
func writeHeader(w io.Writer, descr string, shape []int) error {
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = strconv.Itoa(s)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, tuple)
	hdr += strings.Repeat(" ", 63-(10+len(hdr))%64) + "\n"
	pre := []byte{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, byte(len(hdr)), byte(len(hdr) >> 8)}
	_, err := w.Write(append(pre, hdr...))
	return err
}

// atomicWrite writes through fill into a temporary file beside path and renames
// it into place, so that readers never see a half-written file. An error
// names path, not the temporary file, and keeps its cause: a full disk reads
// "write PATH: no space left on device" and errors.Is(err, syscall.ENOSPC).
func atomicWrite(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, withoutTemp(err, tmp))
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
		return fmt.Errorf("write %s: %w", path, withoutTemp(err, tmp))
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// withoutTemp returns the cause of an error on the temporary file tmp (an
// *fs.PathError on it, however wrapped), which means nothing to the user
// once removed; other errors are returned as they are.
func withoutTemp(err error, tmp string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == tmp {
		return pe.Err
	}
	return err
}

// AtomicWriteFile writes data to path through a temporary file and a rename.
func AtomicWriteFile(path string, fill func(io.Writer) error) error { return atomicWrite(path, fill) }

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
