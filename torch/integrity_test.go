package torch

import (
	"archive/zip"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/zipcrc/ziptest"
)

// loadValues loads a state dict and returns each tensor's values by name.
func loadValues(t *testing.T, path string) (map[string][]float64, error) {
	t.Helper()
	named, err := Load(path)
	if err != nil {
		return nil, err
	}
	defer CloseNamed(named)
	out := map[string][]float64{}
	for _, n := range named {
		v, err := n.Tensor.Float64s()
		if err != nil {
			t.Fatalf("%s: tensor %q: %v", path, n.Name, err)
		}
		out[n.Name] = v
	}
	return out, nil
}

func sameValues(a, b map[string][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestLoadCorruptPT overwrites bytes inside one record of .pt files: a
// tensor's data, data.pkl and a record Load does not otherwise use, in the
// file Python's torch.save wrote (stored records) and in the same file with
// every record deflated as stored blocks (the overwritten bytes still
// decompress), and inside a 4 KB tensor of a file Save wrote. Each load
// fails naming the file and the record; the intact files load, the
// deflated one to the same tensors.
func TestLoadCorruptPT(t *testing.T) {
	python, err := os.ReadFile(filepath.Join("..", "testdata", "torch", "py_state_dict.pt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	big := make([]float32, 4096)
	for i := range big {
		big[i] = r.Float32()
	}
	x := FromFloat32(big, 64, 64)
	defer x.Close()
	ownPath := filepath.Join(dir, "own.pt")
	if err := Save(ownPath, []Named{{Name: "decoder.weight", Tensor: x}}); err != nil {
		t.Fatal(err)
	}
	own, err := os.ReadFile(ownPath)
	if err != nil {
		t.Fatal(err)
	}
	ownData := recordNamed(t, own, "/data/0")
	for _, c := range []struct {
		what, record string
		intact       []byte
		n            int
	}{
		{"tensor", "py_state_dict/data/0", python, 4},
		{"data.pkl", "py_state_dict/data.pkl", python, 1},
		{"unused record", "py_state_dict/version", python, 1},
		{"deflated tensor", "py_state_dict/data/0", ziptest.Deflate(t, python), 4},
		{"deflated data.pkl", "py_state_dict/data.pkl", ziptest.Deflate(t, python), 40},
		{"Save's tensor", ownData, own, 4096},
	} {
		path := filepath.Join(dir, "intact.pt")
		must(t, os.WriteFile(path, c.intact, 0o644))
		if _, err := loadValues(t, path); err != nil {
			t.Fatalf("%s: intact: %v", c.what, err)
		}
		path = filepath.Join(dir, "corrupt.pt")
		bad := ziptest.Overwrite(t, c.intact, c.record, c.n)
		must(t, os.WriteFile(path, bad, 0o644))
		_, err := loadValues(t, path)
		want := fmt.Sprintf(`%s: entry %q: CRC-32 mismatch (stored 0x%08x, computed 0x%08x)`,
			path, c.record, crcOf(t, c.intact, c.record), crcOf(t, bad, c.record))
		if err == nil || err.Error() != want || !errors.Is(err, zip.ErrChecksum) {
			t.Errorf("%s: %v, want %s", c.what, err, want)
		}
	}
	// Deflated records (which torch.save does not write, but a zip tool
	// may) load to the same tensors.
	for name, data := range map[string][]byte{"py_state_dict.pt": python, "own.pt": own} {
		stored := filepath.Join(dir, name)
		deflated := filepath.Join(dir, "deflated-"+name)
		must(t, os.WriteFile(stored, data, 0o644))
		must(t, os.WriteFile(deflated, ziptest.Deflate(t, data), 0o644))
		want, err := loadValues(t, stored)
		got, err2 := loadValues(t, deflated)
		if err != nil || err2 != nil || !sameValues(got, want) {
			t.Errorf("%s deflated: %v, %v; other values", name, err, err2)
		}
	}
}

// recordNamed returns the name of archive's record ending in suffix.
func recordNamed(t *testing.T, archive []byte, suffix string) string {
	t.Helper()
	for name := range archiveRecordsByPath(t, archive) {
		if strings.HasSuffix(name, suffix) {
			return name
		}
	}
	t.Fatalf("no record ending in %q", suffix)
	return ""
}

// crcOf returns the CRC-32 of a record's uncompressed data, as it is now.
func crcOf(t *testing.T, archive []byte, name string) uint32 {
	t.Helper()
	return crc32.ChecksumIEEE(archiveRecordsByPath(t, archive)[name])
}

// archiveRecordsByPath returns the uncompressed data of every record of
// archive by its full name; io.ReadFull stops at the directory's length, so
// archive/zip checks no CRC-32.
func archiveRecordsByPath(t *testing.T, archive []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(strings.NewReader(string(archive)), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, f.UncompressedSize64)
		_, err = io.ReadFull(rc, data)
		rc.Close()
		if err != nil {
			t.Fatalf("record %q: %v", f.Name, err)
		}
		out[f.Name] = data
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSavePTFullDisk writes a .pt to /dev/full, whose writes fail as on a
// full disk: the error is the kernel's ENOSPC, where libtorch writing the
// file itself said only "cannot write PATH".
func TestSavePTFullDisk(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer full.Close()
	x := FromFloat32([]float32{1, 2, 3}, 3)
	defer x.Close()
	err = writePT(full, []Named{{Name: "w", Tensor: x}})
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("got %v, want ENOSPC", err)
	}
}
