package zipcrc

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/zipcrc/ziptest"
)

// payload returns n bytes of a fixed pseudo-random stream.
func payload(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// archive returns a zip holding data under name, stored or deflated.
func archive(t *testing.T, name string, method uint16, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawArchive returns a zip whose one entry has the given raw (compressed)
// data and directory record, however inconsistent.
func rawArchive(t *testing.T, fh zip.FileHeader, raw []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&fh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func only(t *testing.T, data []byte) *zip.File {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return zr.File[0]
}

// readPart reads the first k bytes of the entry, as an array reader that
// stops at its last element does, then verifies.
func readPart(t *testing.T, f *zip.File, k int) ([]byte, error) {
	t.Helper()
	r, err := Open(f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	part := make([]byte, k)
	if _, err := io.ReadFull(r, part); err != nil {
		return nil, err
	}
	return part, r.Verify()
}

// TestIntact: stored and deflated entries read back whole or in part, and
// verify, whether read to the end or not.
func TestIntact(t *testing.T) {
	data := payload(20000)
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		f := only(t, archive(t, "a", method, data))
		got, err := ReadAll(f, 1<<20)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("method %d: ReadAll: %d bytes, %v", method, len(got), err)
		}
		if part, err := readPart(t, f, 100); err != nil || !bytes.Equal(part, data[:100]) {
			t.Errorf("method %d: part then Verify: %v", method, err)
		}
		if _, err := readPart(t, f, len(data)); err != nil {
			t.Errorf("method %d: all then Verify: %v", method, err)
		}
	}
	empty := only(t, archive(t, "e", zip.Deflate, nil))
	if got, err := ReadAll(empty, 0); err != nil || len(got) != 0 {
		t.Errorf("empty entry: %q, %v", got, err)
	}
}

// TestOverwritten overwrites bytes inside a stored entry and inside a
// deflated one whose data still decompresses: archive/zip's reader, read
// as far as the caller needs, accepts both; here the CRC-32 refuses them,
// with both sums.
func TestOverwritten(t *testing.T) {
	data := payload(20000)
	stored := archive(t, "data/3", zip.Store, data)
	for what, bad := range map[string][]byte{
		"stored":   ziptest.Overwrite(t, stored, "data/3", 40),
		"deflated": ziptest.Overwrite(t, ziptest.Deflate(t, stored), "data/3", 40),
	} {
		f := only(t, bad)
		// What the readers did before: read what they need, not to EOF.
		rc, _ := f.Open()
		if _, err := io.ReadFull(rc, make([]byte, len(data))); err != nil {
			t.Fatalf("%s: archive/zip: %v", what, err)
		}
		rc.Close()
		whole, err := io.ReadAll(mustOpenRaw(t, f)) // the corrupt data, as stored
		if err != nil {
			t.Fatal(err)
		}
		if what == "deflated" {
			whole, err = io.ReadAll(flate.NewReader(bytes.NewReader(whole)))
			if err != nil {
				t.Fatalf("deflated: the overwritten data no longer decompresses: %v", err)
			}
		}
		want := fmt.Sprintf(`entry "data/3": CRC-32 mismatch (stored 0x%08x, computed 0x%08x)`,
			crc32.ChecksumIEEE(data), crc32.ChecksumIEEE(whole))
		for _, k := range []int{0, 100, len(data)} {
			_, err := readPart(t, f, k)
			if err == nil || err.Error() != want || !errors.Is(err, zip.ErrChecksum) {
				t.Errorf("%s, %d bytes read then Verify: %v, want %s", what, k, err, want)
			}
		}
		if _, err := ReadAll(f, 1<<20); err == nil || err.Error() != want {
			t.Errorf("%s: ReadAll: %v, want %s", what, err, want)
		}
	}
}

func mustOpenRaw(t *testing.T, f *zip.File) io.Reader {
	t.Helper()
	r, err := f.OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCorruptDeflate overwrites bytes inside a compressed deflate stream:
// whether the decompressor or the CRC-32 notices, the error names the entry.
func TestCorruptDeflate(t *testing.T) {
	data := []byte(strings.Repeat("sin( 1 / 1 ) + x * exp( 2 ) ", 2000))
	good := archive(t, "designs.npy", zip.Deflate, data)
	for _, n := range []int{1, 4, 40} {
		f := only(t, ziptest.Overwrite(t, good, "designs.npy", n))
		_, err := ReadAll(f, 1<<20)
		var e *Error
		if !errors.As(err, &e) || e.Entry != "designs.npy" || !strings.HasPrefix(err.Error(), `entry "designs.npy": `) {
			t.Errorf("%d bytes overwritten: %v", n, err)
		}
	}
}

// TestDirectory: a directory whose CRC-32 is zero is checked all the same
// (archive/zip skips it), lengths that disagree with the data and unknown
// methods are refused, and ReadAll's limit holds.
func TestDirectory(t *testing.T) {
	data := payload(1000)
	sum := crc32.ChecksumIEEE(data)
	var deflated bytes.Buffer
	fw, _ := flate.NewWriter(&deflated, flate.BestSpeed)
	fw.Write(data)
	fw.Close()
	for _, c := range []struct {
		what string
		fh   zip.FileHeader
		raw  []byte
		is   error
		msg  string
	}{
		{"zero CRC-32", zip.FileHeader{Name: "z", Method: zip.Store, CompressedSize64: 1000, UncompressedSize64: 1000},
			data, zip.ErrChecksum, fmt.Sprintf("CRC-32 mismatch (stored 0x00000000, computed 0x%08x)", sum)},
		{"stored sizes differ", zip.FileHeader{Name: "z", Method: zip.Store, CRC32: sum, CompressedSize64: 1000, UncompressedSize64: 999},
			data, zip.ErrFormat, "stored with 1000 bytes of data for 999 bytes"},
		{"deflated, longer than said", zip.FileHeader{Name: "z", Method: zip.Deflate, CRC32: sum,
			CompressedSize64: uint64(deflated.Len()), UncompressedSize64: 999},
			deflated.Bytes(), zip.ErrFormat, "its data goes on after the 999 bytes the directory says"},
		{"deflated, shorter than said", zip.FileHeader{Name: "z", Method: zip.Deflate, CRC32: sum,
			CompressedSize64: uint64(deflated.Len()), UncompressedSize64: 1001},
			deflated.Bytes(), zip.ErrFormat, "its data ends after 1000 bytes, the directory says 1001"},
		{"method", zip.FileHeader{Name: "z", Method: 12, CRC32: sum, CompressedSize64: 1000, UncompressedSize64: 1000},
			data, zip.ErrAlgorithm, "compression method 12 is not supported"},
	} {
		f := only(t, rawArchive(t, c.fh, c.raw))
		_, err := ReadAll(f, 1<<20)
		if err == nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), `entry "z": `+c.msg) {
			t.Errorf("%s: %v, want %v: %s", c.what, err, c.is, c.msg)
		}
	}
	f := only(t, archive(t, "big", zip.Store, data))
	if _, err := ReadAll(f, 999); err == nil || !strings.Contains(err.Error(), `entry "big": 1000 bytes, at most 999`) {
		t.Errorf("limit: %v", err)
	}
}
