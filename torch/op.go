package torch

// #include <stdlib.h>
// #include <string.h>
// #include "tlbo.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// op is an ATen operator reached through the dispatcher, resolved once.
type op struct {
	name, overload string
	once           sync.Once
	h              C.tlbo_op
	err            error
}

// newOp names an operator, e.g. newOp("aten::add", "Tensor"); it is resolved on first use.
func newOp(name, overload string) *op { return &op{name: name, overload: overload} }

func (o *op) resolve() error {
	o.once.Do(func() {
		cn, co := C.CString(o.name), C.CString(o.overload)
		defer C.free(unsafe.Pointer(cn))
		defer C.free(unsafe.Pointer(co))
		var msg *C.char
		o.err = takeError(C.tlbo_op_find(cn, co, &o.h, &msg), msg, o.name)
	})
	return o.err
}

// kw binds an argument by its schema name (keyword-only arguments such as dtype).
type kw struct {
	name  string
	value any
}

// none is the None argument of optional parameters.
type noneArg struct{}

var none = noneArg{}

// cArena holds C memory for one call's arguments (cgo forbids Go pointers in
// memory passed to C, so argument lists live in C memory). Small calls bump a
// block from a free list; larger ones fall back to calloc.
type cArena struct {
	block unsafe.Pointer
	used  int
	extra []unsafe.Pointer
}

const (
	arenaBlockSize = 4096
	maxFreeBlocks  = 64 // more than the calls that run at once in practice
)

// freeBlocks is a bounded free list of arena blocks. Not a sync.Pool: a pool
// drops its items at GC, which would leak their C memory.
var freeBlocks struct {
	sync.Mutex
	list []unsafe.Pointer
	live int // blocks malloc'd and not yet freed, in use or listed
}

func getBlock() unsafe.Pointer {
	freeBlocks.Lock()
	if n := len(freeBlocks.list); n > 0 {
		p := freeBlocks.list[n-1]
		freeBlocks.list = freeBlocks.list[:n-1]
		freeBlocks.Unlock()
		return p
	}
	freeBlocks.live++
	freeBlocks.Unlock()
	return C.malloc(arenaBlockSize)
}

func putBlock(p unsafe.Pointer) {
	freeBlocks.Lock()
	if len(freeBlocks.list) < maxFreeBlocks {
		freeBlocks.list = append(freeBlocks.list, p)
		freeBlocks.Unlock()
		return
	}
	freeBlocks.live--
	freeBlocks.Unlock()
	C.free(p)
}

func (a *cArena) alloc(n int) unsafe.Pointer {
	n = (n + 15) &^ 15
	if n == 0 {
		n = 16
	}
	if a.block == nil {
		a.block = getBlock()
	}
	if a.used+n <= arenaBlockSize {
		p := unsafe.Add(a.block, a.used)
		a.used += n
		C.memset(p, 0, C.size_t(n))
		return p
	}
	p := C.calloc(1, C.size_t(n))
	a.extra = append(a.extra, p)
	return p
}

func (a *cArena) free() {
	for _, p := range a.extra {
		C.free(p)
	}
	if a.block != nil {
		putBlock(a.block)
	}
}

// callState gathers what an op call needs besides its arguments.
type callState struct {
	arena      cArena
	scope      *Scope
	err        error // a bad argument
	operandErr error // an error carried by an operand
}

// tensorArg records the scope and error of an operand.
func (s *callState) tensorArg(t *Tensor) C.tlbo_tensor {
	if t == nil {
		return nil
	}
	if err := t.Err(); err != nil && s.operandErr == nil {
		s.operandErr = err
	}
	if s.scope == nil && t.scope != nil {
		s.scope = t.scope
	}
	return t.handle() // the caller keeps t alive until C returns (see call)
}

func (s *callState) fill(a *C.tlbo_arg, v any) {
	switch x := v.(type) {
	case kw:
		a.name = (*C.char)(s.cString(x.name))
		s.fill(a, x.value)
	case noneArg, nil:
		a.kind = C.TLBO_ARG_NONE
	case *Tensor:
		a.kind = C.TLBO_ARG_TENSOR
		a.tensor = s.tensorArg(x)
	case int:
		a.kind, a.i = C.TLBO_ARG_INT, C.int64_t(x)
	case int64:
		a.kind, a.i = C.TLBO_ARG_INT, C.int64_t(x)
	case DType:
		a.kind, a.i = C.TLBO_ARG_INT, C.int64_t(x)
	case float64:
		a.kind, a.d = C.TLBO_ARG_DOUBLE, C.double(x)
	case bool:
		a.kind, a.i = C.TLBO_ARG_BOOL, C.int64_t(cBool(x))
	case []int64:
		a.kind, a.len = C.TLBO_ARG_INTS, C.int64_t(len(x))
		p := s.arena.alloc(8 * len(x))
		copy(unsafe.Slice((*int64)(p), len(x)), x)
		a.ints = (*C.int64_t)(p)
	case []float64:
		a.kind, a.len = C.TLBO_ARG_DOUBLES, C.int64_t(len(x))
		p := s.arena.alloc(8 * len(x))
		copy(unsafe.Slice((*float64)(p), len(x)), x)
		a.doubles = (*C.double)(p)
	case []*Tensor:
		a.kind, a.len = C.TLBO_ARG_TENSORS, C.int64_t(len(x))
		p := s.arena.alloc(int(unsafe.Sizeof(C.tlbo_tensor(nil))) * len(x))
		hs := unsafe.Slice((*C.tlbo_tensor)(p), len(x))
		for i, t := range x {
			hs[i] = s.tensorArg(t)
		}
		a.tensors = (*C.tlbo_tensor)(p)
	case Device:
		a.kind, a.i, a.i2 = C.TLBO_ARG_DEVICE, C.int64_t(x.Type), C.int64_t(x.Index)
	case string:
		a.kind = C.TLBO_ARG_STRING
		a.str = (*C.char)(s.cString(x))
	default:
		s.err = fmt.Errorf("unsupported argument type %T", v)
	}
}

