package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// GPOptions configure the Table 1 protocol.
type GPOptions struct {
	// Splits is the number of random train/test splits (0: 5).
	Splits int
	// TestFraction is the share of the points held out per split (0: 0.2).
	TestFraction float64
	// Inducing is the number of inducing points of the SGPR (0: an exact
	// GP); the paper's 500.
	Inducing int
	// Kernel, Approximation and MaxIter configure the fit (see gp.Options).
	Kernel        gp.Kernel
	Approximation gp.Approximation
	MaxIter       int
	// Seed determines the splits and the k-means initialisations.
	Seed uint64
	// Progress, when set, is told each split's result (split from 1).
	Progress func(split int, logLik, rmse float64)
}

func (o GPOptions) withDefaults() GPOptions {
	if o.Splits == 0 {
		o.Splits = 5
	}
	if o.TestFraction == 0 {
		o.TestFraction = 0.2
	}
	return o
}

// GPResult is the outcome of the protocol on one set of latent points.
type GPResult struct {
	// Points and Dim are the number and dimension of the latent points.
	Points, Dim int
	// Train and Test are the sizes of each split's parts.
	Train, Test int
	// LogLik is, per split, the mean Gaussian predictive log-likelihood per
	// held-out point on the scale of the scores; RMSE the root-mean-square
	// error of the predictive mean.
	LogLik, RMSE []float64
	// Mean and Std summarise LogLik over the splits (Std is the population
	// standard deviation, numpy's default).
	Mean, Std float64
	// Standardised is LogLik on the scale the GP is fitted on: held-out
	// scores standardised with the training part's mean and standard
	// deviation s, i.e. LogLik + log s per split (Table 1's scale is not
	// stated in the paper, so both are reported); StandardisedMean and
	// StandardisedStd summarise it.
	Standardised                      []float64
	StandardisedMean, StandardisedStd float64
}

// GPLogLik runs the Table 1 protocol: for each of o.Splits random splits,
// a GP (SGPR with o.Inducing inducing points) is fitted to the latent
// points z (one per row) and scores y of the training part, with the
// reference's preprocessing (inputs to the unit box, standardised targets),
// and scored by the mean predictive log-likelihood of the held-out part.
func GPLogLik(z *mat.Dense, y []float64, o GPOptions) (GPResult, error) {
	o = o.withDefaults()
	n, d, err := checkLatents(z, y)
	if err != nil {
		return GPResult{}, err
	}
	if o.Splits < 1 || !(o.TestFraction > 0 && o.TestFraction < 1) {
		return GPResult{}, fmt.Errorf("analysis: %d splits with test fraction %v, want >= 1 split and a fraction in (0, 1)", o.Splits, o.TestFraction)
	}
	nTest := int(math.Round(o.TestFraction * float64(n)))
	nTest = max(1, min(nTest, n-2))
	if n-nTest < 2 {
		return GPResult{}, fmt.Errorf("analysis: %d points leave fewer than 2 to fit the GP on", n)
	}
	res := GPResult{Points: n, Dim: d, Train: n - nTest, Test: nTest}
	for s := range o.Splits {
		perm := rand.New(rand.NewPCG(o.Seed, uint64(s))).Perm(n)
		xte, yte := subset(z, y, perm[:nTest])
		xtr, ytr := subset(z, y, perm[nTest:])
		reg, err := gp.FitRegressor(xtr, ytr, gp.Options{Inducing: o.Inducing, Kernel: o.Kernel,
			Approximation: o.Approximation, MaxIter: o.MaxIter, Seed: o.Seed + uint64(s)})
		if err != nil {
			return res, fmt.Errorf("analysis: split %d: fit: %w", s+1, err)
		}
		ll, rmse, err := reg.Score(xte, yte)
		if err != nil {
			return res, fmt.Errorf("analysis: split %d: %w", s+1, err)
		}
		res.LogLik = append(res.LogLik, ll)
		res.Standardised = append(res.Standardised, ll+math.Log(reg.Targets.Std))
		res.RMSE = append(res.RMSE, rmse)
		if o.Progress != nil {
			o.Progress(s+1, ll, rmse)
		}
	}
	res.Mean, res.Std = stat.PopMeanStdDev(res.LogLik, nil)
	res.StandardisedMean, res.StandardisedStd = stat.PopMeanStdDev(res.Standardised, nil)
	return res, nil
}

// checkLatents verifies that z has one finite row per score.
func checkLatents(z *mat.Dense, y []float64) (n, d int, err error) {
	if z == nil {
		return 0, 0, fmt.Errorf("analysis: no latent points")
	}
	n, d = z.Dims()
	if n != len(y) {
		return 0, 0, fmt.Errorf("analysis: %d latent points but %d scores", n, len(y))
	}
	if n < 3 {
		return 0, 0, fmt.Errorf("analysis: %d points, need at least 3", n)
	}
	for i := range n {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return 0, 0, fmt.Errorf("analysis: score %d is %v", i, y[i])
		}
		for k, v := range z.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("analysis: latent point %d has %v in dimension %d", i, v, k)
			}
		}
	}
	return n, d, nil
}

// subset returns the rows idx of z and their scores.
func subset(z *mat.Dense, y []float64, idx []int) (*mat.Dense, []float64) {
	_, d := z.Dims()
	x := mat.NewDense(len(idx), d, nil)
	ys := make([]float64, len(idx))
	for i, j := range idx {
		x.SetRow(i, z.RawRowView(j))
		ys[i] = y[j]
	}
	return x, ys
}
