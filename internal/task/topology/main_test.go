package topology

import (
	"os"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/openblas"
)

// TestMain gives libtorch's matrix products one OpenBLAS thread (see
// models/expression's TestMain).
func TestMain(m *testing.M) {
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" && os.Getenv("TLBO_BLAS_THREADS") == "" {
		openblas.SetThreads(1)
	}
	os.Exit(m.Run())
}
