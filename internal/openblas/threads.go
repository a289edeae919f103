package openblas

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

func init() {
	fixCoreType()
	blas64.Use(Implementation{})
	lapack64.Use(Lapack{})
	n, err := threadsFromEnv()
	if err != nil {
		// A bad setting must not abort a program at start-up; fall back to
		// the core count and say so once.
		fmt.Fprintln(os.Stderr, "openblas:", err)
	}
	SetThreads(n)
}

// threadsFromEnv reads the thread count from TLBO_BLAS_THREADS or
// OPENBLAS_NUM_THREADS, defaulting to the number of CPU cores.
func threadsFromEnv() (int, error) {
	for _, name := range []string{"TLBO_BLAS_THREADS", "OPENBLAS_NUM_THREADS"} {
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return runtime.NumCPU(), fmt.Errorf("%s=%q is not a positive integer; using %d threads", name, v, runtime.NumCPU())
		}
		return n, nil
	}
	return runtime.NumCPU(), nil
}

// SetThreads sets the number of threads OpenBLAS uses; n < 1 means the
// number of CPU cores.
func SetThreads(n int) {
	if n < 1 {
		n = runtime.NumCPU()
	}
	C.openblas_set_num_threads(C.int(n))
}

// Threads returns the number of threads OpenBLAS currently uses.
func Threads() int {
	return int(C.openblas_get_num_threads())
}

// SingleThreadUnlessSet gives OpenBLAS one thread unless OPENBLAS_NUM_THREADS
// or TLBO_BLAS_THREADS says otherwise: libtorch's own threads run beside
// OpenBLAS's, and on a small machine the two oversubscribe the cores (tests
// of networks call it from TestMain).
func SingleThreadUnlessSet() {
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" && os.Getenv("TLBO_BLAS_THREADS") == "" {
		SetThreads(1)
	}
}

// OneThread gives OpenBLAS one thread and returns what restores the count it
// had. Work that runs its own goroutines in parallel, each calling BLAS,
// takes it for its duration: OpenBLAS's threads would multiply the workers,
// and its idle ones spin.
func OneThread() (restore func()) {
	n := Threads()
	SetThreads(1)
	return func() { SetThreads(n) }
}
