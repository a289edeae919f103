// Package ziptest damages and rewrites zip archives (.npz, .pt) for tests of
// the readers that must refuse a corrupt entry.
package ziptest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"hash/crc32"
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
	size := int(entry(tb, archive, name).CompressedSize64)
	return OverwriteAt(tb, archive, name, (size-n)/2, n)
}

// OverwriteAt returns a copy of archive with n bytes of entry's data
// (compressed, for a deflated entry), from offset off, inverted.
func OverwriteAt(tb testing.TB, archive []byte, name string, off, n int) []byte {
	tb.Helper()
	f := entry(tb, archive, name)
	start, err := f.DataOffset()
	if err != nil {
		tb.Fatal(err)
	}
	if off < 0 || n < 0 || uint64(off+n) > f.CompressedSize64 {
		tb.Fatalf("entry %q holds %d bytes: cannot overwrite %d from %d", name, f.CompressedSize64, n, off)
	}
	out := bytes.Clone(archive)
	for i := range n {
		out[int(start)+off+i] ^= 0xff
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

// CheckIntact fails the test unless archive opens and each of its entries
// has the length and CRC-32 of its directory record: the property of every
// archive a checking reader accepts.
func CheckIntact(tb testing.TB, archive []byte) {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		tb.Fatalf("archive/zip refuses the archive: %v", err)
	}
	for _, f := range zr.File {
		raw, err := f.OpenRaw()
		if err != nil {
			tb.Fatalf("entry %q: %v", f.Name, err)
		}
		var r io.Reader = raw
		if f.Method == zip.Deflate {
			r = flate.NewReader(raw)
		}
		b, err := io.ReadAll(r)
		if err != nil || uint64(len(b)) != f.UncompressedSize64 || crc32.ChecksumIEEE(b) != f.CRC32 {
			tb.Fatalf("entry %q: %d bytes of CRC-32 0x%08x (%v), the directory says %d and 0x%08x",
				f.Name, len(b), crc32.ChecksumIEEE(b), err, f.UncompressedSize64, f.CRC32)
		}
	}
}
