package gp

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Normalizer maps inputs to the unit box per dimension: u = (x - Lower) /
// (Upper - Lower). Points outside [Lower, Upper] map outside [0,1]; the
// model clamps warped inputs but otherwise accepts them.
type Normalizer struct {
	Lower, Upper []float64
}

// Quantiles of the reference's normalisation bounds.
const (
	lowerQuantile = 0.0005
	upperQuantile = 0.9995
	boundsMargin  = 0.05
)

// NewNormalizer computes the reference's bounds: per dimension, the 0.05% and
// 99.95% quantiles of x (linear interpolation, numpy's default), widened to
// include best (when non-nil) and then by 5% of the width on each side. A
// dimension of zero width gets the bounds value ± 0.5.
func NewNormalizer(x *mat.Dense, best []float64) (Normalizer, error) {
	if x == nil {
		return Normalizer{}, fmt.Errorf("gp: normaliser needs inputs")
	}
	n, d := x.Dims()
	if n == 0 {
		return Normalizer{}, fmt.Errorf("gp: normaliser needs at least one input")
	}
	if best != nil && len(best) != d {
		return Normalizer{}, fmt.Errorf("gp: best point has %d values for %d dimensions", len(best), d)
	}
	nz := Normalizer{Lower: make([]float64, d), Upper: make([]float64, d)}
	col := make([]float64, n)
	for k := 0; k < d; k++ {
		mat.Col(col, k, x)
		if !allFinite(col) {
			return Normalizer{}, fmt.Errorf("gp: input column %d contains NaN or Inf", k)
		}
		slices.Sort(col)
		lo, hi := Quantile(col, lowerQuantile), Quantile(col, upperQuantile)
		if best != nil {
			lo, hi = math.Min(lo, best[k]), math.Max(hi, best[k])
		}
		w := hi - lo
		if !(w > 0) {
			lo, hi = lo-0.5, hi+0.5
		} else {
			lo, hi = lo-boundsMargin*w, hi+boundsMargin*w
		}
		nz.Lower[k], nz.Upper[k] = lo, hi
	}
	return nz, nil
}

// Quantile returns the q-quantile of the sorted values by linear
// interpolation between order statistics (numpy's default method).
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	pos := q * float64(n-1)
	i := int(math.Floor(pos))
	if i >= n-1 {
		return sorted[n-1]
	}
	if i < 0 {
		return sorted[0]
	}
	f := pos - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}

// Transform returns the normalised copy of x (rows are points).
func (nz Normalizer) Transform(x *mat.Dense) *mat.Dense {
	r, c := x.Dims()
	out := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		nz.TransformVec(out.RawRowView(i), x.RawRowView(i))
	}
	return out
}

// TransformVec writes the normalised x into dst (which may be x).
func (nz Normalizer) TransformVec(dst, x []float64) {
	for k, v := range x {
		dst[k] = (v - nz.Lower[k]) / (nz.Upper[k] - nz.Lower[k])
	}
}

// InverseVec writes the original-space point of the normalised u into dst
// (which may be u).
func (nz Normalizer) InverseVec(dst, u []float64) {
	for k, v := range u {
		dst[k] = nz.Lower[k] + v*(nz.Upper[k]-nz.Lower[k])
	}
}

// Standardizer maps targets to zero mean and unit variance: z = (y -
// Mean)/Std, with the population standard deviation (as the reference).
type Standardizer struct {
	Mean, Std float64
}

// NewStandardizer returns the standardiser of y. Constant y gets Std 1.
func NewStandardizer(y []float64) (Standardizer, error) {
	if len(y) == 0 {
		return Standardizer{}, fmt.Errorf("gp: standardiser needs at least one target")
	}
	if !allFinite(y) {
		return Standardizer{}, fmt.Errorf("gp: targets contain NaN or Inf")
	}
	m, v := meanVar(y)
	sd := math.Sqrt(v)
	if !(sd > 0) {
		sd = 1
	}
	return Standardizer{Mean: m, Std: sd}, nil
}

// Transform returns the standardised copy of y.
func (s Standardizer) Transform(y []float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = (v - s.Mean) / s.Std
	}
	return out
}

// Inverse maps a standardised mean and variance back to the scale of y.
func (s Standardizer) Inverse(mean, variance float64) (float64, float64) {
	return s.Mean + s.Std*mean, s.Std * s.Std * variance
}
