package torch

import (
	"fmt"
	"strconv"
	"strings"
)

// DType is a tensor element type; the values are libtorch's ScalarType codes.
type DType int

// The element types the Go bindings exchange with libtorch.
const (
	Uint8   DType = 0
	Int32   DType = 3
	Int64   DType = 4
	Float32 DType = 6
	Float64 DType = 7
	Bool    DType = 11
)

// String returns the PyTorch name of the type, e.g. "float32".
func (d DType) String() string {
	switch d {
	case Uint8:
		return "uint8"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Bool:
		return "bool"
	}
	return fmt.Sprintf("dtype(%d)", int(d))
}

// ElementSize returns the size of one element in bytes.
func (d DType) ElementSize() int {
	switch d {
	case Uint8, Bool:
		return 1
	case Int32, Float32:
		return 4
	case Int64, Float64:
		return 8
	}
	return 0
}

// DeviceType is the kind of a device.
type DeviceType int

// Device kinds.
const (
	CPUDevice  DeviceType = 0
	CUDADevice DeviceType = 1
)

// Device is where a tensor lives; Index -1 means the current device of its type.
type Device struct {
	Type  DeviceType
	Index int
}

// CPU is the host device.
var CPU = Device{Type: CPUDevice, Index: -1}

// CUDA returns the CUDA device with the given index.
func CUDA(index int) Device { return Device{Type: CUDADevice, Index: index} }

// String returns "cpu", "cuda" or "cuda:N".
func (d Device) String() string {
	if d.Type == CPUDevice {
		return "cpu"
	}
	if d.Index < 0 {
		return "cuda"
	}
	return "cuda:" + strconv.Itoa(d.Index)
}

// ParseDevice parses "cpu", "cuda", "cuda:N" or "auto" (CUDA when available,
// else CPU) and checks that the device exists.
func ParseDevice(s string) (Device, error) {
	switch {
	case s == "auto":
		if CUDAAvailable() {
			return CUDA(0), nil
		}
		return CPU, nil
	case s == "cpu":
		return CPU, nil
	case s == "cuda" || strings.HasPrefix(s, "cuda:"):
		idx := 0
		if s != "cuda" {
			n, err := strconv.Atoi(strings.TrimPrefix(s, "cuda:"))
			if err != nil || n < 0 {
				return Device{}, fmt.Errorf("device %q: bad CUDA index", s)
			}
			idx = n
		}
		if !CUDACompiled() {
			return Device{}, fmt.Errorf("device %q: the native library was built without CUDA", s)
		}
		if idx >= CUDADeviceCount() {
			return Device{}, fmt.Errorf("device %q: %d CUDA devices seen", s, CUDADeviceCount())
		}
		return CUDA(idx), nil
	}
	return Device{}, fmt.Errorf("unknown device %q (want auto, cpu, cuda or cuda:N)", s)
}
