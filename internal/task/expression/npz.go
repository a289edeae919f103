package expression

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sbinet/npyio/npy"
	"github.com/sbinet/npyio/npz"
)

// Keys of the data set's npz files.
const (
	// KeyData holds the N x MaxRules x NumProductions float32 one-hot matrices.
	KeyData = "data"
	// KeyScores holds the N float64 scores.
	KeyScores = "scores"
	// KeyExpr holds the N expressions as a numpy unicode array ('<U..').
	KeyExpr = "expr"
)

// OneHot returns the one-hot matrices of all expressions, N x MaxRules x NumProductions
// row-major.
func (d *Dataset) OneHot() ([]float32, error) {
	const size = MaxRules * NumProductions
	out := make([]float32, len(d.Exprs)*size)
	errs := make([]error, len(d.Exprs))
	parallelFor(len(d.Exprs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			rules, err := Parse(d.Exprs[i])
			if err == nil {
				_, err = OneHot(rules, out[i*size:(i+1)*size])
			}
			errs[i] = err
		}
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("data set entry %d: %w", i, err)
		}
	}
	return out, nil
}

// Select returns the data set restricted to the given indices, in their order.
func (d *Dataset) Select(idx []int) *Dataset {
	s := &Dataset{Target: d.Target, Source: d.Source, Exprs: make([]string, len(idx)), Scores: make([]float64, len(idx))}
	for i, j := range idx {
		s.Exprs[i], s.Scores[i] = d.Exprs[j], d.Scores[j]
	}
	return s
}

