package acq_test

import (
	"fmt"

	"github.com/tlbo-native/tlbo-native/internal/acq"
)

// Expected improvement of a Gaussian prediction over the incumbent, and its
// logarithm, which stays finite where EI underflows: at ten standard
// deviations below the incumbent EI is about 7.5e-25.
func ExampleEI() {
	for _, mean := range []float64{0, 1, -10} {
		ei, _, _ := acq.EI(mean, 1, 0)
		logEI, _, _ := acq.LogEI(mean, 1, 0)
		fmt.Printf("mean %3g: EI %.6g, log EI %.6f\n", mean, ei, logEI)
	}
	// Output:
	// mean   0: EI 0.398942, log EI -0.918939
	// mean   1: EI 1.08332, log EI 0.080026
	// mean -10: EI 7.47456e-25, log EI -55.553122
}

// The reference's incumbent for EI is the 0.9 quantile of the standardised
// targets, not their maximum.
func ExampleQuantileBest() {
	y := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}
	fmt.Printf("0.9 quantile %.4g, best %g\n", acq.QuantileBest(y, 0.9), acq.BestObserved(y))
	// Output:
	// 0.9 quantile 6.3, best 9
}

// Maximising a function over a box: scrambled-Halton raw samples, the best
// restarts refined by projected quasi-Newton steps within the bounds.
func ExampleMaximize() {
	f := acq.Func(func(x, grad []float64) float64 {
		if grad != nil {
			grad[0], grad[1] = -2*(x[0]-0.3), -2*(x[1]-1.5)
		}
		return -(x[0]-0.3)*(x[0]-0.3) - (x[1]-1.5)*(x[1]-1.5)
	})
	res, err := acq.Maximize(f, []float64{0, 0}, []float64{1, 1}, acq.Options{RawSamples: 64, Restarts: 4, Seed: 1})
	if err != nil {
		panic(err)
	}
	// The maximiser (0.3, 1.5) lies outside the box: the best point in it
	// is on the upper edge of the second dimension.
	fmt.Printf("x = (%.4f, %.4f), f = %.4f\n", res.X[0], res.X[1], res.Value)
	// Output:
	// x = (0.3000, 1.0000), f = -0.2500
}
