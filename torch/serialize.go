package torch

// #include <stdlib.h>
// #include "tlbo.h"
import "C"

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// Named is a tensor with its state-dict name, such as "encoder.0.weight".
type Named struct {
	Name   string
	Tensor *Tensor
}

// Save writes named tensors as a state dict: a .npz file (one array per name)
// when path ends in .npz, else PyTorch's torch.save zip format, which Python's
// torch.load reads as a dict of tensors. The file is written atomically.
func Save(path string, tensors []Named) error {
	for _, n := range tensors {
		if err := n.Tensor.Err(); err != nil {
			return fmt.Errorf("save %s: tensor %q: %w", path, n.Name, err)
		}
	}
	if strings.HasSuffix(path, ".npz") {
		return saveNPZ(path, tensors)
	}
	return numpy.AtomicWriteFile(path, func(w io.Writer) error { return writePT(w, tensors) })
}

// writePT writes tensors to w in torch.save's format: libtorch makes the
// bytes and Go writes them, so that a write error (a full disk) keeps its
// cause.
func writePT(w io.Writer, tensors []Named) error {
	names := make([]*C.char, len(tensors))
	handles := (*C.tlbo_tensor)(C.calloc(C.size_t(len(tensors)+1), C.size_t(unsafe.Sizeof(C.tlbo_tensor(nil)))))
	defer C.free(unsafe.Pointer(handles))
	cnames := (**C.char)(C.calloc(C.size_t(len(tensors)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	defer C.free(unsafe.Pointer(cnames))
	hs := unsafe.Slice(handles, len(tensors))
	ns := unsafe.Slice(cnames, len(tensors))
	for i, n := range tensors {
		names[i] = C.CString(n.Name)
		ns[i] = names[i]
		hs[i] = n.Tensor.handle()
	}
	defer func() {
		for _, p := range names {
			C.free(unsafe.Pointer(p))
		}
	}()
	var data *C.char
	var size C.size_t
	var msg *C.char
	status := C.tlbo_pickle_tensors(cnames, handles, C.int(len(tensors)), &data, &size, &msg)
	runtime.KeepAlive(tensors) // the handles in hs belong to these tensors
	if err := takeError(status, msg, "save"); err != nil {
		return err
	}
	defer C.tlbo_free(unsafe.Pointer(data))
	_, err := w.Write(unsafe.Slice((*byte)(unsafe.Pointer(data)), int(size)))
	return err
}

func saveNPZ(path string, tensors []Named) error {
	arrays := make([]numpy.Array, len(tensors))
	for i, n := range tensors {
		a, err := toArray(n)
		if err != nil {
			return fmt.Errorf("save %s: %w", path, err)
		}
		arrays[i] = a
	}
	return numpy.WriteNPZ(path, arrays)
}

func toArray(n Named) (numpy.Array, error) {
	shape := n.Tensor.Shape()
	a := numpy.Array{Name: n.Name, Shape: make([]int, len(shape))}
	for i, s := range shape {
		a.Shape[i] = int(s)
	}
	var err error
	switch n.Tensor.DType() {
	case Float64:
		a.Data, err = n.Tensor.Float64s()
	case Int64, Int32, Uint8:
		a.Data, err = n.Tensor.Int64s()
	case Bool:
		a.Data, err = n.Tensor.Bools()
	default:
		a.Data, err = n.Tensor.Float32s()
	}
	if err != nil {
		return numpy.Array{}, fmt.Errorf("tensor %q: %w", n.Name, err)
	}
	return a, nil
}

// Load reads a state dict written by Save or by Python's torch.save (zip
// format, PyTorch 1.6 and later; nested dicts are flattened with dots), or a
// .npz file with one array per name. Tensors come in file order, on the CPU.
func Load(path string) ([]Named, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if strings.HasSuffix(path, ".npz") {
		return loadNPZ(path)
	}
	return loadPT(path)
}

func loadNPZ(path string) ([]Named, error) {
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	out := make([]Named, 0, len(arrays))
	for _, a := range arrays {
		t, err := fromArray(a)
		if err != nil {
			CloseNamed(out)
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, Named{Name: a.Name, Tensor: t})
	}
	return out, nil
}

func fromArray(a numpy.Array) (*Tensor, error) {
	shape := make([]int64, len(a.Shape))
	for i, s := range a.Shape {
		shape[i] = int64(s)
	}
	var t *Tensor
	switch v := a.Data.(type) {
	case []float32:
		t = FromFloat32(v, shape...)
	case []float64:
		t = FromFloat64(v, shape...)
	case []int64:
		t = FromInt64(v, shape...)
	case []bool:
		t = FromBool(v, shape...)
	case []int32: // kept int32 and uint8, as the .pt reader keeps them
		t = fromInts(v, Int32, shape)
	case []uint8:
		t = fromInts(v, Uint8, shape)
	default:
		return nil, fmt.Errorf("array %q: %T is not numeric", a.Name, a.Data)
	}
	if err := t.Err(); err != nil {
		return nil, fmt.Errorf("array %q: %w", a.Name, err)
	}
	return t, nil
}

// fromInts makes a tensor of dtype and shape from v (through int64, the
// widest type the bindings copy in).
func fromInts[T int32 | uint8](v []T, dtype DType, shape []int64) *Tensor {
	wide := FromInt64(widen(v), shape...)
	defer wide.Close()
	return wide.ToDType(dtype)
}

// CloseNamed closes every tensor of a state dict.
func CloseNamed(ts []Named) {
	for _, n := range ts {
		n.Tensor.Close()
	}
}
