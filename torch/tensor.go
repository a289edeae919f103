package torch

// #include <stdlib.h>
// #include "tlbo.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Tensor is a handle to a libtorch tensor.
//
// Ops never panic: an op that fails returns a Tensor carrying the error, ops on
// such a tensor pass the error on, and the first call that leaves the tensor
// world (Err, Backward, Float32s, ...) reports it. Call Close to release the
// native memory at once; a tensor derived from a tensor that belongs to a Scope
// joins that scope and is released with it. A finalizer frees forgotten tensors
// as a backstop only.
type Tensor struct {
	h       unsafe.Pointer // the C.tlbo_tensor, nil once closed; accessed atomically so that one Close frees it
	err     error
	scope   *Scope
	seq     int // its number in its scope (Scope.Mark)
	cleanup runtime.Cleanup
}

// Counters of native tensor handles, for leak tests (see LiveTensors).
var (
	liveTensors      atomic.Int64
	collectedTensors atomic.Int64
)

// LiveTensors returns the number of native tensor handles currently owned by
// Go tensors: created by an op or factory and not yet freed by Close, a Scope
// or the finalizer. Tests use it to check that code releases what it makes.
func LiveTensors() int64 { return liveTensors.Load() }

// CollectedTensors returns how many tensors so far were freed by the finalizer
// backstop rather than by Close or a Scope: code that closes or scopes every
// tensor leaves it unchanged.
func CollectedTensors() int64 { return collectedTensors.Load() }

func freeHandle(h C.tlbo_tensor) {
	C.tlbo_tensor_free(h)
	liveTensors.Add(-1)
}

// collectHandle is the finalizer backstop of a tensor that was never closed.
func collectHandle(h C.tlbo_tensor) {
	collectedTensors.Add(1)
	freeHandle(h)
}

// wrapHandle takes ownership of h; the result joins scope when it is not nil.
func wrapHandle(h C.tlbo_tensor, scope *Scope) *Tensor {
	liveTensors.Add(1)
	t := &Tensor{}
	t.h = unsafe.Pointer(h)
	t.cleanup = runtime.AddCleanup(t, collectHandle, h)
	if scope != nil {
		scope.add(t)
	}
	return t
}

// errTensor returns a tensor that only carries err.
func errTensor(err error) *Tensor { return &Tensor{err: err} }

// handle returns the native handle of t (nil once closed). A caller that
// passes it to C must keep t alive (runtime.KeepAlive) until the C call
// returns, or the finalizer could free the handle while C uses it.
func (t *Tensor) handle() C.tlbo_tensor { return C.tlbo_tensor(atomic.LoadPointer(&t.h)) }

// Err returns the error carried by t, if any, or an error if t was closed.
func (t *Tensor) Err() error {
	if t == nil {
		return fmt.Errorf("torch: nil tensor")
	}
	if t.err != nil {
		return t.err
	}
	if t.handle() == nil {
		return fmt.Errorf("torch: %w", errClosed)
	}
	return nil
}

// Close releases the native tensor. It is safe to call more than once, also
// from several goroutines: exactly one call frees the handle.
func (t *Tensor) Close() {
	if t == nil {
		return
	}
	h := C.tlbo_tensor(atomic.SwapPointer(&t.h, nil))
	if h == nil {
		return
	}
	if s := t.scope; s != nil {
		s.remove(t) // a long-lived scope would keep collecting closed tensors
	}
	t.cleanup.Stop()
	freeHandle(h)
}

// Scope returns the scope t belongs to, or nil.
func (t *Tensor) Scope() *Scope { return t.scope }

// FromFloat32 makes a CPU float32 tensor of the given shape from data (copied).
func FromFloat32(data []float32, shape ...int64) *Tensor { return fromSlice(data, Float32, shape) }

// FromFloat64 makes a CPU float64 tensor of the given shape from data (copied).
func FromFloat64(data []float64, shape ...int64) *Tensor { return fromSlice(data, Float64, shape) }

// FromInt64 makes a CPU int64 tensor of the given shape from data (copied).
func FromInt64(data []int64, shape ...int64) *Tensor { return fromSlice(data, Int64, shape) }

// FromBool makes a CPU bool tensor of the given shape from data (copied).
func FromBool(data []bool, shape ...int64) *Tensor { return fromSlice(data, Bool, shape) }

// Scalar makes a 0-dimensional float32 CPU tensor.
func Scalar(v float32) *Tensor { return FromFloat32([]float32{v}, []int64{}...) }

