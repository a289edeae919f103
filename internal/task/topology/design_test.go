package topology

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/models"
)

// blockDesign returns a design with material in rows [r0, r1) and columns
// [c0, c1).
func blockDesign(r0, r1, c0, c1 int) Design {
	d := make(Design, Pixels)
	for r := r0; r < r1; r++ {
		for c := c0; c < c1; c++ {
			d[r*Side+c] = 1
		}
	}
	return d
}

func TestSimilarity(t *testing.T) {
	a := blockDesign(0, 10, 0, 10)   // 100 pixels
	b := blockDesign(0, 10, 5, 15)   // 100 pixels, 50 shared
	c := blockDesign(20, 30, 20, 40) // disjoint
	for _, tc := range []struct {
		name string
		x, y Design
		want float64
	}{
		{"same", a, a, 1}, {"half", a, b, 0.5}, {"disjoint", a, c, 0},
		{"empty", make(Design, Pixels), a, 0}, {"both empty", make(Design, Pixels), make(Design, Pixels), 0},
		{"sizes", a, blockDesign(0, 10, 0, 20), 100 / math.Sqrt(100*200)},
	} {
		if got := Similarity(tc.x, tc.y); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: similarity %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		d := make(Design, Pixels)
		for i := range d {
			d[i] = uint8(rng.IntN(2))
		}
		k := Key(d)
		if len(k) != 400 {
			t.Fatalf("key of %d characters, want 400", len(k))
		}
		back, err := ParseKey(k)
		if err != nil || !slices.Equal(back, d) {
			t.Fatalf("ParseKey(Key(d)) = %v, %v", err, back)
		}
	}
	if k := Key(blockDesign(0, 1, 0, 1)); !strings.HasPrefix(k, "80") || strings.Trim(k[2:], "0") != "" {
		t.Fatalf("key of the top-left pixel alone: %s", k)
	}
	for _, bad := range []string{"", "zz", strings.Repeat("0", 398), strings.Repeat("0", 402)} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

// TestTransform checks the augmentation's maps against numpy's rot90
// (anticlockwise: out[i, j] = in[j, n-1-i]) and flipud.
func TestTransform(t *testing.T) {
	src := make([]float32, Pixels)
	for i := range src {
		src[i] = float32(i)
	}
	rot := transform(src, 1, false)
	flip := transform(src, 0, true)
	for i := range Side {
		for j := range Side {
			if rot[i*Side+j] != src[j*Side+Side-1-i] {
				t.Fatalf("rotation: out[%d, %d] = %v, want in[%d, %d]", i, j, rot[i*Side+j], j, Side-1-i)
			}
			if flip[i*Side+j] != src[(Side-1-i)*Side+j] {
				t.Fatalf("flip: out[%d, %d] = %v", i, j, flip[i*Side+j])
			}
		}
	}
	if !slices.Equal(transform(transform(src, 3, false), 1, false), src) || !slices.Equal(transform(flip, 0, true), src) {
		t.Fatal("four quarter turns or two flips are not the identity")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	in := []models.Dense{src, src}
	seen := map[string]bool{}
	for range 64 {
		out := Augment(in, rng)
		if !slices.Equal(in[0], src) {
			t.Fatal("Augment changed its input")
		}
		for _, o := range out {
			seen[Key(Design(toBits(o)))] = true
		}
	}
	if len(seen) != 8 { // the dihedral group of the square
		t.Fatalf("%d distinct augmentations, want 8", len(seen))
	}
}

// toBits thresholds values at their median so that distinct transforms of
// the ramp give distinct designs.
func toBits(v []float32) []uint8 {
	out := make([]uint8, len(v))
	for i, x := range v {
		if int(x)%Side < Side/2 && int(x)/Side < Side/4 {
			out[i] = 1
		}
	}
	return out
}

func TestReadWriteDesigns(t *testing.T) {
	dir := t.TempDir()
	ds := []Design{blockDesign(0, 5, 0, 5), blockDesign(3, 9, 10, 30)}
	path := filepath.Join(dir, "d.npy")
	if err := WriteDesigns(path, append(ds, ds[0]), []bool{true, true, false}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadDesigns(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || !slices.Equal(back[0], ds[0]) || !slices.Equal(back[1], ds[1]) || slices.Contains(back[2], 1) {
		t.Fatal("designs did not round-trip (or the invalid one is not empty)")
	}
	// One 40x40 float design is one design.
	one := filepath.Join(dir, "one.npy")
	f := make([]float64, Pixels)
	f[7] = 1
	if err := numpy.WriteNPY(one, numpy.Array{Shape: []int{Side, Side}, Data: f}); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadDesigns(one); err != nil || len(got) != 1 || got[0][7] != 1 {
		t.Fatalf("one float design: %v %v", err, got)
	}
	for name, a := range map[string]numpy.Array{
		"shape":  {Shape: []int{2, 40, 39}, Data: make([]uint8, 2*40*39)},
		"values": {Shape: []int{1, 40, 40}, Data: append([]float64{0.5}, make([]float64, Pixels-1)...)},
		"empty":  {Shape: []int{0, 40, 40}, Data: []uint8{}},
	} {
		p := filepath.Join(dir, name+".npy")
		if err := numpy.WriteNPY(p, a); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadDesigns(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
}
