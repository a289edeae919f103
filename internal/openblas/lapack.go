package openblas

/*
#include <stddef.h>
// Fortran LAPACK in libopenblas (LP64, gfortran hidden string lengths).
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
void dtrtri_(const char *uplo, const char *diag, const int *n, double *a, const int *lda, int *info, size_t uplo_len, size_t diag_len);
void dpbtrf_(const char *uplo, const int *n, const int *kd, double *ab, const int *ldab, int *info, size_t uplo_len);
void dpbtrs_(const char *uplo, const int *n, const int *kd, const int *nrhs, const double *ab, const int *ldab, double *b, const int *ldb, int *info, size_t uplo_len);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// Lapack is a lapack.Float64 whose Cholesky routines run in OpenBLAS's
// LAPACK; the rest are gonum's pure-Go routines (which call the BLAS
// installed by this package).
type Lapack struct {
	gonum.Implementation
}

var _ lapack.Float64 = Lapack{}

// Fortran's column-major upper triangle holds the elements of gonum's
// row-major lower triangle, and vice versa.
var (
	cU = C.CString("U") // allocated once, never freed
	cL = C.CString("L")
	cN = C.CString("N")
)

// uploChar returns the Fortran triangle that matches the row-major ul.
func uploChar(ul blas.Uplo) *C.char {
	switch ul {
	case blas.Lower:
		return cU
	case blas.Upper:
		return cL
	}
	panic("openblas: bad uplo")
}

// Dpotrf computes the Cholesky factorisation of the symmetric positive
// definite n x n matrix in a; it reports false if a is not positive definite.
func (Lapack) Dpotrf(ul blas.Uplo, n int, a []float64, lda int) bool {
	uc := uploChar(ul)
	checkMat("A", len(a), n, n, lda)
	if n == 0 {
		return true
	}
	cn, clda := C.int(n), C.int(lda)
	var info C.int
	C.dpotrf_(uc, &cn, ptr(a), &clda, &info, 1)
	if info < 0 {
		panic("openblas: dpotrf argument error")
	}
	return info == 0
}

// Dpotri computes the inverse of a symmetric positive definite matrix from
// its Cholesky factor; it reports false if the factor is singular.
func (Lapack) Dpotri(ul blas.Uplo, n int, a []float64, lda int) bool {
	uc := uploChar(ul)
	checkMat("A", len(a), n, n, lda)
	if n == 0 {
		return true
	}
	cn, clda := C.int(n), C.int(lda)
	var info C.int
	C.dpotri_(uc, &cn, ptr(a), &clda, &info, 1)
	if info < 0 {
		panic("openblas: dpotri argument error")
	}
	return info == 0
}

// Dtrtri computes the inverse of the triangular n x n matrix in a in place;
// it reports false if the matrix is singular.
func (Lapack) Dtrtri(ul blas.Uplo, d blas.Diag, n int, a []float64, lda int) bool {
	uc := uploChar(ul)
	var dc *C.char
	switch d {
	case blas.NonUnit:
		dc = cN
	case blas.Unit:
		dc = cU
	default:
		panic("openblas: bad diag")
	}
	checkMat("A", len(a), n, n, lda)
	if n == 0 {
		return true
	}
	cn, clda := C.int(n), C.int(lda)
	var info C.int
	C.dtrtri_(uc, dc, &cn, ptr(a), &clda, &info, 1, 1)
	if info < 0 {
		panic("openblas: dtrtri argument error")
	}
	return info == 0
}

// checkBand panics unless ab holds an n x n band matrix with kd off-diagonals
// in gonum's row-major band storage with leading dimension ldab.
func checkBand(n, kd int, ab []float64, ldab int) {
	switch {
	case n < 0 || kd < 0:
		panic("openblas: negative dimension of AB")
	case ldab < kd+1:
		panic("openblas: bad leading dimension of AB")
	case n > 0 && len(ab) < (n-1)*ldab+kd+1:
		panic("openblas: slice AB is too short")
	}
}

// Dpbtrf computes the Cholesky factorisation of the symmetric positive
// definite n x n band matrix with kd off-diagonals in ab (gonum's row-major
// band storage, which is Fortran's column-major storage of the other
// triangle); it reports false if the matrix is not positive definite.
func (Lapack) Dpbtrf(ul blas.Uplo, n, kd int, ab []float64, ldab int) bool {
	uc := uploChar(ul)
	checkBand(n, kd, ab, ldab)
	if n == 0 {
		return true
	}
	cn, ckd, cldab := C.int(n), C.int(kd), C.int(ldab)
	var info C.int
	C.dpbtrf_(uc, &cn, &ckd, ptr(ab), &cldab, &info, 1)
	if info < 0 {
		panic("openblas: dpbtrf argument error")
	}
	return info == 0
}

// Dpbtrs solves A X = B with the band Cholesky factor of A from Dpbtrf; b is
// the row-major n x nrhs matrix B, overwritten with X.
func (Lapack) Dpbtrs(ul blas.Uplo, n, kd, nrhs int, ab []float64, ldab int, b []float64, ldb int) {
	uc := uploChar(ul)
	checkBand(n, kd, ab, ldab)
	if nrhs < 0 {
		panic("openblas: negative nrhs")
	}
	checkMat("B", len(b), n, nrhs, ldb)
	if n == 0 || nrhs == 0 {
		return
	}
	// Fortran wants B column-major: a single contiguous column is already
	// that; anything else goes through a transposed copy.
	col := b
	if nrhs > 1 || ldb != 1 {
		col = make([]float64, n*nrhs)
		for i := range n {
			for j := range nrhs {
				col[j*n+i] = b[i*ldb+j]
			}
		}
	}
	cn, ckd, cnrhs, cldab, cldb := C.int(n), C.int(kd), C.int(nrhs), C.int(ldab), C.int(n)
	var info C.int
	C.dpbtrs_(uc, &cn, &ckd, &cnrhs, ptr(ab), &cldab, ptr(col), &cldb, &info, 1)
	if info < 0 {
		panic("openblas: dpbtrs argument error")
	}
	if nrhs > 1 || ldb != 1 {
		for i := range n {
			for j := range nrhs {
				b[i*ldb+j] = col[j*n+i]
			}
		}
	}
}
