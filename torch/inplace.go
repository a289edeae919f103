package torch

// In-place updates, for optimisers and buffers. They modify t and return an error.

var (
	opMul_     = newOp("aten::mul_", "Scalar")
	opAdd_     = newOp("aten::add_", "Tensor")
	opAddcmul_ = newOp("aten::addcmul_", "")
	opAddcdiv_ = newOp("aten::addcdiv_", "")
	opCopy_    = newOp("aten::copy_", "")
	opFill_    = newOp("aten::fill_", "Scalar")
	opZero_    = newOp("aten::zero_", "")
	opUniform_ = newOp("aten::uniform_", "")
	opNormal_  = newOp("aten::normal_", "")
)

// MulScalar_ sets t = t * s.
func (t *Tensor) MulScalar_(s float64) error { return opMul_.inPlace(t, s) }

// Add_ sets t = t + alpha * o.
func (t *Tensor) Add_(o *Tensor, alpha float64) error {
	return opAdd_.inPlace(t, o, kw{"alpha", alpha})
}

// Addcmul_ sets t = t + value * a * b.
func (t *Tensor) Addcmul_(a, b *Tensor, value float64) error {
	return opAddcmul_.inPlace(t, a, b, kw{"value", value})
}

// Addcdiv_ sets t = t + value * a / b.
func (t *Tensor) Addcdiv_(a, b *Tensor, value float64) error {
	return opAddcdiv_.inPlace(t, a, b, kw{"value", value})
}

// Copy_ copies the values of src (broadcast, converted) into t.
func (t *Tensor) Copy_(src *Tensor) error { return opCopy_.inPlace(t, src) }

// Fill_ sets every element of t to v.
func (t *Tensor) Fill_(v float64) error { return opFill_.inPlace(t, v) }

// Zero_ sets every element of t to zero.
func (t *Tensor) Zero_() error { return opZero_.inPlace(t) }

// Uniform_ fills t with samples uniform in [lo, hi).
func (t *Tensor) Uniform_(lo, hi float64) error { return opUniform_.inPlace(t, lo, hi) }

// Normal_ fills t with normal samples.
func (t *Tensor) Normal_(mean, std float64) error { return opNormal_.inPlace(t, mean, std) }

var opAddScalar_ = newOp("aten::add_", "Scalar")

// AddScalar_ sets t = t + s.
func (t *Tensor) AddScalar_(s float64) error { return opAddScalar_.inPlace(t, s) }

// AddInt_ sets t = t + n, for integer tensors such as step counters.
func (t *Tensor) AddInt_(n int64) error { return opAddScalar_.inPlace(t, n) }

var opAdamStep_ = newOp("tlbo::adam_step_", "")

// AdamStep_ applies one Adam update to param in place, with its moment
// estimates expAvg and expAvgSq (updated in place too) and the step's bias
// corrections bc1 = 1 - beta1^step, bc2 = 1 - beta2^step:
//
//	m = beta1 m + (1 - beta1) grad;  v = beta2 v + (1 - beta2) grad^2
//	param -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps)
//
// One pass over the four tensors on the CPU when they are contiguous float
// tensors (native/ops.cpp); ATen's in-place operators elsewhere.
func AdamStep_(param, grad, expAvg, expAvgSq *Tensor, lr, beta1, beta2, eps, bc1, bc2 float64) error {
	return opAdamStep_.inPlace(param, grad, expAvg, expAvgSq, lr, beta1, beta2, eps, bc1, bc2)
}
