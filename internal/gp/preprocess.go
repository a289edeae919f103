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

// FenceSDs is where the standardiser's winsorisation fence stands: this
// many robust standard deviations (1.4826 MAD, see NewStandardizer) from
// the targets' median.
const FenceSDs = 50

// Standardizer maps targets to zero mean and unit variance: z = (y -
// Mean)/Std, with the population standard deviation (as the reference),
// after clamping y to the fence [Lower, Upper] (winsorisation: see
// NewStandardizer). The zero value, or one built with only Mean and Std,
// has no fence.
type Standardizer struct {
	Mean, Std float64
	// Lower and Upper are the fence (±Inf where it lies beyond the range
	// of float64); Clamped counts the targets NewStandardizer clamped.
	Lower, Upper float64
	Clamped      int
	fenced       bool
	// exp is the power of two the arithmetic scales by (2^exp > max|y|),
	// so that no difference or square of targets overflows.
	exp int
}

// NewStandardizer returns the standardiser of y, finite for any finite
// targets (the package doc says how and why): targets farther than
// FenceSDs robust standard deviations from their median are clamped there
// (Clamped counts them), and the arithmetic is scaled by a power of two so
// that no sum or square overflows. Constant targets get Std 1. NaN or Inf
// is an error: the caller turns those into failures before they reach the
// GP.
func NewStandardizer(y []float64) (Standardizer, error) {
	if len(y) == 0 {
		return Standardizer{}, fmt.Errorf("gp: standardiser needs at least one target")
	}
	if !allFinite(y) {
		return Standardizer{}, fmt.Errorf("gp: targets contain NaN or Inf")
	}
	big := 0.0
	for _, v := range y {
		big = math.Max(big, math.Abs(v))
	}
	st := Standardizer{fenced: true}
	if big > 0 {
		_, st.exp = math.Frexp(big) // big < 2^exp
	}
	ys := make([]float64, len(y))
	for i, v := range y {
		ys[i] = math.Ldexp(v, -st.exp)
	}
	med, sr := robustScale(ys)
	if !(sr > 0) {
		// Constant targets: Std 1 (as ever), unscaled, the fence FenceSDs
		// away.
		return Standardizer{Mean: y[0], Std: 1, Lower: y[0] - FenceSDs, Upper: y[0] + FenceSDs, fenced: true}, nil
	}
	lo, hi := med-FenceSDs*sr, med+FenceSDs*sr
	st.Lower, st.Upper = math.Ldexp(lo, st.exp), math.Ldexp(hi, st.exp)
	for _, v := range ys {
		if v < lo || v > hi {
			st.Clamped++
		}
	}
	if st.Clamped > 0 {
		// Scale the clamped targets anew: their largest may be far below
		// the outlier that set the scale.
		big = 0
		for i, v := range y {
			y := math.Min(math.Max(v, st.Lower), st.Upper)
			ys[i], big = y, math.Max(big, math.Abs(y))
		}
		_, st.exp = math.Frexp(big)
		for i, v := range ys {
			ys[i] = math.Ldexp(v, -st.exp)
		}
	}
	m, v := meanVar(ys)
	st.Mean, st.Std = math.Ldexp(m, st.exp), math.Ldexp(math.Sqrt(v), st.exp)
	return st, nil
}

// robustScale returns the median of y and its robust standard deviation
// (see NewStandardizer): 0 for constant y.
func robustScale(y []float64) (med, sr float64) {
	s := slices.Clone(y)
	slices.Sort(s)
	med = Quantile(s, 0.5)
	sum := 0.0
	for i, v := range s {
		s[i] = math.Abs(v - med)
		sum += s[i]
	}
	slices.Sort(s)
	if mad := Quantile(s, 0.5); mad > 0 {
		return med, 1.4826 * mad
	}
	return med, 1.2533 * sum / float64(len(s))
}

// Transform returns the standardised copy of y, each target clamped to the
// fence first.
func (s Standardizer) Transform(y []float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = s.transform(v)
	}
	return out
}

// transform standardises one target.
func (s Standardizer) transform(v float64) float64 {
	if s.fenced {
		v = math.Min(math.Max(v, s.Lower), s.Upper)
	}
	return (math.Ldexp(v, -s.exp) - math.Ldexp(s.Mean, -s.exp)) / math.Ldexp(s.Std, -s.exp)
}

// Inverse maps a standardised mean and variance back to the scale of y
// (±Inf where that lies beyond float64).
func (s Standardizer) Inverse(mean, variance float64) (float64, float64) {
	sd := math.Ldexp(s.Std, -s.exp)
	return math.Ldexp(math.Ldexp(s.Mean, -s.exp)+sd*mean, s.exp), math.Ldexp(sd*sd*variance, 2*s.exp)
}
