package torch

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAddTiny times one op call on two 3-element tensors, closed at once:
// the fixed per-op cost of the bindings (argument marshalling, dispatcher
// call, result wrapping), which the README quotes.
func BenchmarkAddTiny(b *testing.B) {
	x := FromFloat32([]float32{1, 2, 3}, 3)
	y := FromFloat32([]float32{4, 5, 6}, 3)
	defer x.Close()
	defer y.Close()
	b.ReportAllocs()
	for b.Loop() {
		x.Add(y).Close()
	}
}

// BenchmarkCatTemporaries times Cat over 16 tiny tensors: an op whose
// argument list holds many handles.
func BenchmarkCatTemporaries(b *testing.B) {
	ts := make([]*Tensor, 16)
	for i := range ts {
		ts[i] = FromFloat32([]float32{float32(i)}, 1)
	}
	defer closeTensors(ts)
	b.ReportAllocs()
	for b.Loop() {
		Cat(ts, 0).Close()
	}
}

// BenchmarkLoadPretrained times Load of the committed molecule checkpoint
// (22 MB of stored float32 records): the cost of reading a large .pt.
func BenchmarkLoadPretrained(b *testing.B) {
	path := filepath.Join("..", "pretrained", "molecule-t.pt")
	st, err := os.Stat(path)
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		ts, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		CloseNamed(ts)
	}
}
