package bo

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/acq"
	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// believer is a round's GP conditioned on the points the round has added
// since its fit, with the fit's hyperparameters and inducing points kept:
// the known scores of repeated objects and the failure scores of invalid
// decodes (real observations), and at each chosen proposal the posterior
// mean there (the kriging believer's fantasy, Ginsbourger et al. 2010).
// Conditioning makes the next maximiser of the acquisition move away from
// points already chosen or known. It is exact either way: under
// GPRefitEvery the posterior is rebuilt on all the points (gp.New, O(N M²)
// for a sparse GP), as runs made before the schedule existed did, so that
// they resume and repeat bit for bit; under the other schedules the points
// join by gp.Model.Condition (O(M²) a point), the same posterior to
// rounding.
type believer struct {
	fit      fitResult
	rebuild  bool        // GPRefitEvery: gp.New on all the points
	inducing GPInducing  // otherwise: how the points join (Condition or ConditionGrow)
	n0       int         // points of the round's GP (fit.model)
	xs       [][]float64 // the points added since, in the unit box
	ys       []float64   // their standardised targets
	real     []float64   // standardised real observations, for the incumbent
	model    *gp.Model
	spent    time.Duration // wall time of the conditioning (Round.GPUpdate)
}

// newBeliever starts from a successful fit, or the kept GP of a schedule
// other than every; rebuild selects gp.New (GPRefitEvery), else the points
// join as inducing says.
func newBeliever(f fitResult, rebuild bool, inducing GPInducing) *believer {
	return &believer{
		fit:      f,
		rebuild:  rebuild,
		inducing: inducing,
		n0:       f.model.Points(),
		real:     append([]float64(nil), f.yStd...),
		model:    f.model,
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
func (b *believer) rows() int { return b.n0 + len(b.ys) }

// update conditions the GP: the targets of the rows in set (fantasies)
// become real observations, and the points xs join with targets ys (real
// marking observations).
func (b *believer) update(set map[int]float64, xs [][]float64, ys []float64, real []bool) error {
	start := time.Now()
	defer func() { b.spent += time.Since(start) }()
	rows := slices.Sorted(maps.Keys(set))
	for _, row := range rows {
		if row < b.n0 || row >= b.rows() {
			return fmt.Errorf("condition the GP: row %d is not among the %d points added to the %d of its fit", row, len(b.ys), b.n0)
		}
	}
	for _, v := range slices.Concat(ys, slices.Collect(maps.Values(set))) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("condition the GP: target %v", v)
		}
	}
	allX := slices.Concat(b.xs, xs)
	allY := slices.Concat(b.ys, ys)
	for _, row := range rows {
		allY[row-b.n0] = set[row]
	}
	var m *gp.Model
	var err error
	switch {
	case b.rebuild:
		m, err = b.rebuilt(allX, allY)
	case len(set) > 0: // targets changed: condition the round's GP anew
		m, err = b.inducing.condition(b.fit.model, allX, allY)
	default:
		m, err = b.inducing.condition(b.model, xs, ys)
	}
	if err != nil {
		return fmt.Errorf("condition the GP on %d points: %w", b.n0+len(allY), err)
	}
	b.xs, b.ys, b.model = allX, allY, m
	for _, row := range rows {
		b.real = append(b.real, allY[row-b.n0])
	}
	for i, r := range real {
		if r {
			b.real = append(b.real, ys[i])
		}
	}
	return nil
}

// rebuilt returns the posterior of the fit's data and the added points
// built from scratch with the fit's hyperparameters and inducing points.
func (b *believer) rebuilt(xs [][]float64, ys []float64) (*gp.Model, error) {
	m := b.fit.model
	n, d := b.fit.xn.Dims()
	x := mat.NewDense(n+len(xs), d, nil)
	x.Slice(0, n, 0, d).(*mat.Dense).Copy(b.fit.xn)
	for i, u := range xs {
		x.SetRow(n+i, u)
	}
	h := m.Hyper()
	spec := gp.Spec{Kernel: m.Kernel(), Inducing: m.Inducing(), Warp: h.Warped(), Approximation: m.Approximation()}
	return gp.New(x, slices.Concat(b.fit.yStd, ys), spec, h)
}
