package openblas

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

func approxEqual(t *testing.T, name string, got, want []float64, tol float64) {
	t.Helper()
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v", name, i, got[i], want[i])
		}
	}
}

func TestRoutingActive(t *testing.T) {
	if _, ok := blas64.Implementation().(Implementation); !ok {
		t.Fatalf("blas64 implementation is %T, want openblas.Implementation", blas64.Implementation())
	}
	if Threads() < 1 {
		t.Fatalf("Threads() = %d", Threads())
	}
}

func TestSetThreads(t *testing.T) {
	old := Threads()
	defer SetThreads(old)
	SetThreads(1)
	if got := Threads(); got != 1 {
		t.Fatalf("after SetThreads(1), Threads() = %d", got)
	}
}

// TestOneThread checks that OneThread gives one thread and restores the count.
func TestOneThread(t *testing.T) {
	old := Threads()
	defer SetThreads(old)
	SetThreads(2)
	restore := OneThread()
	if got := Threads(); got != 1 {
		t.Fatalf("under OneThread, Threads() = %d", got)
	}
	restore()
	if got := Threads(); got != 2 {
		t.Fatalf("after OneThread's restore, Threads() = %d, want 2", got)
	}
}

func TestThreadsFromEnv(t *testing.T) {
	t.Setenv("TLBO_BLAS_THREADS", "3")
	if n, err := threadsFromEnv(); err != nil || n != 3 {
		t.Fatalf("threadsFromEnv = %d, %v; want 3", n, err)
	}
	t.Setenv("TLBO_BLAS_THREADS", "zero")
	if _, err := threadsFromEnv(); err == nil {
		t.Fatal("want an error for a non-numeric setting")
	}
}

// TestLevel3MatchesGonum compares every forwarded routine with gonum's
// pure-Go routine on random data, with padded leading dimensions.
func TestLevel3MatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ob, gn := Implementation{}, gonum.Implementation{}
	const m, n, k, pad = 7, 5, 6, 2
	const tol = 1e-12
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			ar, ac := dims(tA, m, k)
			br, bc := dims(tB, k, n)
			a, b := randSlice(rng, ar*(ac+pad)), randSlice(rng, br*(bc+pad))
			c1 := randSlice(rng, m*(n+pad))
			c2 := append([]float64(nil), c1...)
			ob.Dgemm(tA, tB, m, n, k, 0.7, a, ac+pad, b, bc+pad, 0.3, c1, n+pad)
			gn.Dgemm(tA, tB, m, n, k, 0.7, a, ac+pad, b, bc+pad, 0.3, c2, n+pad)
			approxEqual(t, "Dgemm", c1, c2, tol)
		}
		for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
			ar, ac := dims(tA, n, k)
			a, b := randSlice(rng, ar*(ac+pad)), randSlice(rng, ar*(ac+pad))
			c1 := randSlice(rng, n*(n+pad))
			c2 := append([]float64(nil), c1...)
			ob.Dsyrk(ul, tA, n, k, 1.3, a, ac+pad, 0.5, c1, n+pad)
			gn.Dsyrk(ul, tA, n, k, 1.3, a, ac+pad, 0.5, c2, n+pad)
			approxEqual(t, "Dsyrk", c1, c2, tol)
			ob.Dsyr2k(ul, tA, n, k, 1.3, a, ac+pad, b, ac+pad, 0.5, c1, n+pad)
			gn.Dsyr2k(ul, tA, n, k, 1.3, a, ac+pad, b, ac+pad, 0.5, c2, n+pad)
			approxEqual(t, "Dsyr2k", c1, c2, tol)
			for _, s := range []blas.Side{blas.Left, blas.Right} {
				na := n
				if s == blas.Left {
					na = m
				}
				tri := randSlice(rng, na*(na+pad))
				for i := 0; i < na; i++ {
					tri[i*(na+pad)+i] += 4 // well conditioned
				}
				for _, d := range []blas.Diag{blas.NonUnit, blas.Unit} {
					b1 := randSlice(rng, m*(n+pad))
					b2 := append([]float64(nil), b1...)
					ob.Dtrsm(s, ul, tA, d, m, n, 0.9, tri, na+pad, b1, n+pad)
					gn.Dtrsm(s, ul, tA, d, m, n, 0.9, tri, na+pad, b2, n+pad)
					approxEqual(t, "Dtrsm", b1, b2, tol)
					ob.Dtrmm(s, ul, tA, d, m, n, 0.9, tri, na+pad, b1, n+pad)
					gn.Dtrmm(s, ul, tA, d, m, n, 0.9, tri, na+pad, b2, n+pad)
					approxEqual(t, "Dtrmm", b1, b2, tol)
				}
				if tA == blas.NoTrans {
					bb := randSlice(rng, m*(n+pad))
					c1 := randSlice(rng, m*(n+pad))
					c2 := append([]float64(nil), c1...)
					ob.Dsymm(s, ul, m, n, 0.4, tri, na+pad, bb, n+pad, 0.2, c1, n+pad)
					gn.Dsymm(s, ul, m, n, 0.4, tri, na+pad, bb, n+pad, 0.2, c2, n+pad)
					approxEqual(t, "Dsymm", c1, c2, tol)
				}
			}
		}
	}
}

