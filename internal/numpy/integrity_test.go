package numpy

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/zipcrc"
	"github.com/tlbo-native/tlbo-native/internal/zipcrc/ziptest"
)

// TestReadNPZCorrupt overwrites bytes inside one array of .npz files that
// numpy wrote: stored (numpy.savez), deflated (numpy.savez_compressed) and
// deflated as stored blocks, whose overwritten bytes still decompress.
// Each load fails naming the file and the entry; the intact files load.
func TestReadNPZCorrupt(t *testing.T) {
	root := filepath.Join("..", "..", "testdata")
	stored, err := os.ReadFile(filepath.Join(root, "gp", "ei_ref.npz"))
	if err != nil {
		t.Fatal(err)
	}
	compressed, err := os.ReadFile(filepath.Join(root, "expression", "fixtures.npz"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		what, entry string
		intact      []byte
		checksum    bool // the CRC-32 (not the decompressor) must be what notices
	}{
		{"stored", "var.npy", stored, true},
		{"deflated", "parse_onehot.npy", compressed, false},
		{"deflated as stored blocks", "var.npy", ziptest.Deflate(t, stored), true},
	} {
		path := filepath.Join(dir, "intact.npz")
		must(t, os.WriteFile(path, c.intact, 0o644))
		if arrays, err := ReadNPZ(path); err != nil || len(arrays) == 0 {
			t.Fatalf("%s: intact: %d arrays, %v", c.what, len(arrays), err)
		}
		for _, n := range []int{1, 40} {
			path := filepath.Join(dir, "corrupt.npz")
			must(t, os.WriteFile(path, ziptest.Overwrite(t, c.intact, c.entry, n), 0o644))
			got, err := ReadNPZ(path)
			prefix := path + `: entry "` + c.entry + `": `
			if err == nil || !strings.HasPrefix(err.Error(), prefix) || got != nil {
				t.Errorf("%s, %d bytes overwritten: %d arrays, %v; want an error beginning %s", c.what, n, len(got), err, prefix)
			}
			if c.checksum && !errors.Is(err, zip.ErrChecksum) {
				t.Errorf("%s, %d bytes overwritten: %v, want a CRC-32 mismatch", c.what, n, err)
			}
		}
	}
}

// TestReadEntryCorruptHeader: when the overwritten bytes are in an array's
// header, the CRC-32 is still the error, not the header it garbled.
func TestReadEntryCorruptHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npz")
	must(t, WriteNPZ(path, []Array{{Name: "x", Shape: []int{3}, Data: []float64{1, 2, 3}}}))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = ziptest.Deflate(t, data)
	zr, err := zip.NewReader(strings.NewReader(string(data)), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	off, _ := zr.File[0].DataOffset()
	data[off+5+20] ^= 0xff // 5: the stored block's header; 20: inside the header dict
	_, err = readNPZ(strings.NewReader(string(data)), int64(len(data)))
	var e *zipcrc.Error
	if !errors.As(err, &e) || !errors.Is(err, zip.ErrChecksum) || e.Entry != "x.npy" {
		t.Errorf("got %v, want a CRC-32 mismatch of x.npy", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