// WriteNPZ writes the data set to path atomically with the keys data (one-hot, float32
// N x 15 x 12), scores (float64) and expr (a numpy unicode array, which numpy.load reads
// without allow_pickle). npyio writes scores and expr (it handles '<U' arrays of ASCII
// strings); it cannot give a flat slice a 3-d shape, so writeFloat32NPY writes data.
func WriteNPZ(path string, d *Dataset) error {
	if len(d.Scores) != len(d.Exprs) {
		return fmt.Errorf("write %s: %d scores for %d expressions", path, len(d.Scores), len(d.Exprs))
	}
	for i, e := range d.Exprs {
		// npyio sizes '<U' arrays by bytes, which is right only for ASCII.
		if strings.IndexFunc(e, func(r rune) bool { return r > 0x7f }) >= 0 {
			return fmt.Errorf("write %s: expression %d %q is not ASCII", path, i, e)
		}
	}
	flat, err := d.OneHot()
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = writeAtomic(path, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		shape := []int{len(d.Exprs), MaxRules, NumProductions}
		if err := writeEntry(zw, KeyData, func(w io.Writer) error { return writeFloat32NPY(w, shape, flat) }); err != nil {
			return err
		}
		for _, kv := range []struct {
			key string
			val any
		}{{KeyScores, d.Scores}, {KeyExpr, d.Exprs}} {
			if err := writeEntry(zw, kv.key, func(w io.Writer) error { return npy.Write(w, kv.val) }); err != nil {
				return err
			}
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadNPZ reads a data set written by WriteNPZ, checking shapes and that each one-hot
// matrix encodes its expression; it returns the data set and its one-hot matrices.
func ReadNPZ(path string) (*Dataset, []float32, error) {
	r, err := npz.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	for _, k := range []string{KeyData, KeyScores, KeyExpr} {
		if r.Header(k+".npy") == nil {
			return nil, nil, fmt.Errorf("%s: missing key %q", path, k)
		}
	}
	hdr := r.Header(KeyData + ".npy")
	if s := hdr.Descr.Shape; len(s) != 3 || s[1] != MaxRules || s[2] != NumProductions || hdr.Descr.Fortran {
		return nil, nil, fmt.Errorf("%s: %s has shape %v, want (N, %d, %d) in C order", path, KeyData, s, MaxRules, NumProductions)
	}
	d := &Dataset{Source: "file " + filepath.Clean(path)}
	var onehot []float32
	if err := r.Read(KeyData+".npy", &onehot); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := r.Read(KeyScores+".npy", &d.Scores); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if d.Exprs, err = readUnicodeEntry(r, KeyExpr); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	n := hdr.Descr.Shape[0]
	if len(d.Scores) != n || len(d.Exprs) != n {
		return nil, nil, fmt.Errorf("%s: %d one-hot matrices, %d scores, %d expressions", path, n, len(d.Scores), len(d.Exprs))
	}
	if err := checkOneHot(d.Exprs, onehot); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, onehot, nil
}

// checkOneHot verifies that each one-hot matrix is the encoding of its expression.
func checkOneHot(exprs []string, onehot []float32) error {
	const size = MaxRules * NumProductions
	for i, e := range exprs {
		rules, err := RulesFromOneHot(onehot[i*size : (i+1)*size])
		if err != nil {
			return fmt.Errorf("%s entry %d: %w", KeyData, i, err)
		}
		want, err := Parse(e)
		if err != nil {
			return fmt.Errorf("%s entry %d: %w", KeyExpr, i, err)
		}
		if !slices.Equal(rules, want) {
			return fmt.Errorf("entry %d: one-hot matrix does not encode %q", i, e)
		}
	}
	return nil
}

// WriteDataNPZ writes the full data set to dir/expression_full.npz and its training
// subset (see Subset, seeded) to dir/expression_subset.npz, creating dir, and returns
// the two paths.
func WriteDataNPZ(dir string, d *Dataset, seed uint32) (full, subset string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	full = filepath.Join(dir, "expression_full.npz")
	subset = filepath.Join(dir, "expression_subset.npz")
	if err := WriteNPZ(full, d); err != nil {
		return "", "", err
	}
	if err := WriteNPZ(subset, d.Select(Subset(d.Scores, seed))); err != nil {
		return "", "", err
	}
	return full, subset, nil
}

// writeEntry writes one compressed .npy entry (name + ".npy") of an npz archive.
func writeEntry(zw *zip.Writer, name string, write func(io.Writer) error) error {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: zip.Deflate})
	if err != nil {
		return fmt.Errorf("npz entry %q: %w", name, err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := write(bw); err != nil {
		return fmt.Errorf("npz entry %q: %w", name, err)
	}
	return bw.Flush()
}

// writeFloat32NPY writes a C-order little-endian float32 array of the given shape in the
// .npy format version 1.0: magic, header length, a Python-dict header padded with spaces
// to a multiple of 64 bytes, then the raw data.
func writeFloat32NPY(w io.Writer, shape []int, data []float32) error {
	dims := make([]string, len(shape))
	n := 1
	for i, s := range shape {
		dims[i] = fmt.Sprint(s)
		n *= s
	}
	if n != len(data) {
		return fmt.Errorf("npy: %d values for shape %v", len(data), shape)
	}
	tuple := strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", tuple)
	const preamble = 10 // magic (6), version (2), header length (2)
	pad := 63 - (preamble+len(dict))%64
	header := dict + strings.Repeat(" ", pad) + "\n"
	buf := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	buf = append(buf, header...)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	var b [4]byte
	for _, v := range data {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		if _, err := w.Write(b[:]); err != nil {
			return err
		}
	}
	return nil
}

// readUnicodeEntry reads a 0-d or 1-d '<U' array entry of an npz archive. npyio parses the
// header, but its reader decodes UTF-32 data as UTF-8, so the data is decoded here.
func readUnicodeEntry(r *npz.Reader, name string) ([]string, error) {
	rc, err := r.Open(name + ".npy")
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	nr, err := npy.NewReader(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	descr := nr.Header.Descr
	width, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(descr.Type, "<"), "U"))
	if err != nil || !strings.HasPrefix(descr.Type, "<U") || len(descr.Shape) > 1 {
		return nil, fmt.Errorf("%s: dtype %s shape %v, want a 0-d or 1-d little-endian unicode array ('<U..')", name, descr.Type, descr.Shape)
	}
	n := 1
	if len(descr.Shape) == 1 {
		n = descr.Shape[0]
	}
	raw := make([]byte, n*width*4)
	if _, err := io.ReadFull(rc, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]string, n)
	runes := make([]rune, 0, width)
	for i := range out {
		runes = runes[:0]
		for j := 0; j < width; j++ {
			c := binary.LittleEndian.Uint32(raw[(i*width+j)*4:])
			if c == 0 {
				break // numpy pads with NULs
			}
			runes = append(runes, rune(c))
		}
		out[i] = string(runes)
	}
	return out, nil
}