func TestLevel2MatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ob, gn := Implementation{}, gonum.Implementation{}
	const m, n, pad = 6, 4, 3
	const tol = 1e-12
	a := randSlice(rng, m*(n+pad))
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, inc := range []int{1, 2, -2} {
			lx, ly := n, m
			if tA == blas.Trans {
				lx, ly = m, n
			}
			x := randSlice(rng, 1+(lx-1)*abs(inc))
			y1 := randSlice(rng, 1+(ly-1)*abs(inc))
			y2 := append([]float64(nil), y1...)
			ob.Dgemv(tA, m, n, 0.6, a, n+pad, x, inc, 0.1, y1, inc)
			gn.Dgemv(tA, m, n, 0.6, a, n+pad, x, inc, 0.1, y2, inc)
			approxEqual(t, "Dgemv", y1, y2, tol)
		}
	}
	sq := randSlice(rng, n*(n+pad))
	for i := 0; i < n; i++ {
		sq[i*(n+pad)+i] += 4
	}
	for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
		x := randSlice(rng, n)
		y1 := randSlice(rng, n)
		y2 := append([]float64(nil), y1...)
		ob.Dsymv(ul, n, 1.1, sq, n+pad, x, 1, 0.3, y1, 1)
		gn.Dsymv(ul, n, 1.1, sq, n+pad, x, 1, 0.3, y2, 1)
		approxEqual(t, "Dsymv", y1, y2, tol)
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			x1 := randSlice(rng, n)
			x2 := append([]float64(nil), x1...)
			ob.Dtrsv(ul, tA, blas.NonUnit, n, sq, n+pad, x1, 1)
			gn.Dtrsv(ul, tA, blas.NonUnit, n, sq, n+pad, x2, 1)
			approxEqual(t, "Dtrsv", x1, x2, tol)
			ob.Dtrmv(ul, tA, blas.Unit, n, sq, n+pad, x1, 1)
			gn.Dtrmv(ul, tA, blas.Unit, n, sq, n+pad, x2, 1)
			approxEqual(t, "Dtrmv", x1, x2, tol)
		}
	}
	x, y := randSlice(rng, m), randSlice(rng, n)
	a2 := append([]float64(nil), a...)
	ob.Dger(m, n, 0.5, x, 1, y, 1, a, n+pad)
	gn.Dger(m, n, 0.5, x, 1, y, 1, a2, n+pad)
	approxEqual(t, "Dger", a, a2, tol)
}

func TestCholeskyMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 90 // above gonum's block size, so the blocked path runs too
	g := mat.NewDense(n, n, randSlice(rng, n*n))
	var s mat.SymDense
	s.SymOuterK(1, g)
	for i := 0; i < n; i++ {
		s.SetSym(i, i, s.At(i, i)+1)
	}
	var chol mat.Cholesky
	if !chol.Factorize(&s) {
		t.Fatal("Cholesky of a positive definite matrix failed")
	}
	var l mat.TriDense
	chol.LTo(&l)
	var back mat.Dense
	back.Mul(&l, l.T())
	if !mat.EqualApprox(&back, &s, 1e-9) {
		t.Fatal("L Lᵀ does not reproduce the matrix")
	}
	var inv mat.SymDense
	if err := chol.InverseTo(&inv); err != nil {
		t.Fatal(err)
	}
	var id mat.Dense
	id.Mul(&inv, &s)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(id.At(i, j)-want) > 1e-8 {
				t.Fatalf("A⁻¹A[%d,%d] = %v", i, j, id.At(i, j))
			}
		}
	}
	for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
		data := append([]float64(nil), s.RawSymmetric().Data...)
		data[0] = -1 // not positive definite
		if (Lapack{}).Dpotrf(ul, n, data, n) {
			t.Fatal("Dpotrf reported success on an indefinite matrix")
		}
	}
}

func TestShortSlicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("want a panic for a short slice")
		}
	}()
	Implementation{}.Dgemm(blas.NoTrans, blas.NoTrans, 3, 3, 3, 1, make([]float64, 8), 3, make([]float64, 9), 3, 0, make([]float64, 9), 3)
}

// BenchmarkDgemm1024 reports the rate of a 1024 x 1024 product; compare with
// BenchmarkDgemm1024Gonum for the pure-Go rate.
func BenchmarkDgemm1024(b *testing.B) { benchDgemm(b, Implementation{}) }

// BenchmarkDgemm1024Gonum is the pure-Go baseline of BenchmarkDgemm1024.
func BenchmarkDgemm1024Gonum(b *testing.B) { benchDgemm(b, gonum.Implementation{}) }

func benchDgemm(b *testing.B, impl blas.Float64) {
	const n = 1024
	rng := rand.New(rand.NewPCG(1, 1))
	x, y, z := randSlice(rng, n*n), randSlice(rng, n*n), make([]float64, n*n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		impl.Dgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, x, n, y, n, 0, z, n)
	}
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func TestCoreTypeNotBelowCPU(t *testing.T) {
	if v, ok := os.LookupEnv("OPENBLAS_CORETYPE"); ok {
		t.Skipf("OPENBLAS_CORETYPE=%s set by the user", v)
	}
	if got, best := CoreName(), bestCore(); coreTier(got) < coreTier(best) {
		t.Fatalf("OpenBLAS uses %s kernels; the CPU supports %s", got, best)
	}
	t.Logf("OpenBLAS kernels: %s, threads: %d", CoreName(), Threads())
}

func TestTrtriMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 70
	for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
		for _, d := range []blas.Diag{blas.NonUnit, blas.Unit} {
			a := randSlice(rng, n*(n+2))
			for i := 0; i < n; i++ {
				a[i*(n+2)+i] += 8
			}
			b := append([]float64(nil), a...)
			if !(Lapack{}).Dtrtri(ul, d, n, a, n+2) || !(gonumlapack.Implementation{}).Dtrtri(ul, d, n, b, n+2) {
				t.Fatal("Dtrtri failed on a nonsingular matrix")
			}
			approxEqual(t, "Dtrtri", a, b, 1e-10)
		}
	}
}

// randBand returns a diagonally dominant symmetric band matrix with kd
// off-diagonals in row-major band storage with leading dimension ldab.
func randBand(rng *rand.Rand, n, kd, ldab int) []float64 {
	ab := randSlice(rng, n*ldab)
	for i := 0; i < n; i++ {
		ab[i*ldab+kd] += 4 * float64(kd+1) // Lower: the diagonal is the last stored entry
	}
	return ab
}

func TestBandCholeskyMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n, kd = 90, 7
	for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
		for _, nrhs := range []int{1, 3} {
			ldab := kd + 2
			ab := randBand(rng, n, kd, ldab)
			if ul == blas.Upper { // move the big diagonal to the first stored entry
				for i := 0; i < n; i++ {
					ab[i*ldab], ab[i*ldab+kd] = ab[i*ldab+kd], ab[i*ldab]
				}
			}
			ab2 := append([]float64(nil), ab...)
			if !(Lapack{}).Dpbtrf(ul, n, kd, ab, ldab) || !(gonumlapack.Implementation{}).Dpbtrf(ul, n, kd, ab2, ldab) {
				t.Fatal("Dpbtrf failed on a positive definite band matrix")
			}
			approxEqual(t, "Dpbtrf", ab, ab2, 1e-10)
			ldb := nrhs + 1
			b := randSlice(rng, n*ldb)
			b2 := append([]float64(nil), b...)
			Lapack{}.Dpbtrs(ul, n, kd, nrhs, ab, ldab, b, ldb)
			gonumlapack.Implementation{}.Dpbtrs(ul, n, kd, nrhs, ab2, ldab, b2, ldb)
			approxEqual(t, "Dpbtrs", b, b2, 1e-10)
		}
		ab := randBand(rng, n, kd, kd+1)
		ab[5*(kd+1)+kd] = -1
		if ul == blas.Upper {
			ab[5*(kd+1)] = -1
		}
		if (Lapack{}).Dpbtrf(ul, n, kd, ab, kd+1) {
			t.Fatal("Dpbtrf reported success on an indefinite matrix")
		}
	}
}
