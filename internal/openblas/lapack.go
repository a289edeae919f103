package openblas

/*
#include <stddef.h>
// Fortran LAPACK in libopenblas (LP64, gfortran hidden string lengths).
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
void dtrtri_(const char *uplo, const char *diag, const int *n, double *a, const int *lda, int *info, size_t uplo_len, size_t diag_len);
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
