package torch

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"
)

func TestCheckView(t *testing.T) {
	for _, c := range []struct {
		size, stride []int
		offset, n    int
		ok           bool
	}{
		{[]int{2, 3}, []int{3, 1}, 0, 6, true},
		{[]int{3, 2}, []int{1, 3}, 0, 6, true}, // transposed
		{[]int{}, []int{}, 5, 6, true},         // scalar
		{[]int{0, 4}, []int{4, 1}, 6, 6, true}, // empty, offset at the end
		{[]int{4, 4}, []int{0, 0}, 0, 1, true}, // expanded
		{[]int{2, 3}, []int{3, 1}, 1, 6, false},
		{[]int{7}, []int{1}, 0, 6, false},
		{[]int{2}, []int{1, 1}, 0, 6, false},
		{[]int{-1}, []int{1}, 0, 6, false},
		{[]int{1}, []int{-1}, 0, 6, false},
		{[]int{1}, []int{1}, -1, 6, false},
		{[]int{1}, []int{1}, 6, 6, false},
		{[]int{1 << 40, 1 << 40}, []int{0, 0}, 0, 1, false}, // would allocate 2^80 elements
		{[]int{2, 1 << 62}, []int{1 << 62, 1}, 0, 6, false}, // overflows int64 if multiplied out
		{make([]int, 17), make([]int, 17), 0, 6, false},
	} {
		err := checkView(c.size, c.stride, c.offset, c.n)
		if (err == nil) != c.ok {
			t.Errorf("checkView(%v, %v, %d, %d) = %v, want ok %v", c.size, c.stride, c.offset, c.n, err, c.ok)
		}
	}
}

func TestReadPTRejectsLegacyAndForgedFiles(t *testing.T) {
	var tarball bytes.Buffer // the pre-1.6 format is a tar archive: gopickle panicked on it
	tw := tar.NewWriter(&tarball)
	tw.WriteHeader(&tar.Header{Name: "storages", Mode: 0o644, Size: 1})
	tw.Write([]byte{0})
	tw.Close()
	if _, err := readPT(bytes.NewReader(tarball.Bytes()), int64(tarball.Len())); err == nil ||
		!strings.Contains(err.Error(), "zip format") {
		t.Errorf("tar file: %v", err)
	}
	for name, pkl := range map[string]string{
		"huge string":   "\x80\x02X\xff\xff\xff\x7fab.",
		"negative long": "\x80\x02\x8b\xff\xff\xff\xff.",
		"no stop":       "\x80\x02}q\x00",
		"bad opcode":    "\x80\x02\xff.",
		"frame":         "\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\x7f.",
	} {
		if err := scanPickle([]byte(pkl)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := scanPickle([]byte("\x80\x02}q\x00(X\x01\x00\x00\x00aK\x01u.")); err != nil {
		t.Errorf("valid pickle: %v", err)
	}
}
