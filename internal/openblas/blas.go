package openblas

/*
#include <cblas.h>
*/
import "C"

import (
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Implementation is a blas.Float64 whose level-3 and main level-2 routines
// run in OpenBLAS; the rest are gonum's pure-Go routines.
type Implementation struct {
	gonum.Implementation
}

var _ blas.Float64 = Implementation{}

// ptr returns a C pointer to the first element of s, or nil for an empty slice.
func ptr(s []float64) *C.double {
	if len(s) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&s[0]))
}

func trans(t blas.Transpose) C.enum_CBLAS_TRANSPOSE {
	switch t {
	case blas.NoTrans:
		return C.CblasNoTrans
	case blas.Trans, blas.ConjTrans:
		return C.CblasTrans
	}
	panic("openblas: bad transpose")
}

func isTrans(t blas.Transpose) bool {
	trans(t) // validates
	return t != blas.NoTrans
}

func uplo(u blas.Uplo) C.enum_CBLAS_UPLO {
	switch u {
	case blas.Upper:
		return C.CblasUpper
	case blas.Lower:
		return C.CblasLower
	}
	panic("openblas: bad uplo")
}

func side(s blas.Side) C.enum_CBLAS_SIDE {
	switch s {
	case blas.Left:
		return C.CblasLeft
	case blas.Right:
		return C.CblasRight
	}
	panic("openblas: bad side")
}

func diag(d blas.Diag) C.enum_CBLAS_DIAG {
	switch d {
	case blas.NonUnit:
		return C.CblasNonUnit
	case blas.Unit:
		return C.CblasUnit
	}
	panic("openblas: bad diag")
}

// checkMat panics unless a row-major rows x cols matrix with leading
// dimension ld fits in a slice of length n.
func checkMat(name string, n, rows, cols, ld int) {
	if rows < 0 || cols < 0 {
		panic("openblas: negative dimension of " + name)
	}
	if ld < max(1, cols) {
		panic("openblas: bad leading dimension of " + name)
	}
	if rows > 0 && cols > 0 && n < (rows-1)*ld+cols {
		panic("openblas: slice " + name + " is too short")
	}
}

// checkVec panics unless a vector of length n with increment inc fits in a
// slice of length l.
func checkVec(name string, l, n, inc int) {
	if inc == 0 {
		panic("openblas: zero increment of " + name)
	}
	if n > 0 && l < 1+(n-1)*abs(inc) {
		panic("openblas: slice " + name + " is too short")
	}
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// dims returns the stored shape of op(A) where op(A) is r x c.
func dims(t blas.Transpose, r, c int) (int, int) {
	if isTrans(t) {
		return c, r
	}
	return r, c
}

// Dgemm computes C = alpha * op(A) * op(B) + beta * C.
func (Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ar, ac := dims(tA, m, k)
	br, bc := dims(tB, k, n)
	checkMat("A", len(a), ar, ac, lda)
	checkMat("B", len(b), br, bc, ldb)
	checkMat("C", len(c), m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dgemm(C.CblasRowMajor, trans(tA), trans(tB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.double(alpha), ptr(a), C.blasint(lda), ptr(b), C.blasint(ldb), C.double(beta), ptr(c), C.blasint(ldc))
}

// Dsyrk computes C = alpha * op(A) * op(A)ᵀ + beta * C for symmetric n x n C.
func (Implementation) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	ar, ac := dims(tA, n, k)
	checkMat("A", len(a), ar, ac, lda)
	checkMat("C", len(c), n, n, ldc)
	if n == 0 {
		return
	}
	C.cblas_dsyrk(C.CblasRowMajor, uplo(ul), trans(tA), C.blasint(n), C.blasint(k),
		C.double(alpha), ptr(a), C.blasint(lda), C.double(beta), ptr(c), C.blasint(ldc))
}

// Dsyr2k computes C = alpha * (op(A) op(B)ᵀ + op(B) op(A)ᵀ) + beta * C.
func (Implementation) Dsyr2k(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ar, ac := dims(tA, n, k)
	checkMat("A", len(a), ar, ac, lda)
	checkMat("B", len(b), ar, ac, ldb)
	checkMat("C", len(c), n, n, ldc)
	if n == 0 {
		return
	}
	C.cblas_dsyr2k(C.CblasRowMajor, uplo(ul), trans(tA), C.blasint(n), C.blasint(k),
		C.double(alpha), ptr(a), C.blasint(lda), ptr(b), C.blasint(ldb), C.double(beta), ptr(c), C.blasint(ldc))
}

// Dsymm computes C = alpha * A * B + beta * C (or B * A) for symmetric A.
func (Implementation) Dsymm(s blas.Side, ul blas.Uplo, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	na := n
	if side(s) == C.CblasLeft {
		na = m
	}
	uplo(ul)
	checkMat("A", len(a), na, na, lda)
	checkMat("B", len(b), m, n, ldb)
	checkMat("C", len(c), m, n, ldc)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dsymm(C.CblasRowMajor, side(s), uplo(ul), C.blasint(m), C.blasint(n),
		C.double(alpha), ptr(a), C.blasint(lda), ptr(b), C.blasint(ldb), C.double(beta), ptr(c), C.blasint(ldc))
}

// Dtrsm solves op(A) * X = alpha * B (or X * op(A)) for triangular A, in place in B.
func (Implementation) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	na := n
	if side(s) == C.CblasLeft {
		na = m
	}
	uplo(ul)
	diag(d)
	isTrans(tA)
	checkMat("A", len(a), na, na, lda)
	checkMat("B", len(b), m, n, ldb)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dtrsm(C.CblasRowMajor, side(s), uplo(ul), trans(tA), diag(d), C.blasint(m), C.blasint(n),
		C.double(alpha), ptr(a), C.blasint(lda), ptr(b), C.blasint(ldb))
}

// Dtrmm computes B = alpha * op(A) * B (or B * op(A)) for triangular A.
func (Implementation) Dtrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	na := n
	if side(s) == C.CblasLeft {
		na = m
	}
	uplo(ul)
	diag(d)
	isTrans(tA)
	checkMat("A", len(a), na, na, lda)
	checkMat("B", len(b), m, n, ldb)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dtrmm(C.CblasRowMajor, side(s), uplo(ul), trans(tA), diag(d), C.blasint(m), C.blasint(n),
		C.double(alpha), ptr(a), C.blasint(lda), ptr(b), C.blasint(ldb))
}

