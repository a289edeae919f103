package topology

import (
	"os"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/openblas"
)

// TestMain gives libtorch's matrix products one OpenBLAS thread (see
// models/expression's TestMain).
func TestMain(m *testing.M) {
	openblas.SingleThreadUnlessSet()
	os.Exit(m.Run())
}
