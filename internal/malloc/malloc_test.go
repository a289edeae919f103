//go:build !notcmalloc

package malloc

import (
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

// TestAllocatorIsTcmalloc fails when the link leaves glibc's malloc in
// front of tcmalloc's (the package would then cost a dependency for
// nothing).
func TestAllocatorIsTcmalloc(t *testing.T) {
	if got := Allocator(); got != "tcmalloc" {
		t.Fatalf("malloc is served by %s, want tcmalloc", got)
	}
}

// TestReleaseUnderTcmalloc: torch.ReleaseFreeMemory reaches tcmalloc's page
// heap once large tensors are freed (glibc's malloc_trim would not: glibc
// no longer serves them).
func TestReleaseUnderTcmalloc(t *testing.T) {
	ts := make([]*torch.Tensor, 64)
	for i := range ts {
		ts[i] = torch.Zeros([]int64{1 << 17}, torch.Float64, torch.CPU) // 1 MiB
	}
	for _, x := range ts {
		x.Close()
	}
	if !torch.ReleaseFreeMemory() {
		t.Error("no free pages released after freeing 64 tensors of 1 MiB")
	}
}
