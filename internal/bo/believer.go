package bo

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// believer is a round's GP conditioned on the points the round has added
// since its fit, with the fit's hyperparameters and inducing points kept:
// the known scores of repeated objects and the failure scores of invalid
// decodes (real observations), and at each chosen proposal the posterior
// mean there (the kriging believer's fantasy, Ginsbourger et al. 2010).
// Conditioning costs one posterior computation (O(N M²) for a sparse GP),
// against a refit's tens of them, and makes the next maximiser of the
// acquisition move away from points already chosen or known.
type believer struct {
	fit   fitResult
	spec  gp.Spec
	hyper gp.Hyper
	x     *mat.Dense // normalised inputs: the fit's, then the added points
	y     []float64  // standardised targets
	real  []float64  // standardised real observations, for the incumbent
	model *gp.Model
}

// newBeliever starts from a successful fit.
func newBeliever(f fitResult) *believer {
	m := f.model
	h := m.Hyper()
	return &believer{
		fit:   f,
		spec:  gp.Spec{Kernel: m.Kernel(), Inducing: m.Inducing(), Warp: h.WarpA != nil, Approximation: m.Approximation()},
		hyper: h,
		x:     f.xn,
		y:     append([]float64(nil), f.yStd...),
		real:  append([]float64(nil), f.yStd...),
		model: m,
	}
}

// standardize maps a utility to the fit's standardised scale.
func (b *believer) standardize(u float64) float64 { return b.fit.st.Transform([]float64{u})[0] }

// mean returns the posterior mean at u (unit box, standardised).
func (b *believer) mean(u []float64) float64 {
	m, _ := b.model.Predict(u)
	return m
}

// bestF returns EI's incumbent: the quantile q of the real observations.
func (b *believer) bestF(q float64) float64 { return acq.QuantileBest(b.real, q) }

// add conditions the GP on y (standardised) at u; real marks an
// observation rather than a fantasy.
func (b *believer) add(u []float64, y float64, real bool) error {
	return b.update(nil, [][]float64{u}, []float64{y}, []bool{real})
}

// rows returns the number of points the believer's GP is conditioned on.
func (b *believer) rows() int { return len(b.y) }

// update conditions the GP in one posterior computation: the targets of
// the rows in set (fantasies) become real observations, and the points xs
// join with targets ys (real marking observations).
func (b *believer) update(set map[int]float64, xs [][]float64, ys []float64, real []bool) error {
	n, d := b.x.Dims()
	x := b.x
	if len(xs) > 0 {
		x = mat.NewDense(n+len(xs), d, nil)
		x.Slice(0, n, 0, d).(*mat.Dense).Copy(b.x)
		for i, u := range xs {
			x.SetRow(n+i, u)
		}
	}
	y := append(append([]float64(nil), b.y...), ys...)
	rows := slices.Sorted(maps.Keys(set))
	for _, row := range rows {
		if row < 0 || row >= n {
			return fmt.Errorf("condition the GP: row %d of %d", row, n)
		}
		y[row] = set[row]
	}
	for _, v := range slices.Concat(ys, slices.Collect(maps.Values(set))) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("condition the GP: target %v", v)
		}
	}
	m, err := gp.New(x, y, b.spec, b.hyper)
	if err != nil {
		return fmt.Errorf("condition the GP on %d points: %w", len(y), err)
	}
	b.x, b.y, b.model = x, y, m
	for _, row := range rows {
		b.real = append(b.real, y[row])
	}
	for i, r := range real {
		if r {
			b.real = append(b.real, ys[i])
		}
	}
	return nil
}
