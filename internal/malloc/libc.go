//go:build notcmalloc

package malloc

// Allocator names the allocator behind C's malloc: glibc's, in a build
// with the tag notcmalloc.
func Allocator() string { return "libc" }
