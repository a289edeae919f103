package numpy

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/zipcrc"
)

// ReadNPY reads a .npy file.
func ReadNPY(path string) (Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return Array{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Array{}, err
	}
	a, err := readArray(bufio.NewReader(f), st.Size())
	if err != nil {
		return Array{}, fmt.Errorf("%s: %w", path, err)
	}
	a.Name = strings.TrimSuffix(filepath.Base(path), ".npy")
	return a, nil
}

// ReadNPZ reads every array of a .npz file, in the order they are stored.
func ReadNPZ(path string) ([]Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	out, err := readNPZ(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// readNPZ reads the arrays of a .npz archive of size bytes.
func readNPZ(r io.ReaderAt, size int64) ([]Array, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("not a .npz file: %w", err)
	}
	out := make([]Array, 0, len(zr.File))
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, ".npy")
		a, err := readEntry(f, size)
		var corrupt *zipcrc.Error
		if errors.As(err, &corrupt) {
			return nil, corrupt // it names the entry, and explains any error parsing it
		}
		if err != nil {
			return nil, fmt.Errorf("array %q: %w", name, err)
		}
		a.Name = name
		out = append(out, a)
	}
	return out, nil
}

// maxDeflateRatio bounds how much a deflated entry can expand (deflate's
// limit is about 1032:1), so that a forged size in the zip directory cannot
// make the reader allocate more than the archive's data could hold.
const maxDeflateRatio = 1100

// readEntry reads one .npy entry of a zip archive of archiveSize bytes and
// checks its CRC-32: a *zipcrc.Error if it does not match, whether or not
// the array could be parsed.
func readEntry(f *zip.File, archiveSize int64) (Array, error) {
	stored := min(int64(min(f.CompressedSize64, math.MaxInt64)), archiveSize)
	avail := min(int64(min(f.UncompressedSize64, math.MaxInt64)), stored)
	if f.Method != zip.Store {
		avail = min(int64(min(f.UncompressedSize64, math.MaxInt64)), stored*maxDeflateRatio+4096)
	}
	rc, err := zipcrc.Open(f)
	if err != nil {
		return Array{}, err
	}
	defer rc.Close()
	a, err := readArray(bufio.NewReader(rc), avail)
	if verr := rc.Verify(); verr != nil {
		return Array{}, verr
	}
	return a, err
}

// header is the parsed header of a .npy stream.
type header struct {
	descr   string // e.g. "<f4"
	fortran bool
	shape   []int
}

// maxHeaderLen bounds the header; numpy writes a few hundred bytes.
const maxHeaderLen = 1 << 20

var npyMagic = []byte("\x93NUMPY")

// readHeader reads the magic, version and header dict of a .npy stream and
// returns the header and its size in bytes with the preamble.
func readHeader(r io.Reader) (header, int64, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return header{}, 0, fmt.Errorf("not a .npy array: %w", err)
	}
	if !bytes.Equal(pre[:6], npyMagic) {
		return header{}, 0, errors.New(`not a .npy array: no "\x93NUMPY" magic`)
	}
	var lenBytes [4]byte
	var n int
	switch major := pre[6]; major {
	case 1:
		if _, err := io.ReadFull(r, lenBytes[:2]); err != nil {
			return header{}, 0, fmt.Errorf("header length: %w", err)
		}
		n = int(binary.LittleEndian.Uint16(lenBytes[:2]))
	case 2, 3:
		if _, err := io.ReadFull(r, lenBytes[:]); err != nil {
			return header{}, 0, fmt.Errorf("header length: %w", err)
		}
		n = int(binary.LittleEndian.Uint32(lenBytes[:]))
	default:
		return header{}, 0, fmt.Errorf("unsupported .npy format version %d.%d", major, pre[7])
	}
	if n > maxHeaderLen {
		return header{}, 0, fmt.Errorf("header of %d bytes, at most %d", n, maxHeaderLen)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return header{}, 0, fmt.Errorf("header: %w", err)
	}
	h, err := parseHeader(string(buf))
	if err != nil {
		return header{}, 0, fmt.Errorf("header %q: %w", truncate(string(buf), 120), err)
	}
	size := 8 + 2 + n
	if pre[6] > 1 {
		size += 2
	}
	return h, int64(size), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// parseHeader parses the Python dict literal of a .npy header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
func parseHeader(s string) (header, error) {
	p := &dictParser{s: strings.TrimRight(s, " \n\x00")}
	var h header
	seen := map[string]bool{}
	if !p.eat('{') {
		return h, errors.New("not a dict")
	}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return h, fmt.Errorf("key: %w", err)
		}
		if seen[key] {
			return h, fmt.Errorf("key %q twice", key)
		}
		seen[key] = true
		if !p.eat(':') {
			return h, fmt.Errorf("no ':' after %q", key)
		}
		switch key {
		case "descr":
			h.descr, err = p.str()
		case "fortran_order":
			h.fortran, err = p.boolean()
		case "shape":
			h.shape, err = p.tuple()
		default:
			err = errors.New("unknown key")
		}
		if err != nil {
			return h, fmt.Errorf("%q: %w", key, err)
		}
		if !p.eat(',') && !p.peek('}') {
			return h, fmt.Errorf("no ',' or '}' after %q", key)
		}
	}
	if p.rest() != "" {
		return h, fmt.Errorf("%q after the dict", truncate(p.rest(), 20))
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("no %q", k)
		}
	}
	return h, nil
}

// dictParser reads the small Python literal subset of .npy headers.
type dictParser struct {
	s   string
	pos int
}