// Dgemv computes y = alpha * op(A) * x + beta * y.
func (Implementation) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	checkMat("A", len(a), m, n, lda)
	lx, ly := n, m
	if isTrans(tA) {
		lx, ly = m, n
	}
	checkVec("x", len(x), lx, incX)
	checkVec("y", len(y), ly, incY)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dgemv(C.CblasRowMajor, trans(tA), C.blasint(m), C.blasint(n), C.double(alpha), ptr(a), C.blasint(lda),
		ptr(x), C.blasint(incX), C.double(beta), ptr(y), C.blasint(incY))
}

// Dsymv computes y = alpha * A * x + beta * y for symmetric A.
func (Implementation) Dsymv(ul blas.Uplo, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	uplo(ul)
	checkMat("A", len(a), n, n, lda)
	checkVec("x", len(x), n, incX)
	checkVec("y", len(y), n, incY)
	if n == 0 {
		return
	}
	C.cblas_dsymv(C.CblasRowMajor, uplo(ul), C.blasint(n), C.double(alpha), ptr(a), C.blasint(lda),
		ptr(x), C.blasint(incX), C.double(beta), ptr(y), C.blasint(incY))
}

// Dtrsv solves op(A) * x = b for triangular A, in place in x.
func (Implementation) Dtrsv(ul blas.Uplo, tA blas.Transpose, d blas.Diag, n int, a []float64, lda int, x []float64, incX int) {
	uplo(ul)
	diag(d)
	isTrans(tA)
	checkMat("A", len(a), n, n, lda)
	checkVec("x", len(x), n, incX)
	if n == 0 {
		return
	}
	C.cblas_dtrsv(C.CblasRowMajor, uplo(ul), trans(tA), diag(d), C.blasint(n), ptr(a), C.blasint(lda), ptr(x), C.blasint(incX))
}

// Dtrmv computes x = op(A) * x for triangular A.
func (Implementation) Dtrmv(ul blas.Uplo, tA blas.Transpose, d blas.Diag, n int, a []float64, lda int, x []float64, incX int) {
	uplo(ul)
	diag(d)
	isTrans(tA)
	checkMat("A", len(a), n, n, lda)
	checkVec("x", len(x), n, incX)
	if n == 0 {
		return
	}
	C.cblas_dtrmv(C.CblasRowMajor, uplo(ul), trans(tA), diag(d), C.blasint(n), ptr(a), C.blasint(lda), ptr(x), C.blasint(incX))
}

// Dger computes A += alpha * x * yᵀ.
func (Implementation) Dger(m, n int, alpha float64, x []float64, incX int, y []float64, incY int, a []float64, lda int) {
	checkMat("A", len(a), m, n, lda)
	checkVec("x", len(x), m, incX)
	checkVec("y", len(y), n, incY)
	if m == 0 || n == 0 {
		return
	}
	C.cblas_dger(C.CblasRowMajor, C.blasint(m), C.blasint(n), C.double(alpha), ptr(x), C.blasint(incX),
		ptr(y), C.blasint(incY), ptr(a), C.blasint(lda))
}
