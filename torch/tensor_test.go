package torch

import (
	"math"
	"strings"
	"testing"
)

func mustFloat32s(t *testing.T, x *Tensor) []float32 {
	t.Helper()
	v, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRoundTripAndShape(t *testing.T) {
	x := FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	defer x.Close()
	if got := x.Shape(); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("shape %v", got)
	}
	if x.DType() != Float32 || x.Device() != CPU {
		t.Fatalf("dtype %v device %v", x.DType(), x.Device())
	}
	v := mustFloat32s(t, x)
	if v[5] != 6 {
		t.Fatalf("got %v", v)
	}
	d, err := x.Float64s()
	if err != nil || d[4] != 5 {
		t.Fatalf("float64 copy %v %v", d, err)
	}
	i := FromInt64([]int64{3, -1}, 2)
	iv, err := i.Int64s()
	if err != nil || iv[1] != -1 {
		t.Fatalf("int64 %v %v", iv, err)
	}
	b := FromBool([]bool{true, false}, 2)
	bv, err := b.Bools()
	if err != nil || !bv[0] || bv[1] {
		t.Fatalf("bool %v %v", bv, err)
	}
}

func TestAutogradMatMul(t *testing.T) {
	sc := NewScope()
	defer sc.Close()
	w := sc.Own(FromFloat64([]float64{1, 2, 3, 4}, 2, 2)).SetRequiresGrad(true)
	x := sc.Own(FromFloat64([]float64{1, 1}, 1, 2))
	y := x.MatMul(w).Square().Sum() // (1+3)^2 + (2+4)^2
	if v, err := y.Item(); err != nil || v != 52 {
		t.Fatalf("y = %v, %v", v, err)
	}
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	g, err := w.Grad()
	if err != nil || g == nil {
		t.Fatalf("grad %v %v", g, err)
	}
	defer g.Close()
	gv, _ := g.Float64s()
	want := []float64{8, 12, 8, 12}
	for k := range want {
		if math.Abs(gv[k]-want[k]) > 1e-12 {
			t.Fatalf("grad %v want %v", gv, want)
		}
	}
}

func TestErrorsNameTheOperation(t *testing.T) {
	a := FromFloat32([]float32{1, 2, 3}, 1, 3)
	b := FromFloat32([]float32{1, 2}, 1, 2)
	c := a.MatMul(b)
	err := c.Err()
	if err == nil || !strings.Contains(err.Error(), "aten::matmul") {
		t.Fatalf("want matmul error, got %v", err)
	}
	// The error is sticky through later ops.
	if err2 := c.Exp().Sum().Err(); err2 == nil || !strings.Contains(err2.Error(), "aten::matmul") {
		t.Fatalf("error not propagated: %v", err2)
	}
	if _, err := FromFloat32([]float32{1, 2}, 3).Float32s(); err == nil {
		t.Fatal("bad shape accepted")
	}
	if err := FromInt64([]int64{1}, 1).Add(FromBool([]bool{true}, 1)).Sqrt().Err(); err != nil {
		t.Logf("int+bool sqrt: %v", err)
	}
	if _, err := ParseDevice("tpu"); err == nil {
		t.Fatal("unknown device accepted")
	}
	a.Close()
	if err := a.Exp().Err(); err == nil {
		t.Fatal("closed tensor used without error")
	}
}

func TestSplitAndNoGrad(t *testing.T) {
	x := FromFloat32([]float32{1, 2, 3, 4, 5}, 5).SetRequiresGrad(true)
	parts, err := x.Split(2, 0)
	if err != nil || len(parts) != 3 {
		t.Fatalf("split %v %v", parts, err)
	}
	NoGrad(func() {
		y := x.MulScalar(2)
		if y.RequiresGrad() {
			t.Error("no-grad result requires grad")
		}
	})
	if !x.MulScalar(2).RequiresGrad() {
		t.Error("grad mode not restored")
	}
	vals, idx := FromFloat32([]float32{3, 1, 2}, 3).Sort(0, false)
	iv, _ := idx.Int64s()
	if mustFloat32s(t, vals)[0] != 1 || iv[0] != 1 {
		t.Fatalf("sort %v %v", mustFloat32s(t, vals), iv)
	}
}