func (s *callState) cString(str string) unsafe.Pointer {
	p := s.arena.alloc(len(str) + 1)
	copy(unsafe.Slice((*byte)(p), len(str)+1), str)
	return p
}

// value is one result of an op: a tensor or a number.
type value struct {
	t *Tensor
	i int64
	d float64
}

// call runs the operator on args and returns its results; tensor results join
// the scope of the first scoped tensor operand.
func (o *op) call(args ...any) ([]value, error) {
	if err := o.resolve(); err != nil {
		return nil, err
	}
	var s callState
	defer s.arena.free()
	cargs := (*C.tlbo_arg)(s.arena.alloc(int(unsafe.Sizeof(C.tlbo_arg{})) * len(args)))
	slots := unsafe.Slice(cargs, len(args))
	for i, v := range args {
		s.fill(&slots[i], v)
	}
	if s.operandErr != nil {
		return nil, s.operandErr // a sticky error from an earlier op passes on unchanged
	}
	if s.err != nil {
		return nil, fmt.Errorf("torch: %s: %w", o.name, s.err)
	}
	var rets *C.tlbo_ret
	var nrets C.int
	var msg *C.char
	status := C.tlbo_op_call(o.h, cargs, C.int(len(args)), cBool(GradEnabled()), &rets, &nrets, &msg)
	// args holds every tensor whose handle was copied into cargs (directly, in
	// a []*Tensor or in a kw): without this, a temporary operand could become
	// unreachable, and its finalizer free the handle while C still reads it.
	runtime.KeepAlive(args)
	if err := takeError(status, msg, o.name); err != nil {
		return nil, err
	}
	defer C.tlbo_free(unsafe.Pointer(rets))
	out := make([]value, int(nrets))
	for i, r := range unsafe.Slice(rets, int(nrets)) {
		switch r.kind {
		case C.TLBO_RET_TENSOR:
			out[i].t = wrapHandle(r.tensor, s.scope)
		case C.TLBO_RET_INT, C.TLBO_RET_BOOL:
			out[i].i = int64(r.i)
		case C.TLBO_RET_DOUBLE:
			out[i].d = float64(r.d)
		}
	}
	return out, nil
}

// tensor calls the operator and returns its single tensor result.
func (o *op) tensor(args ...any) *Tensor {
	out, err := o.call(args...)
	if err != nil {
		return errTensor(err)
	}
	if len(out) != 1 || out[0].t == nil {
		closeValues(out)
		return errTensor(fmt.Errorf("torch: %s: expected one tensor result, got %d values", o.name, len(out)))
	}
	return out[0].t
}

// tensors calls the operator and returns its tensor results.
func (o *op) tensors(args ...any) ([]*Tensor, error) {
	out, err := o.call(args...)
	if err != nil {
		return nil, err
	}
	ts := make([]*Tensor, len(out))
	for i, v := range out {
		if v.t == nil {
			closeValues(out)
			return nil, fmt.Errorf("torch: %s: result %d is not a tensor", o.name, i)
		}
		ts[i] = v.t
	}
	return ts, nil
}

// pair calls an operator with two tensor results (values, indices).
func (o *op) pair(args ...any) (*Tensor, *Tensor) {
	ts, err := o.tensors(args...)
	if err == nil && len(ts) != 2 {
		closeTensors(ts)
		err = fmt.Errorf("torch: %s: expected two results, got %d", o.name, len(ts))
	}
	if err != nil {
		return errTensor(err), errTensor(err)
	}
	return ts[0], ts[1]
}

// inPlace calls an in-place operator on t and drops the extra handle it returns.
func (o *op) inPlace(args ...any) error {
	out, err := o.call(args...)
	closeValues(out)
	return err
}

func closeValues(vs []value) {
	for _, v := range vs {
		v.t.Close()
	}
}

func closeTensors(ts []*Tensor) {
	for _, t := range ts {
		t.Close()
	}
}