func (p *dictParser) skip() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\n') {
		p.pos++
	}
}

func (p *dictParser) rest() string { p.skip(); return p.s[p.pos:] }

func (p *dictParser) peek(c byte) bool { p.skip(); return p.pos < len(p.s) && p.s[p.pos] == c }

func (p *dictParser) eat(c byte) bool {
	if p.peek(c) {
		p.pos++
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *dictParser) str() (string, error) {
	p.skip()
	if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		return "", errors.New("want a quoted string")
	}
	q := p.s[p.pos]
	end := strings.IndexByte(p.s[p.pos+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.pos+1 : p.pos+1+end]
	p.pos += end + 2
	if strings.ContainsRune(v, '\\') {
		return "", errors.New("escapes are not supported")
	}
	return v, nil
}

func (p *dictParser) boolean() (bool, error) {
	switch rest := p.rest(); {
	case strings.HasPrefix(rest, "True"):
		p.pos += 4
		return true, nil
	case strings.HasPrefix(rest, "False"):
		p.pos += 5
		return false, nil
	}
	return false, errors.New("want True or False")
}

// tuple reads a tuple of non-negative ints, e.g. (), (3,) or (2, 3).
func (p *dictParser) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, errors.New("want a tuple")
	}
	shape := []int{}
	for !p.eat(')') {
		p.skip()
		start := p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		n, err := strconv.Atoi(p.s[start:p.pos])
		if err != nil {
			return nil, errors.New("want non-negative integers")
		}
		shape = append(shape, n)
		if !p.eat(',') && !p.peek(')') {
			return nil, errors.New("want ',' or ')' after a size")
		}
		if len(shape) > 64 {
			return nil, errors.New("more than 64 dimensions")
		}
	}
	return shape, nil
}

// readArray reads one .npy stream of at most avail bytes into a flat slice.
func readArray(r io.Reader, avail int64) (Array, error) {
	h, hlen, err := readHeader(r)
	if err != nil {
		return Array{}, err
	}
	if h.fortran {
		return Array{}, fmt.Errorf("Fortran-ordered arrays are not supported")
	}
	kind, order, width, err := parseDescr(h.descr)
	if err != nil {
		return Array{}, err
	}
	a := Array{Shape: h.shape}
	n, ok := product(h.shape, width, avail-hlen)
	if !ok {
		return Array{}, fmt.Errorf("shape %v of %q needs more data than the %d bytes after the header",
			h.shape, h.descr, avail-hlen)
	}
	raw := make([]byte, n*width)
	if _, err := io.ReadFull(r, raw); err != nil {
		return Array{}, fmt.Errorf("data of shape %v: %w", h.shape, err)
	}
	a.Data, err = decode(raw, kind, order, width, n)
	return a, err
}

// product returns the number of elements of shape, and whether they fit in
// limit bytes of width each.
func product(shape []int, width int, limit int64) (int, bool) {
	if slices.Contains(shape, 0) {
		return 0, true
	}
	most := limit / int64(max(width, 1))
	if width == 0 { // elements without bytes (strings of dtype U0): bound their count anyway
		most = max(limit, 1<<16)
	}
	n := int64(1)
	for _, s := range shape {
		if int64(s) > most/n {
			return 0, false
		}
		n *= int64(s)
	}
	return int(n), n <= most
}

// parseDescr splits a numpy type string such as "<f4" or "<U12" into its
// kind ("f4", "U"), byte order and element width in bytes.
func parseDescr(descr string) (kind string, order binary.ByteOrder, width int, err error) {
	order = binary.LittleEndian // '<', '|' and '=' on the little-endian hosts we build for
	t := descr
	if t != "" && strings.ContainsRune("<>|=", rune(t[0])) {
		if t[0] == '>' {
			order = binary.BigEndian
		}
		t = t[1:]
	}
	widths := map[string]int{"f4": 4, "f8": 8, "i8": 8, "i4": 4, "u1": 1, "b1": 1}
	if w, ok := widths[t]; ok {
		return t, order, w, nil
	}
	if strings.HasPrefix(t, "U") {
		chars, err := strconv.Atoi(t[1:])
		if err != nil || chars < 0 || chars > 1<<20 {
			return "", nil, 0, fmt.Errorf("bad string dtype %q", descr)
		}
		return "U", order, 4 * chars, nil
	}
	return "", nil, 0, fmt.Errorf("unsupported dtype %q", descr)
}

// decode converts n elements of raw data to a Go slice of the kind.
func decode(raw []byte, kind string, order binary.ByteOrder, width, n int) (any, error) {
	var v any
	switch kind {
	case "f4":
		v = make([]float32, n)
	case "f8":
		v = make([]float64, n)
	case "i8":
		v = make([]int64, n)
	case "i4":
		v = make([]int32, n)
	case "u1":
		v = make([]uint8, n)
	case "b1":
		v = make([]bool, n)
	case "U":
		return decodeUnicode(raw, order, width, n), nil
	}
	if _, err := binary.Decode(raw, order, v); err != nil {
		return nil, err
	}
	return v, nil
}

// decodeUnicode decodes n UTF-32 strings of width bytes each, NUL-padded.
func decodeUnicode(raw []byte, order binary.ByteOrder, width, n int) []string {
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		for k := 0; k+4 <= width; k += 4 {
			c := order.Uint32(raw[i*width+k:])
			if c == 0 {
				break
			}
			sb.WriteRune(rune(c))
		}
		out[i] = sb.String()
	}
	return out
}
