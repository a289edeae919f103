//go:build !notcmalloc

package malloc

/*
#cgo LDFLAGS: -ltcmalloc_minimal
#include <stdlib.h>
#include <gperftools/malloc_extension_c.h>

// tlbo_malloc_owned reports whether tcmalloc owns a block from malloc, that
// is whether malloc is bound to tcmalloc in this process.
static int tlbo_malloc_owned(void) {
	void *p = malloc(64);
	int owned = MallocExtension_GetOwnership(p) == MallocExtension_kOwned;
	free(p);
	return owned;
}
*/
import "C"

// Allocator names the allocator behind C's malloc in this process:
// "tcmalloc" when the link put it first, as it should, else "libc".
func Allocator() string {
	if C.tlbo_malloc_owned() != 0 {
		return "tcmalloc"
	}
	return "libc"
}
