package simp

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/lapack/gonum"
)

// BenchmarkRandomDesign times one 40x40 design of 100 iterations (OpenBLAS
// band Cholesky); run with OPENBLAS_NUM_THREADS=1.
func BenchmarkRandomDesign(b *testing.B) { benchDesign(b, nil) }

// BenchmarkRandomDesignGonum is the same with gonum's pure-Go band Cholesky.
func BenchmarkRandomDesignGonum(b *testing.B) { benchDesign(b, gonum.Implementation{}) }

func benchDesign(b *testing.B, chol BandCholesky) {
	for i := 0; b.Loop(); i++ {
		if _, err := SolveRandom(context.Background(), 1, i%8, Options{Chol: chol}); err != nil {
			b.Fatal(err)
		}
	}
}
