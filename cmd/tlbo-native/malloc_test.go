//go:build !notcmalloc

package main

import (
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/malloc"
)

// TestAllocator: the program's link, every library of it included, leaves
// C's malloc bound to tcmalloc.
func TestAllocator(t *testing.T) {
	if got := malloc.Allocator(); got != "tcmalloc" {
		t.Fatalf("malloc is served by %s, want tcmalloc (internal/malloc)", got)
	}
}
