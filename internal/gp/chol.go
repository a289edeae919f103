package gp

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// ErrNotPositiveDefinite is wrapped by the error returned when a covariance
// matrix cannot be factorised even after adding the largest jitter.
var ErrNotPositiveDefinite = errors.New("matrix is not positive definite")

// jitterLadder lists the extra diagonal jitter, relative to the mean
// diagonal, tried in turn when a Cholesky factorisation fails.
var jitterLadder = []float64{0, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2}

// cholesky overwrites the lower triangle of the symmetric n x n matrix a
// (full storage, row-major) with its Cholesky factor L, adding growing
// jitter to the diagonal on failure. The upper triangle is left intact. It
// returns the jitter added (absolute).
func cholesky(a blas64.General, what string) (float64, error) {
	n := a.Rows
	diag := make([]float64, n)
	mean := 0.0
	for i := range diag {
		diag[i] = a.Data[i*a.Stride+i]
		mean += diag[i]
	}
	mean /= float64(n)
	if math.IsNaN(mean) || math.IsInf(mean, 0) {
		return 0, fmt.Errorf("gp: %s has non-finite entries", what)
	}
	for _, rel := range jitterLadder {
		jit := rel * mean
		if rel > 0 {
			// Restore the lower triangle from the untouched upper one.
			for i := 0; i < n; i++ {
				for j := 0; j < i; j++ {
					a.Data[i*a.Stride+j] = a.Data[j*a.Stride+i]
				}
				a.Data[i*a.Stride+i] = diag[i] + jit
			}
		}
		_, done := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: a.Stride, Data: a.Data})
		if done && positiveDiag(a) {
			return jit, nil
		}
	}
	return 0, fmt.Errorf("gp: Cholesky factorisation of %s (%d x %d) failed even with jitter %.1e x mean diagonal: %w",
		what, n, n, jitterLadder[len(jitterLadder)-1], ErrNotPositiveDefinite)
}

// positiveDiag reports whether the factor in the lower triangle of a is usable: a
// finite, positive diagonal.
func positiveDiag(a blas64.General) bool {
	for i := 0; i < a.Rows; i++ {
		v := a.Data[i*a.Stride+i]
		if !(v > 0) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// lower views the lower triangle of a as a blas64.Triangular.
func lower(a blas64.General) blas64.Triangular {
	return blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: a.Rows, Stride: a.Stride, Data: a.Data}
}

// logDetChol returns Σ log L_ii for the factor in the lower triangle of a.
func logDetChol(a blas64.General) float64 {
	s := 0.0
	for i := 0; i < a.Rows; i++ {
		s += math.Log(a.Data[i*a.Stride+i])
	}
	return s
}

// cholInverse overwrites a, holding a Cholesky factor in its lower triangle,
// with the full symmetric inverse of L Lᵀ.
func cholInverse(a blas64.General) error {
	if _, done := lapack64.Potri(lower(a)); !done {
		return fmt.Errorf("gp: inverse of a singular Cholesky factor: %w", ErrNotPositiveDefinite)
	}
	symmetrizeFromLower(a)
	return nil
}

// symmetrizeFromLower copies the lower triangle of a onto the upper one.
func symmetrizeFromLower(a blas64.General) {
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < i; j++ {
			a.Data[j*a.Stride+i] = a.Data[i*a.Stride+j]
		}
	}
}

// symmetrizeFromUpper copies the upper triangle of a onto the lower one.
func symmetrizeFromUpper(a blas64.General) {
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < i; j++ {
			a.Data[i*a.Stride+j] = a.Data[j*a.Stride+i]
		}
	}
}
