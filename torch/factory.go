package torch

// Factory functions make new tensors on a device; they belong to no scope
// (adopt them with Scope.Own).

var (
	opZeros   = newOp("aten::zeros", "")
	opOnes    = newOp("aten::ones", "")
	opFull    = newOp("aten::full", "")
	opArange  = newOp("aten::arange", "start_step")
	opEye     = newOp("aten::eye", "")
	opRandn   = newOp("aten::randn", "")
	opRand    = newOp("aten::rand", "")
	opRandint = newOp("aten::randint", "low")
)

func factoryKw(dtype DType, dev Device) []any {
	return []any{kw{"dtype", dtype}, kw{"device", dev}}
}

// Zeros returns a tensor of zeros.
func Zeros(shape []int64, dtype DType, dev Device) *Tensor {
	return opZeros.tensor(append([]any{shape}, factoryKw(dtype, dev)...)...)
}

// Ones returns a tensor of ones.
func Ones(shape []int64, dtype DType, dev Device) *Tensor {
	return opOnes.tensor(append([]any{shape}, factoryKw(dtype, dev)...)...)
}

// Full returns a tensor filled with v.
func Full(shape []int64, v float64, dtype DType, dev Device) *Tensor {
	return opFull.tensor(append([]any{shape, v}, factoryKw(dtype, dev)...)...)
}

// Arange returns start, start+step, ... below end.
func Arange(start, end, step float64, dtype DType, dev Device) *Tensor {
	return opArange.tensor(append([]any{start, end, step}, factoryKw(dtype, dev)...)...)
}

// Eye returns the n x n identity matrix.
func Eye(n int64, dtype DType, dev Device) *Tensor {
	return opEye.tensor(append([]any{n}, factoryKw(dtype, dev)...)...)
}

// Randn returns standard normal samples from libtorch's seeded generator.
func Randn(shape []int64, dtype DType, dev Device) *Tensor {
	return opRandn.tensor(append([]any{shape}, factoryKw(dtype, dev)...)...)
}

// Rand returns uniform samples in [0, 1).
func Rand(shape []int64, dtype DType, dev Device) *Tensor {
	return opRand.tensor(append([]any{shape}, factoryKw(dtype, dev)...)...)
}

// RandInt returns int64 samples uniform in [low, high).
func RandInt(low, high int64, shape []int64, dev Device) *Tensor {
	return opRandint.tensor(low, high, shape, kw{"dtype", Int64}, kw{"device", dev})
}

var opNewZeros = newOp("aten::new_zeros", "")

// NewZeros returns zeros of the shape with t's dtype and device, in t's scope.
func (t *Tensor) NewZeros(shape []int64) *Tensor { return opNewZeros.tensor(t, shape) }
