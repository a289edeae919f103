package gp_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/gp"
)

// A BO step's preprocessing: latent points mapped to the unit box (the
// reference's bounds: the 0.05%-99.95% quantiles, widened to hold the best
// point, then by 5% each side) and scores standardised.
func ExampleNewNormalizer() {
	z := mat.NewDense(4, 1, []float64{-1, 0, 1, 3})
	nz, err := gp.NewNormalizer(z, []float64{3})
	if err != nil {
		panic(err)
	}
	u := nz.Transform(z)
	fmt.Printf("bounds [%.3f, %.3f]\n", nz.Lower[0], nz.Upper[0])
	fmt.Printf("unit box %.3f\n", mat.Col(nil, 0, u))
	st, _ := gp.NewStandardizer([]float64{1, 2, 3, 6})
	fmt.Printf("targets %.3f\n", st.Transform([]float64{1, 2, 3, 6}))
	// Output:
	// bounds [-1.198, 3.200]
	// unit box [0.045 0.272 0.500 0.955]
	// targets [-1.069 -0.535 0.000 1.604]
}

// An exact GP with fixed hyperparameters: the posterior interpolates the
// data (the noise is small) and its variance grows away from them.
func ExampleNew() {
	x := mat.NewDense(3, 1, []float64{0.1, 0.5, 0.9})
	y := []float64{-1, 1, -1}
	m, err := gp.New(x, y, gp.Spec{Kernel: gp.RBF}, gp.Hyper{Lengthscales: []float64{0.2}, Outputscale: 1, Noise: 1e-4})
	if err != nil {
		panic(err)
	}
	for _, u := range []float64{0.5, 0.3} {
		mean, variance := m.Predict([]float64{u})
		fmt.Printf("x %.1f: mean %.3f sd %.3f\n", u, mean, math.Sqrt(variance))
	}
	_, variance := m.Predict([]float64{3})
	fmt.Printf("far from the data: sd %.3f (the prior's)\n", math.Sqrt(variance))
	// Output:
	// x 0.5: mean 1.000 sd 0.010
	// x 0.3: mean 0.072 sd 0.590
	// far from the data: sd 1.000 (the prior's)
}

// Fitting the hyperparameters (MAP with the reference's priors, L-BFGS) of
// an exact GP on a smooth function, then predicting between the data.
func ExampleFit() {
	n := 12
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		v := float64(i) / float64(n-1)
		x.Set(i, 0, v)
		y[i] = math.Sin(6 * v)
	}
	m, err := gp.Fit(x, y, gp.Options{Kernel: gp.RBF, Seed: 1})
	if err != nil {
		panic(err)
	}
	mean, variance := m.Predict([]float64{0.5})
	sd := math.Sqrt(variance)
	fmt.Printf("f(0.5) = %.4f, predicted %.4f, error within a standard deviation (below 0.01): %v\n", math.Sin(3), mean,
		math.Abs(mean-math.Sin(3)) < sd && sd < 0.01)
	// Output:
	// f(0.5) = 0.1411, predicted 0.1411, error within a standard deviation (below 0.01): true
}
