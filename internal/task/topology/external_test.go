package topology

import (
	"slices"
	"testing"
)

// TestDesignText: a design reaches a program as the path of a 40x40 .npy
// that ReadDesigns reads back as the same design; the same design has the
// same path, another design another.
func TestDesignText(t *testing.T) {
	dir := t.TempDir()
	d := make(Design, Pixels)
	for i := range d {
		d[i] = uint8(i % 3 % 2)
	}
	path, err := designText(nil, dir, Key(d), d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadDesigns(path)
	if err != nil || len(got) != 1 || !slices.Equal(got[0], d) {
		t.Fatalf("read back %d designs (%v), want the design", len(got), err)
	}
	again, _ := designText(nil, dir, Key(d), d)
	e := slices.Clone(d)
	e[0] = 1 - e[0]
	other, _ := designText(nil, dir, Key(e), e)
	if again != path || other == path {
		t.Errorf("paths %s, %s, %s: want the same design at the same path, another elsewhere", path, again, other)
	}
}
