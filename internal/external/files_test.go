package external

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

func TestObjectFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "objects")
	a := numpy.Array{Shape: []int{2, 3}, Data: []uint8{1, 0, 1, 0, 1, 1}}
	p, err := ObjectFile(dir, "key-a", a)
	if err != nil {
		t.Fatal(err)
	}
	back, err := numpy.ReadNPY(p)
	if err != nil || !slices.Equal(back.Shape, a.Shape) || !slices.Equal(back.Data.([]uint8), a.Data.([]uint8)) {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if !filepath.IsAbs(p) || filepath.Dir(p) != dir {
		t.Errorf("path %s: want an absolute path in %s", p, dir)
	}
	st, _ := os.Stat(p)
	// The same key: the same path, the file kept.
	if p2, err := ObjectFile(dir, "key-a", numpy.Array{Shape: []int{1}, Data: []uint8{9}}); err != nil || p2 != p {
		t.Errorf("second call: %s, %v; want %s", p2, err, p)
	}
	if st2, _ := os.Stat(p); !st2.ModTime().Equal(st.ModTime()) || st2.Size() != st.Size() {
		t.Error("the existing file was rewritten")
	}
	if p3, err := ObjectFile(dir, "key-b", a); err != nil || p3 == p {
		t.Errorf("another key: %s, %v", p3, err)
	}
}
