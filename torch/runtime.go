package torch

// #include <stdlib.h>
// #include "tlbo.h"
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

func unsafePointer[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }

// cBool is b as the C ABI's int flag.
func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Version returns the version of the libtorch the native library was built against.
func Version() (string, error) {
	var out, msg *C.char
	if err := takeError(C.tlbo_version(&out, &msg), msg, "version"); err != nil {
		return "", err
	}
	defer C.tlbo_free(unsafe.Pointer(out))
	return C.GoString(out), nil
}

// CUDACompiled reports whether the native library was built against a CUDA libtorch.
func CUDACompiled() bool { return C.tlbo_cuda_compiled() != 0 }

// CUDADeviceCount returns the number of CUDA devices seen (0 without CUDA).
func CUDADeviceCount() int { return int(C.tlbo_cuda_device_count()) }

// CUDAAvailable reports whether at least one CUDA device can be used.
func CUDAAvailable() bool { return CUDACompiled() && CUDADeviceCount() > 0 }

// Synchronize waits for all queued CUDA work (a no-op without CUDA); use it around timings.
func Synchronize() error {
	var msg *C.char
	return takeError(C.tlbo_cuda_synchronize(&msg), msg, "cuda synchronize")
}

// ManualSeed seeds libtorch's default random generators (CPU and CUDA).
func ManualSeed(seed uint64) error {
	var msg *C.char
	return takeError(C.tlbo_manual_seed(C.uint64_t(seed), &msg), msg, "manual_seed")
}

// SetNumThreads sets the number of threads libtorch uses for intra-op parallelism.
func SetNumThreads(n int) error {
	var msg *C.char
	return takeError(C.tlbo_set_num_threads(C.int(n), &msg), msg, "set_num_threads")
}

// NumThreads returns the number of intra-op threads of libtorch.
func NumThreads() int { return int(C.tlbo_get_num_threads()) }

// SetFlushDenormal sets whether libtorch's work flushes subnormal floats to
// zero (on by default), as torch.set_flush_denormal does, and reports whether
// the mode is now as asked: only x86-64 has the mode, and elsewhere it stays
// off. Each call into libtorch sets the calling thread's FTZ and DAZ modes
// and restores the caller's after it, so Go's own arithmetic is unaffected.
// libtorch's intra-op worker threads take the mode of the call that starts
// them and keep it: choose the mode before the first multi-threaded work
// (the command line reads $TLBO_DENORMALS at its start), or, to change it
// later, run the work on one thread (SetNumThreads(1)).
//
// Subnormal activations and gradients take a slow path on x86 CPUs:
// training steps of the shipped soft-triplet JT-VAE took twice as long with
// them. Results differ only by amounts below the smallest normal float.
func SetFlushDenormal(on bool) bool {
	return C.tlbo_set_flush_denormal(cBool(on)) != 0
}

// FlushDenormal reports whether libtorch's work flushes subnormal floats to
// zero (SetFlushDenormal).
func FlushDenormal() bool { return C.tlbo_get_flush_denormal() != 0 }

// ReleaseFreeMemory hands the native heap's free pages back to the system
// and reports whether there were any: tcmalloc's when the program links it
// (internal/malloc), else glibc's (malloc_trim); false elsewhere.
//
// glibc keeps what native libraries free in per-thread arenas, and cgo
// calls run on whichever OS thread the goroutine is on, so a long program
// that alternates large phases gathers a freed copy of a phase's working
// set in each arena it passed through. Call it after such a phase to keep
// the resident size near the live size (OnOneThread does). tcmalloc keeps
// one page heap for all threads, so there it only returns what a phase
// freed sooner than tcmalloc's own gradual release would.
func ReleaseFreeMemory() bool { return C.tlbo_release_free_memory() != 0 }

// OnOneThread runs fn, a phase of many native calls (training steps, an
// encoding pass), on one locked OS thread, so that glibc, where it is the
// allocator, serves it from one malloc arena, then hands the memory it freed
// back (ReleaseFreeMemory).
func OnOneThread(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer ReleaseFreeMemory()
	return fn()
}

// noGradDepth counts active NoGrad scopes; gradient recording is process-wide
// because goroutines migrate between OS threads, where libtorch keeps its mode.
var noGradDepth atomic.Int32

// NoGrad runs fn with gradient recording disabled for every op issued from this
// package, as torch.no_grad() does in Python. It is process-wide: do not run
// training steps concurrently with it.
func NoGrad(fn func()) {
	noGradDepth.Add(1)
	defer noGradDepth.Add(-1)
	fn()
}

// GradEnabled reports whether ops currently record gradients.
func GradEnabled() bool { return noGradDepth.Load() == 0 }
