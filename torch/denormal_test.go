package torch

import (
	"runtime"
	"testing"
)

// Operands whose product is subnormal: 1e-30 * 1e-10 = 1e-40 in float32
// (the smallest normal is 1.2e-38), 1e-300 * 1e-10 = 1e-310 in float64.
const (
	normal32, normal64, shrink = 1e-30, 1e-300, 1e-10
	subnormal32                = 1e-40
)

//go:noinline
func goMul32(a, b float32) float32 { return a * b }

//go:noinline
func goMul64(a, b float64) float64 { return a * b }

// products returns libtorch's float32 and float64 products that are
// subnormal in IEEE arithmetic, and a stored float32 subnormal times one.
func products(t *testing.T, n int64) (p32, p64, stored []float64) {
	t.Helper()
	sc := NewScope()
	defer sc.Close()
	fill := func(v float64, dt DType) *Tensor { return sc.Own(Full([]int64{n}, v, dt, CPU)) }
	p32 = values(t, sc.Own(fill(normal32, Float32).MulScalar(shrink)))
	p64 = values(t, sc.Own(fill(normal64, Float64).MulScalar(shrink)))
	s := make([]float32, n)
	for i := range s {
		s[i] = subnormal32
	}
	stored = values(t, sc.Own(sc.Own(FromFloat32(s, n)).MulScalar(1)))
	return p32, p64, stored
}

// allZero reports whether every element of v is zero.
func allZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// TestFlushDenormal checks both modes: flushing turns subnormal results and
// inputs of libtorch's work into zeros, on the calling thread and on
// libtorch's workers, while Go's own arithmetic on the same OS thread still
// yields IEEE subnormals after the call; keeping them gives the IEEE results.
func TestFlushDenormal(t *testing.T) {
	if !SetFlushDenormal(true) {
		t.Skip("no flush-to-zero mode on", runtime.GOARCH)
	}
	defer SetFlushDenormal(true)
	if !FlushDenormal() {
		t.Fatal("FlushDenormal() = false after SetFlushDenormal(true)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	p32, p64, stored := products(t, 4)
	if !allZero(p32) || !allZero(p64) || !allZero(stored) {
		t.Errorf("flushing: float32 %v, float64 %v, stored subnormal %v; want zeros", p32, p64, stored)
	}
	if got := goMul32(normal32, shrink); got == 0 {
		t.Error("Go's float32 product 1e-30 * 1e-10 is 0 after a call into libtorch: the caller's mode was not restored")
	}

	// libtorch's workers, which start inside a call, flush as well.
	threads := NumThreads()
	if err := SetNumThreads(2); err != nil {
		t.Fatal(err)
	}
	defer SetNumThreads(threads)
	if p32, p64, stored := products(t, 1<<20); !allZero(p32) || !allZero(p64) || !allZero(stored) {
		t.Error("flushing on two threads: a subnormal survived")
	}

	// Four elements run on the calling thread, whose mode follows the flag.
	SetFlushDenormal(false)
	if FlushDenormal() {
		t.Fatal("FlushDenormal() = true after SetFlushDenormal(false)")
	}
	p32, p64, stored = products(t, 4)
	want32, want64 := float64(goMul32(normal32, shrink)), goMul64(normal64, shrink)
	if want32 == 0 || want64 == 0 {
		t.Fatalf("Go's products are %v and %v, want subnormals", want32, want64)
	}
	for i := range p32 {
		if p32[i] != want32 || p64[i] != want64 || stored[i] != float64(float32(subnormal32)) {
			t.Fatalf("keeping subnormals: float32 %v, float64 %v, stored %v; want %v, %v, %v",
				p32[i], p64[i], stored[i], want32, want64, float32(subnormal32))
		}
	}
}
