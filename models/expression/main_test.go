package expression

import (
	"os"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/openblas"
)

// TestMain gives libtorch's matrix products one OpenBLAS thread: libtorch runs
// its own OpenMP threads, and OpenBLAS's spinning pthreads on top of them make
// the training tests an order of magnitude slower on a busy machine. Importing
// internal/openblas also selects OpenBLAS kernels that match the CPU. (Test
// only: package expression itself imports nothing from internal/.)
func TestMain(m *testing.M) {
	openblas.SingleThreadUnlessSet()
	os.Exit(m.Run())
}