func fromSlice[T float32 | float64 | int64 | bool](data []T, dtype DType, shape []int64) *Tensor {
	if shape == nil {
		shape = []int64{int64(len(data))}
	}
	n := int64(1)
	for _, s := range shape {
		if s < 0 {
			return errTensor(fmt.Errorf("torch: from %s: negative dimension in shape %v", dtype, shape))
		}
		n *= s
	}
	if n != int64(len(data)) {
		return errTensor(fmt.Errorf("torch: from %s: shape %v needs %d values, got %d", dtype, shape, n, len(data)))
	}
	if len(shape) > C.TLBO_MAX_DIMS {
		return errTensor(fmt.Errorf("torch: from %s: %d dimensions, at most %d", dtype, len(shape), C.TLBO_MAX_DIMS))
	}
	var src unsafe.Pointer
	if len(data) > 0 {
		src = unsafe.Pointer(&data[0])
	}
	var shp *C.int64_t
	if len(shape) > 0 {
		shp = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	var h C.tlbo_tensor
	var msg *C.char
	status := C.tlbo_tensor_from_data(src, C.int(dtype), shp, C.int(len(shape)), &h, &msg)
	runtime.KeepAlive(data)
	if err := takeError(status, msg, "from "+dtype.String()); err != nil {
		return errTensor(err)
	}
	return wrapHandle(h, nil)
}

// info is the metadata of a tensor.
type info struct {
	dtype        DType
	shape        []int64
	device       Device
	requiresGrad bool
}

func (t *Tensor) info() (info, error) {
	if err := t.Err(); err != nil {
		return info{}, err
	}
	var dtype, ndim, devType, devIndex, rg C.int
	var shape [C.TLBO_MAX_DIMS]C.int64_t
	var msg *C.char
	status := C.tlbo_tensor_info(t.handle(), &dtype, &ndim, &shape[0], &devType, &devIndex, &rg, &msg)
	runtime.KeepAlive(t)
	if err := takeError(status, msg, "info"); err != nil {
		return info{}, err
	}
	out := info{dtype: DType(dtype), device: Device{Type: DeviceType(devType), Index: int(devIndex)}, requiresGrad: rg != 0}
	out.shape = make([]int64, int(ndim))
	for i := range out.shape {
		out.shape[i] = int64(shape[i])
	}
	return out, nil
}

// Shape returns the sizes of t (nil if t carries an error).
func (t *Tensor) Shape() []int64 {
	in, err := t.info()
	if err != nil {
		return nil
	}
	return in.shape
}

// Dim returns the number of dimensions of t.
func (t *Tensor) Dim() int { return len(t.Shape()) }

// Numel returns the number of elements of t.
func (t *Tensor) Numel() int64 {
	n := int64(1)
	for _, s := range t.Shape() {
		n *= s
	}
	return n
}

// DType returns the element type of t.
func (t *Tensor) DType() DType {
	in, _ := t.info()
	return in.dtype
}

// Device returns the device of t.
func (t *Tensor) Device() Device {
	in, _ := t.info()
	return in.device
}

// RequiresGrad reports whether autograd records operations on t.
func (t *Tensor) RequiresGrad() bool {
	in, _ := t.info()
	return in.requiresGrad
}

// String describes t briefly, e.g. "Tensor[float32 3x4 cpu]".
func (t *Tensor) String() string {
	in, err := t.info()
	if err != nil {
		return "Tensor[error: " + err.Error() + "]"
	}
	return fmt.Sprintf("Tensor[%s %v %s]", in.dtype, in.shape, in.device)
}

// copyOut copies the elements of t (converted to dtype on the CPU) into dst.
func copyOut[T float32 | float64 | int64 | bool](t *Tensor, dtype DType) ([]T, error) {
	src := t
	if t.DType() != dtype {
		src = t.ToDType(dtype)
		defer src.Close()
	}
	if err := src.Err(); err != nil {
		return nil, err
	}
	out := make([]T, src.Numel())
	var dst unsafe.Pointer
	if len(out) > 0 {
		dst = unsafe.Pointer(&out[0])
	}
	var msg *C.char
	status := C.tlbo_tensor_copy_data(src.handle(), dst, C.int64_t(len(out)*dtype.ElementSize()), &msg)
	runtime.KeepAlive(src)
	if err := takeError(status, msg, "copy to Go"); err != nil {
		return nil, err
	}
	return out, nil
}

// Float32s returns the elements of t in row-major order as float32.
func (t *Tensor) Float32s() ([]float32, error) { return copyOut[float32](t, Float32) }

// Float64s returns the elements of t in row-major order as float64.
func (t *Tensor) Float64s() ([]float64, error) { return copyOut[float64](t, Float64) }

// Int64s returns the elements of t in row-major order as int64.
func (t *Tensor) Int64s() ([]int64, error) { return copyOut[int64](t, Int64) }

// Bools returns the elements of t in row-major order as bool.
func (t *Tensor) Bools() ([]bool, error) { return copyOut[bool](t, Bool) }

// Item returns the value of a one-element tensor as float64.
func (t *Tensor) Item() (float64, error) {
	v, err := t.Float64s()
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("torch: item: tensor has %d elements, want 1", len(v))
	}
	return v[0], nil
}

