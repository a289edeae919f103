package zipcrc

import (
	"archive/zip"
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkReadEntries reads every record of the committed molecule
// checkpoint (22 MB, stored) as the .pt reader did before (archive/zip,
// each record read to its last byte but not to EOF: hashed, never checked)
// and as it does now (verified), side by side.
func BenchmarkReadEntries(b *testing.B) {
	zr, err := zip.OpenReader(filepath.Join("..", "..", "pretrained", "molecule-t.pt"))
	if err != nil {
		b.Skip(err)
	}
	defer zr.Close()
	var size int64
	for _, f := range zr.File {
		size += int64(f.UncompressedSize64)
	}
	buf := make([]byte, 4096)
	read := func(b *testing.B, open func(f *zip.File) (io.Reader, func() error, error)) {
		b.SetBytes(size)
		for b.Loop() {
			for _, f := range zr.File {
				r, done, err := open(f)
				if err != nil {
					b.Fatal(err)
				}
				for left := int64(f.UncompressedSize64); left > 0; {
					n, err := r.Read(buf[:min(left, int64(len(buf)))])
					left -= int64(n)
					if err != nil && left > 0 {
						b.Fatal(err)
					}
				}
				if err := done(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("archive-zip", func(b *testing.B) {
		read(b, func(f *zip.File) (io.Reader, func() error, error) {
			rc, err := f.Open()
			if err != nil {
				return nil, nil, err
			}
			return rc, rc.Close, nil
		})
	})
	b.Run("verified", func(b *testing.B) {
		read(b, func(f *zip.File) (io.Reader, func() error, error) {
			r, err := Open(f)
			if err != nil {
				return nil, nil, err
			}
			return r, func() error { defer r.Close(); return r.Verify() }, nil
		})
	})
}
