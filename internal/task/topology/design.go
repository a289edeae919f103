package topology

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/models"
	conv "github.com/tlbo-native/tlbo-native/models/topology"
)

// Side is the side of a design in pixels.
const Side = conv.Size

// Pixels is the number of pixels of a design.
const Pixels = Side * Side

// Design is a 40x40 binary design, row-major with row 0 at the top: 1 for
// material, 0 for void.
type Design []uint8

// Similarity returns the cosine similarity of two designs of equal size; a
// design without material scores 0.
func Similarity(a, b Design) float64 {
	var dot, na, nb int
	for i := range a {
		dot += int(a[i]) * int(b[i])
		na += int(a[i])
		nb += int(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float64(dot) / math.Sqrt(float64(na)*float64(nb))
}

// Key returns a design's pixels packed eight to a byte (the first pixel in
// the high bit), in hex: 400 characters.
func Key(d Design) string {
	packed := make([]byte, (len(d)+7)/8)
	for i, v := range d {
		if v != 0 {
			packed[i/8] |= 0x80 >> (i % 8)
		}
	}
	return hex.EncodeToString(packed)
}

// ParseKey returns the design of a key made by Key.
func ParseKey(key string) (Design, error) {
	packed, err := hex.DecodeString(key)
	if err != nil || len(packed) != Pixels/8 {
		return nil, fmt.Errorf("design key: want %d hex digits, got %d characters (%v)", Pixels/4, len(key), err)
	}
	d := make(Design, Pixels)
	for i := range d {
		d[i] = packed[i/8] >> (7 - i%8) & 1
	}
	return d, nil
}

// example returns a design as the network's input.
func example(d Design) (models.Dense, error) {
	if len(d) != Pixels {
		return nil, fmt.Errorf("design of %d pixels, want %d", len(d), Pixels)
	}
	x := make(models.Dense, Pixels)
	for i, v := range d {
		x[i] = float32(v)
	}
	return x, nil
}

// ReadDesigns reads designs from an .npy file of shape (n, 40, 40) or
// (40, 40), any integer or float dtype; every value must be 0 or 1.
func ReadDesigns(path string) ([]Design, error) {
	a, err := numpy.ReadNPY(path)
	if err != nil {
		return nil, err
	}
	return designsOf(path, a)
}

// designsOf checks and converts an array of designs.
func designsOf(path string, a numpy.Array) ([]Design, error) {
	out, errs, err := checkDesigns(path, a)
	if err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkDesigns converts an array of designs, each checked on its own: err
// is set when the array's shape or type is not that of designs, errs[i]
// (with out[i] nil) when design i has a pixel other than 0 or 1.
func checkDesigns(path string, a numpy.Array) (out []Design, errs []error, err error) {
	shape := a.Shape
	if len(shape) == 2 {
		shape = append([]int{1}, shape...)
	}
	if len(shape) != 3 || shape[1] != Side || shape[2] != Side || shape[0] < 1 {
		return nil, nil, fmt.Errorf("%s: array %q of shape %v, want (n, %d, %d) with n >= 1 or (%d, %d)", path, a.Name, a.Shape, Side, Side, Side, Side)
	}
	v, err := a.Float64s()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: array %q: %w", path, a.Name, err)
	}
	out, errs = make([]Design, shape[0]), make([]error, shape[0])
designs:
	for i := range out {
		d := make(Design, Pixels)
		for j, x := range v[i*Pixels : (i+1)*Pixels] {
			switch x {
			case 0:
			case 1:
				d[j] = 1
			default:
				errs[i] = fmt.Errorf("%s: array %q: design %d pixel (%d, %d) is %v, want 0 or 1", path, a.Name, i, j/Side, j%Side, x)
				continue designs
			}
		}
		out[i] = d
	}
	return out, errs, nil
}

// WriteDesigns writes designs as a uint8 .npy of shape (n, 40, 40),
// atomically; an invalid one (valid[i] false) is written empty.
func WriteDesigns(path string, designs []Design, valid []bool) error {
	flat := make([]uint8, 0, len(designs)*Pixels)
	for i, d := range designs {
		if (valid != nil && !valid[i]) || len(d) != Pixels {
			flat = append(flat, make([]uint8, Pixels)...)
			continue
		}
		flat = append(flat, d...)
	}
	return numpy.WriteNPY(path, numpy.Array{Shape: []int{len(designs), Side, Side}, Data: flat})
}

// transform maps pixel (r, c) of a design through k quarter turns
// anticlockwise, then a vertical flip (top row to the bottom) when flip.
func transform(src []float32, k int, flip bool) []float32 {
	dst := make([]float32, len(src))
	for r := range Side {
		for c := range Side {
			rr, cc := r, c
			for range k { // one anticlockwise quarter turn: (r, c) -> (n-1-c, r)
				rr, cc = Side-1-cc, rr
			}
			if flip {
				rr = Side - 1 - rr
			}
			dst[rr*Side+cc] = src[r*Side+c]
		}
	}
	return dst
}

// Augment rotates each design of a mini-batch by a random multiple of 90
// degrees and flips it vertically with probability 1/2 (new examples; the
// input is unchanged).
func Augment(examples []models.Dense, rng *rand.Rand) []models.Dense {
	out := make([]models.Dense, len(examples))
	for i, x := range examples {
		out[i] = transform(x, rng.IntN(4), rng.IntN(2) == 1)
	}
	return out
}