// to converts t to a device and dtype (-1 keeps the dtype); copy forces a copy.
func (t *Tensor) to(dev Device, dtype DType, copy bool) *Tensor {
	if err := t.Err(); err != nil {
		return errTensor(err)
	}
	var h C.tlbo_tensor
	var msg *C.char
	status := C.tlbo_tensor_to(t.handle(), C.int(dev.Type), C.int(dev.Index), C.int(dtype), cBool(copy), &h, &msg)
	runtime.KeepAlive(t)
	if err := takeError(status, msg, "to "+dev.String()); err != nil {
		return errTensor(err)
	}
	return wrapHandle(h, t.scope)
}

// To returns t on dev (t itself, as a new handle, when it is already there).
func (t *Tensor) To(dev Device) *Tensor { return t.to(dev, -1, false) }

// ToDType returns t converted to dtype.
func (t *Tensor) ToDType(dtype DType) *Tensor {
	if err := t.Err(); err != nil {
		return errTensor(err)
	}
	return t.to(t.Device(), dtype, false)
}

// SetData replaces the data of t by that of src, keeping t's identity (as
// Python's `t.data = src`): used to move parameters between devices in place.
func (t *Tensor) SetData(src *Tensor) error {
	if err := t.Err(); err != nil {
		return err
	}
	if err := src.Err(); err != nil {
		return err
	}
	var msg *C.char
	status := C.tlbo_tensor_set_data(t.handle(), src.handle(), &msg)
	runtime.KeepAlive(t)
	runtime.KeepAlive(src)
	return takeError(status, msg, "set_data")
}

// SetRequiresGrad turns gradient recording for the leaf tensor t on or off and returns t.
func (t *Tensor) SetRequiresGrad(on bool) *Tensor {
	if err := t.Err(); err != nil {
		return t
	}
	var msg *C.char
	status := C.tlbo_tensor_set_requires_grad(t.handle(), cBool(on), &msg)
	runtime.KeepAlive(t)
	if err := takeError(status, msg, "requires_grad"); err != nil {
		t.err = err
	}
	return t
}

// Grad returns the accumulated gradient of t, or nil when there is none. The
// caller owns the returned handle.
func (t *Tensor) Grad() (*Tensor, error) {
	if err := t.Err(); err != nil {
		return nil, err
	}
	var h C.tlbo_tensor
	var msg *C.char
	status := C.tlbo_tensor_grad(t.handle(), &h, &msg)
	runtime.KeepAlive(t)
	if err := takeError(status, msg, "grad"); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, nil
	}
	return wrapHandle(h, nil), nil
}

// ZeroGrad drops the accumulated gradient of t (as zero_grad(set_to_none=True)).
func (t *Tensor) ZeroGrad() error {
	if err := t.Err(); err != nil {
		return err
	}
	var msg *C.char
	status := C.tlbo_tensor_zero_grad(t.handle(), &msg)
	runtime.KeepAlive(t)
	return takeError(status, msg, "zero_grad")
}

// Backward computes the gradients of the scalar t with respect to the leaves
// that require them, accumulating into their Grad.
func (t *Tensor) Backward() error { return t.BackwardWith(nil, false) }

// BackwardWith is Backward with an explicit output gradient (nil for a scalar)
// and the option to keep the graph for another backward pass.
func (t *Tensor) BackwardWith(grad *Tensor, retainGraph bool) error {
	if err := t.Err(); err != nil {
		return err
	}
	var gh C.tlbo_tensor
	if grad != nil {
		if err := grad.Err(); err != nil {
			return err
		}
		gh = grad.handle()
	}
	var msg *C.char
	status := C.tlbo_tensor_backward(t.handle(), gh, cBool(retainGraph), &msg)
	runtime.KeepAlive(t)
	runtime.KeepAlive(grad)
	return takeError(status, msg, "backward")
}

// ErrTensor returns a tensor that carries err, for functions that must return
// a tensor but failed before any op ran.
func ErrTensor(err error) *Tensor { return errTensor(err) }
