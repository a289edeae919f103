package torch

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// values returns the elements of x as float64; the test fails if it cannot.
func values(t *testing.T, x *Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// wantValues checks shape and elements of x exactly.
func wantValues(t *testing.T, what string, x *Tensor, shape []int64, want []float64) {
	t.Helper()
	if got := x.Shape(); !slices.Equal(got, shape) {
		t.Errorf("%s: shape %v, want %v (%v)", what, got, shape, x.Err())
		return
	}
	if got := values(t, x); !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

func TestRoundTripEveryDType(t *testing.T) {
	sc := NewScope()
	defer sc.Close()
	f32 := sc.Own(FromFloat32([]float32{1, 2.5, -3, 4, 5, 6}, 2, 3))
	if f32.DType() != Float32 || f32.Device() != CPU || f32.Dim() != 2 || f32.Numel() != 6 {
		t.Errorf("float32: dtype %v device %v dim %d numel %d", f32.DType(), f32.Device(), f32.Dim(), f32.Numel())
	}
	if got, err := f32.Float32s(); err != nil || !slices.Equal(got, []float32{1, 2.5, -3, 4, 5, 6}) {
		t.Errorf("float32 back: %v, %v", got, err)
	}
	if s := f32.String(); s != "Tensor[float32 [2 3] cpu]" {
		t.Errorf("String() = %q", s)
	}
	f64 := sc.Own(FromFloat64([]float64{0.1, -1e300}, 2))
	if got, err := f64.Float64s(); err != nil || !slices.Equal(got, []float64{0.1, -1e300}) {
		t.Errorf("float64 back: %v, %v", got, err)
	}
	i64 := sc.Own(FromInt64([]int64{3, -1, math.MaxInt64}, 3))
	if got, err := i64.Int64s(); err != nil || !slices.Equal(got, []int64{3, -1, math.MaxInt64}) {
		t.Errorf("int64 back: %v, %v", got, err)
	}
	b := sc.Own(FromBool([]bool{true, false}, 2))
	if got, err := b.Bools(); err != nil || !slices.Equal(got, []bool{true, false}) || b.DType() != Bool {
		t.Errorf("bool back: %v, %v (%v)", got, err, b.DType())
	}
	// Conversions on the way out.
	if got, err := f32.Int64s(); err != nil || !slices.Equal(got, []int64{1, 2, -3, 4, 5, 6}) {
		t.Errorf("float32 as int64: %v, %v", got, err)
	}
	wantValues(t, "bool as float64", b, []int64{2}, []float64{1, 0})
	// A scalar has no dimensions and one element.
	s := sc.Own(Scalar(7))
	if s.Dim() != 0 || s.Numel() != 1 {
		t.Errorf("scalar: dim %d numel %d", s.Dim(), s.Numel())
	}
	if v, err := s.Item(); err != nil || v != 7 {
		t.Errorf("scalar item %v, %v", v, err)
	}
	if _, err := f32.Item(); err == nil || !strings.Contains(err.Error(), "6 elements") {
		t.Errorf("item of 6 elements: %v", err)
	}
	// Empty tensors round-trip too.
	wantValues(t, "empty", sc.Own(FromFloat32(nil, 0, 3)), []int64{0, 3}, []float64{})
}

func TestFromSliceRejectsBadShapes(t *testing.T) {
	for _, c := range []struct {
		x    *Tensor
		want string
	}{
		{FromFloat32([]float32{1, 2}, 3), "needs 3 values"},
		{FromFloat32([]float32{1, 2}, -1, -2), "negative dimension"},
		{FromFloat32([]float32{1}, make([]int64, 17)...), "needs 0 values"},
		{FromFloat64([]float64{1}, slices.Repeat([]int64{1}, 17)...), "17 dimensions"},
	} {
		err := c.x.Err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error containing %q, got %v", c.want, err)
		}
		if c.x.Shape() != nil || c.x.String() != "Tensor[error: "+err.Error()+"]" {
			t.Errorf("error tensor: shape %v, %s", c.x.Shape(), c.x)
		}
	}
}

func TestAutogradMatMul(t *testing.T) {
	sc := NewScope()
	defer sc.Close()
	w := sc.Own(FromFloat64([]float64{1, 2, 3, 4}, 2, 2)).SetRequiresGrad(true)
	x := sc.Own(FromFloat64([]float64{1, 1}, 1, 2))
	if !w.RequiresGrad() || x.RequiresGrad() {
		t.Fatalf("requires grad: w %v x %v", w.RequiresGrad(), x.RequiresGrad())
	}
	if g, err := w.Grad(); err != nil || g != nil {
		t.Fatalf("gradient before backward: %v, %v", g, err)
	}
	y := x.MatMul(w).Square().Sum() // (1+3)^2 + (2+4)^2
	if v, err := y.Item(); err != nil || v != 52 {
		t.Fatalf("y = %v, %v", v, err)
	}
	if err := y.BackwardWith(nil, true); err != nil {
		t.Fatal(err)
	}
	g, err := w.Grad()
	if err != nil || g == nil {
		t.Fatalf("grad %v %v", g, err)
	}
	defer g.Close()
	wantValues(t, "dy/dw", g, []int64{2, 2}, []float64{8, 12, 8, 12})
	// The graph was retained: a second pass accumulates.
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	g2, err := w.Grad()
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	wantValues(t, "accumulated", g2, []int64{2, 2}, []float64{16, 24, 16, 24})
	if err := w.ZeroGrad(); err != nil {
		t.Fatal(err)
	}
	if g3, err := w.Grad(); err != nil || g3 != nil {
		t.Errorf("gradient after ZeroGrad: %v, %v", g3, err)
	}
	if err := y.Backward(); err == nil {
		t.Error("third backward through a freed graph succeeded")
	}
}

func TestErrorsNameTheOperation(t *testing.T) {
	a := FromFloat32([]float32{1, 2, 3}, 1, 3)
	b := FromFloat32([]float32{1, 2}, 1, 2)
	defer a.Close()
	defer b.Close()
	c := a.MatMul(b)
	err := c.Err()
	var te *Error
	if !errors.As(err, &te) || te.Op != "aten::matmul" || !strings.Contains(err.Error(), "torch: aten::matmul: ") {
		t.Fatalf("want an *Error naming aten::matmul, got %v", err)
	}
	// The error is sticky through later ops, unchanged.
	if err2 := c.Exp().Add(a).Sum().Err(); err2 != err {
		t.Fatalf("error not passed on unchanged: %v", err2)
	}
	if _, err2 := c.Float32s(); err2 != err {
		t.Fatalf("Float32s: %v", err2)
	}
	if err2 := c.Backward(); err2 != err {
		t.Fatalf("Backward: %v", err2)
	}
	// PyTorch promotes int64 + bool to int64 and sqrt of an integer to float32.
	i := FromInt64([]int64{1}, 1).Add(FromBool([]bool{true}, 1)).Sqrt()
	if i.DType() != Float32 {
		t.Errorf("sqrt(int64 + bool) has dtype %v, want float32", i.DType())
	}
	if v, err := i.Float32s(); err != nil || len(v) != 1 || v[0] != float32(math.Sqrt2) {
		t.Errorf("sqrt(1 + true) = %v, %v", v, err)
	}
	if _, err := ParseDevice("tpu"); err == nil {
		t.Fatal("unknown device accepted")
	}
	a.Close()
	a.Close() // idempotent
	if err := a.Exp().Err(); err == nil || !errors.Is(err, errClosed) {
		t.Fatalf("closed tensor used: %v", err)
	}
	var nilT *Tensor
	if nilT.Err() == nil {
		t.Fatal("nil tensor has no error")
	}
	nilT.Close()
}

func TestSplitSortAndNoGrad(t *testing.T) {
	x := FromFloat32([]float32{1, 2, 3, 4, 5}, 5).SetRequiresGrad(true)
	defer x.Close()
	parts, err := x.Split(2, 0)
	if err != nil || len(parts) != 3 {
		t.Fatalf("split %v %v", parts, err)
	}
	defer closeTensors(parts)
	wantValues(t, "part 0", parts[0], []int64{2}, []float64{1, 2})
	wantValues(t, "part 2", parts[2], []int64{1}, []float64{5})
	NoGrad(func() {
		NoGrad(func() {})
		if GradEnabled() {
			t.Error("inner NoGrad re-enabled gradients")
		}
		y := x.MulScalar(2)
		defer y.Close()
		if y.RequiresGrad() {
			t.Error("no-grad result requires grad")
		}
	})
	y := x.MulScalar(2)
	defer y.Close()
	if !GradEnabled() || !y.RequiresGrad() {
		t.Error("grad mode not restored")
	}
	vals, idx := FromFloat32([]float32{3, 1, 2}, 3).Sort(0, false)
	defer vals.Close()
	defer idx.Close()
	wantValues(t, "sorted", vals, []int64{3}, []float64{1, 2, 3})
	wantValues(t, "indices", idx, []int64{3}, []float64{1, 2, 0})
	v, ix := FromFloat32([]float32{1}, 1).Sort(5, false)
	if v.Err() == nil || ix.Err() != v.Err() {
		t.Errorf("sort along a missing dim: %v, %v", v.Err(), ix.Err())
	}
}

func TestScopeOwnsDerivedTensors(t *testing.T) {
	settle()
	live := LiveTensors()
	param := FromFloat32([]float32{2}, 1) // outside any scope, like a module parameter
	defer param.Close()
	sc := NewScope()
	in := sc.Own(FromFloat32([]float32{1, 2}, 2))
	if sc.Own(in) != in || sc.Len() != 1 {
		t.Fatalf("owning twice: %d tensors", sc.Len())
	}
	out := param.Mul(in).Exp() // joins in's scope though param comes first
	if out.Scope() != sc || param.Scope() != nil || sc.Len() != 3 {
		t.Fatalf("scopes: out %p param %p, %d tensors", out.Scope(), param.Scope(), sc.Len())
	}
	fresh := Zeros([]int64{2}, Float32, CPU) // factories join no scope
	if fresh.Scope() != nil {
		t.Error("factory tensor joined a scope")
	}
	fresh.Close()
	out.Close() // closing a scoped tensor early is fine
	sc.Close()
	if sc.Len() != 0 || out.Err() == nil || in.Err() == nil {
		t.Fatalf("after Close: %d tensors, out %v, in %v", sc.Len(), out.Err(), in.Err())
	}
	if got := LiveTensors() - live; got != 1 {
		t.Errorf("%d tensors live after the scope closed, want 1 (param)", got)
	}
	// The scope can be used again.
	sc.Own(FromFloat32([]float32{1}, 1))
	sc.Close()
	if got := LiveTensors() - live; got != 1 {
		t.Errorf("reused scope left %d tensors live, want 1", got)
	}
}

func TestScopeStepsAndAdopt(t *testing.T) {
	settle()
	live := LiveTensors()
	long := NewScope()
	table := long.Own(FromFloat32([]float32{1, 2, 3}, 3))
	before := table.Mul(table) // made before the mark: stays

	mark := long.Mark()
	view := table.Narrow(0, 0, 2)
	grown := long.Own(Zeros([]int64{6}, Float32, CPU))
	long.Keep(grown)
	if view.Scope() != long || long.Len() != 4 {
		t.Fatalf("step tensors: view in %p, %d tensors in the scope", view.Scope(), long.Len())
	}
	long.ReleaseSince(mark)
	if view.Err() == nil || grown.Err() != nil || before.Err() != nil || table.Err() != nil {
		t.Fatalf("after ReleaseSince: view %v, kept %v, earlier %v, table %v", view.Err(), grown.Err(), before.Err(), table.Err())
	}
	if long.Len() != 3 {
		t.Errorf("%d tensors left in the scope, want 3", long.Len())
	}
	long.ReleaseSince(long.Mark()) // nothing joined since
	if long.Len() != 3 {
		t.Errorf("an empty step changed the scope to %d tensors", long.Len())
	}
	// A tensor from before the mark closed during the step leaves the
	// step's tensors to be released all the same.
	old := long.Own(FromFloat32([]float32{1}, 1))
	mark = long.Mark()
	tmp := table.Neg()
	old.Close()
	long.ReleaseSince(mark)
	if tmp.Err() == nil || long.Len() != 3 {
		t.Errorf("after an early close before the mark: step tensor %v, %d tensors in the scope, want 3", tmp.Err(), long.Len())
	}

	// A product of the long-lived table joins its scope; adopted, it goes
	// with the step's scope instead.
	step := NewScope()
	sum := step.Adopt(table.Add(table))
	if sum.Scope() != step || step.Len() != 1 || long.Len() != 3 {
		t.Fatalf("adopted: in %p, step %d, long %d tensors", sum.Scope(), step.Len(), long.Len())
	}
	step.Close()
	if sum.Err() == nil || long.Len() != 3 {
		t.Errorf("step closed: sum %v, long scope %d tensors", sum.Err(), long.Len())
	}

	// Closing a scoped tensor takes it out of its scope, and an op's
	// dropped results (EmbeddingBagSum keeps one of four) leave none behind.
	early := table.Exp()
	early.Close()
	idx, offsets := long.Own(FromInt64([]int64{0, 2}, 2)), long.Own(FromInt64([]int64{0}, 1))
	bag := table.Reshape(3, 1).EmbeddingBagSum(idx, offsets)
	if long.Len() != 7 { // 3, the indices, offsets, reshaped table and sum
		t.Errorf("%d tensors in the scope after an early close and a bag sum, want 7", long.Len())
	}
	wantValues(t, "bag sum", bag, []int64{1, 1}, []float64{4})
	long.Close()
	if got := LiveTensors() - live; got != 0 {
		t.Errorf("%d tensors live after the scopes closed", got)
	}
}

func TestConversionsAndSetData(t *testing.T) {
	sc := NewScope()
	defer sc.Close()
	x := sc.Own(FromFloat64([]float64{1.5, -2.5}, 2))
	wantValues(t, "to int64", x.ToDType(Int64), []int64{2}, []float64{1, -2})
	same := x.To(CPU)
	if same.Scope() != sc || same.DType() != Float64 {
		t.Errorf("To(CPU): %v in scope %p", same, same.Scope())
	}
	p := sc.Own(FromFloat32([]float32{0, 0, 0}, 3))
	if err := p.SetData(sc.Own(FromFloat32([]float32{7, 8}, 2))); err != nil {
		t.Fatal(err)
	}
	wantValues(t, "after SetData", p, []int64{2}, []float64{7, 8})
	if err := p.SetData(ErrTensor(errClosed)); !errors.Is(err, errClosed) {
		t.Errorf("SetData from an error tensor: %v", err)
	}
}
