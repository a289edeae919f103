package zipcrc

import (
	"archive/zip"
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/zipcrc/ziptest"
)

// FuzzReadAll reads every entry of any bytes that archive/zip opens: an
// entry is either refused with an *Error naming it, or read whole with the
// length and CRC-32 of its directory record, the data archive/zip reads
// where it reads it too; never a panic.
func FuzzReadAll(f *testing.F) {
	data := payload(3000)
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, name := range []string{"a.npy", "data/0"} {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
			if err != nil {
				f.Fatal(err)
			}
			w.Write(data[:len(name)*300])
		}
		if err := zw.Close(); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
		f.Add(ziptest.Overwrite(f, buf.Bytes(), "data/0", 3))
	}
	for _, name := range []string{"torch/py_state_dict.pt", "gp/ei_ref.npz"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(ziptest.Deflate(f, b))
	}
	f.Fuzz(func(t *testing.T, archive []byte) {
		zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
		if err != nil {
			return
		}
		for _, file := range zr.File {
			got, err := ReadAll(file, 1<<20)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Entry != file.Name {
					t.Fatalf("entry %q: %v does not name it", file.Name, err)
				}
				continue
			}
			if uint64(len(got)) != file.UncompressedSize64 || crc32.ChecksumIEEE(got) != file.CRC32 {
				t.Fatalf("entry %q accepted: %d bytes of CRC-32 0x%08x, the directory says %d and 0x%08x",
					file.Name, len(got), crc32.ChecksumIEEE(got), file.UncompressedSize64, file.CRC32)
			}
			rc, err := file.Open()
			if err != nil {
				continue // archive/zip checks the local header more strictly
			}
			theirs, err := io.ReadAll(rc)
			rc.Close()
			if err == nil && !bytes.Equal(theirs, got) {
				t.Fatalf("entry %q: other data than archive/zip reads", file.Name)
			}
		}
	})
}
