package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Regressor is a fitted model together with the preprocessing fitted on its
// training data (the reference's: inputs to the unit box, standardised
// targets), so that it takes and returns values on the original scales.
type Regressor struct {
	Model   *Model
	Inputs  Normalizer
	Targets Standardizer
}

// FitRegressor normalises x (bounds from the quantiles, widened to include
// the point with the largest y), standardises y and fits a model.
func FitRegressor(x *mat.Dense, y []float64, opts Options) (*Regressor, error) {
	if err := checkData(x, y); err != nil {
		return nil, err
	}
	best := 0
	for i, v := range y {
		if v > y[best] {
			best = i
		}
	}
	nz, err := NewNormalizer(x, x.RawRowView(best))
	if err != nil {
		return nil, err
	}
	st, err := NewStandardizer(y)
	if err != nil {
		return nil, err
	}
	m, err := Fit(nz.Transform(x), st.Transform(y), opts)
	if err != nil {
		return nil, err
	}
	return &Regressor{Model: m, Inputs: nz, Targets: st}, nil
}

// FitRegressorRaw fits a model to x and y as they are, without normalising
// or standardising them: the authors' molecule GP (their priors set for
// the unit box meet raw latent points and scores), kept to measure what
// normalising gains (docs/design.md section 9).
func FitRegressorRaw(x *mat.Dense, y []float64, opts Options) (*Regressor, error) {
	if err := checkData(x, y); err != nil {
		return nil, err
	}
	_, d := x.Dims()
	nz := Normalizer{Lower: make([]float64, d), Upper: make([]float64, d)}
	for k := range nz.Upper {
		nz.Upper[k] = 1
	}
	st := Standardizer{Mean: 0, Std: 1}
	m, err := Fit(x, y, opts)
	if err != nil {
		return nil, err
	}
	return &Regressor{Model: m, Inputs: nz, Targets: st}, nil
}

// Predict returns the predictive mean and variance of a new observation
// (latent variance plus noise) at x, on the original scales.
func (r *Regressor) Predict(x []float64) (mean, variance float64) {
	u := make([]float64, len(x))
	r.Inputs.TransformVec(u, x)
	mu, v := r.Model.Predict(u)
	return r.Targets.Inverse(mu, v+r.Model.hyper.Noise)
}

// Score returns the mean Gaussian predictive log-likelihood per point and
// the root-mean-square error of the predictive mean on test data, on the
// scale of y.
func (r *Regressor) Score(x *mat.Dense, y []float64) (logLik, rmse float64, err error) {
	q, d := x.Dims()
	if d != r.Model.Dim() {
		return 0, 0, fmt.Errorf("gp: test inputs have %d columns, the model %d", d, r.Model.Dim())
	}
	if len(y) != q {
		return 0, 0, fmt.Errorf("gp: %d test inputs but %d test targets", q, len(y))
	}
	if q == 0 {
		return 0, 0, fmt.Errorf("gp: no test points")
	}
	u := r.Inputs.Transform(x)
	mean, variance := make([]float64, q), make([]float64, q)
	r.Model.PredictBatch(u, mean, variance)
	for i := range y {
		mu, v := r.Targets.Inverse(mean[i], variance[i]+r.Model.hyper.Noise)
		e := y[i] - mu
		logLik += -0.5*math.Log(2*math.Pi*v) - 0.5*e*e/v
		rmse += e * e
	}
	return logLik / float64(q), math.Sqrt(rmse / float64(q)), nil
}
