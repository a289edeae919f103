package gp

import (
	"testing"
)

// BenchmarkSGPREval times one bound+gradient evaluation at the size
// (N = 3000, M = 500, d = 25); `tlbo-native bench sgpr-eval` reports the same.
func BenchmarkSGPREval(b *testing.B) {
	x, y := randomProblem(3000, 25, 1)
	z := KMeans(x, 500, 10, 1)
	o, err := NewObjective(x, y, Spec{Kernel: RBF, Inducing: z})
	if err != nil {
		b.Fatal(err)
	}
	h := testHyper(25, false)
	theta, _ := o.Pack(h, nil)
	grad := make([]float64, len(theta))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := o.Eval(theta, grad); err != nil {
			b.Fatal(err)
		}
	}
}
