package gp

import (
	"testing"
)

// BenchmarkSGPREval times one objective+gradient evaluation of each sparse
// approximation at the size (N = 3000, M = 500, d = 25);
// `tlbo-native bench sgpr-eval` reports the Titsias one.
func BenchmarkSGPREval(b *testing.B) {
	x, y := randomProblem(3000, 25, 1)
	z := KMeans(x, 500, 10, 1)
	for _, a := range []Approximation{Titsias, FITC} {
		b.Run(string(a), func(b *testing.B) {
			o, err := NewObjective(x, y, Spec{Kernel: RBF, Inducing: z, Approximation: a})
			if err != nil {
				b.Fatal(err)
			}
			theta, _ := o.Pack(testHyper(25, false), nil)
			grad := make([]float64, len(theta))
			for b.Loop() {
				if _, err := o.Eval(theta, grad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
