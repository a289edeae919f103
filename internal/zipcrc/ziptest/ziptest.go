// Package ziptest damages and rewrites zip archives (.npz, .pt) for tests of
// the readers that must refuse a corrupt entry.
package ziptest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io"
	"testing"
)

// entry returns the named entry of archive.
func entry(tb testing.TB, archive []byte, name string) *zip.File {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			return f
		}
	}
	tb.Fatalf("no entry %q in the archive", name)
	return nil
}

// Overwrite returns a copy of archive with n bytes from the middle of
// entry's data (compressed, for a deflated entry) inverted; the directory,
// CRC-32 included, stays as it was.
func Overwrite(tb testing.TB, archive []byte, name string, n int) []byte {
	tb.Helper()
	f := entry(tb, archive, name)
	start, err := f.DataOffset()
	if err != nil {
		tb.Fatal(err)
	}
	size := int64(f.CompressedSize64)
	if int64(n) > size {
		tb.Fatalf("entry %q holds %d bytes, fewer than the %d to overwrite", name, size, n)
	}
	out := bytes.Clone(archive)
	at := start + (size-int64(n))/2
	for i := range int64(n) {
		out[at+i] ^= 0xff
	}
	return out
}

// Deflate returns archive rewritten with every entry deflated as stored
// deflate blocks (flate.NoCompression). Bytes overwritten inside such an
// entry of less than 64 KiB still decompress, so only the CRC-32 tells.
func Deflate(tb testing.TB, archive []byte) []byte {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.NoCompression)
	})
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			tb.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			tb.Fatal(err)
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}
