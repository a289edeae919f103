package torch

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/zipcrc"
	"github.com/tlbo-native/tlbo-native/internal/zipcrc/ziptest"
)

// ptSeeds returns the committed .pt fixtures, a file written by Save, and
// broken variants of them.
func ptSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, name := range []string{"torch/py_state_dict.pt", "torch/py_mixed.pt", "models/gvae_state.pt"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	x := FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	defer x.Close()
	own := filepath.Join(f.TempDir(), "own.pt")
	if err := Save(own, []Named{{Name: "w", Tensor: x}}); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(own)
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, data)
	first := seeds[0]
	return append(seeds, nil, []byte("PK\x03\x04"), first[:len(first)/2], []byte("\x80\x02}q\x00."))
}

// archiveRecords returns the records of a zip archive by base name.
func archiveRecords(tb testing.TB, data []byte) map[string][]byte {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			tb.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			tb.Fatal(err)
		}
		out[f.Name[strings.LastIndex(f.Name, "/")+1:]] = b
	}
	return out
}

// checkLoaded checks the property of every fuzz target over .pt data: an
// error, or tensors that are valid from an intact archive, and no handle
// left behind once they are closed. It returns the error.
func checkLoaded(t *testing.T, data []byte) error {
	live := LiveTensors()
	out, err := readPT(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if out != nil {
			t.Fatalf("error %v with %d tensors", err, len(out))
		}
	} else {
		ziptest.CheckIntact(t, data) // nothing corrupt is accepted
	}
	for _, n := range out {
		if err := n.Tensor.Err(); err != nil {
			t.Fatalf("tensor %q: %v", n.Name, err)
		}
		if _, err := n.Tensor.Float64s(); err != nil {
			t.Fatalf("tensor %q: %v", n.Name, err)
		}
	}
	CloseNamed(out)
	if got := LiveTensors(); got > live {
		t.Fatalf("%d tensor handles left behind", got-live)
	}
	return err
}

// FuzzReadPT feeds whole files to the .pt reader (the model checkpoint, at
// 700 kB, is left out: it would make each run slow).
func FuzzReadPT(f *testing.F) {
	for i, s := range ptSeeds(f) {
		if i != 2 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkLoaded(t, data) })
}

// FuzzReadPTPickle fuzzes the data.pkl record of an archive whose tensor
// records come from a real checkpoint (which selects; its high bit deflates
// every record): mutating a whole zip file rarely gets past its checksums
// to the unpickler. The archive is intact, so no error may blame an entry.
func FuzzReadPTPickle(f *testing.F) {
	seeds := ptSeeds(f)[:3]
	records := make([]map[string][]byte, len(seeds))
	for i, s := range seeds {
		records[i] = archiveRecords(f, s)
		f.Add(records[i]["data.pkl"], uint8(i))
	}
	f.Add(records[0]["data.pkl"], uint8(0x80))
	f.Add([]byte("\x80\x02}q\x00."), uint8(0))
	f.Fuzz(func(t *testing.T, pkl []byte, which uint8) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		method := zip.Store
		if which&0x80 != 0 {
			method = zip.Deflate
		}
		add := func(name string, b []byte) {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: "archive/" + name, Method: method})
			if err != nil {
				t.Fatal(err)
			}
			w.Write(b)
		}
		add("data.pkl", pkl)
		for name, b := range records[int(which&0x7f)%len(records)] {
			if name != "data.pkl" {
				add("data/"+name, b)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := checkLoaded(t, buf.Bytes()); errors.As(err, new(*zipcrc.Error)) {
			t.Fatalf("an intact archive refused: %v", err)
		}
	})
}
