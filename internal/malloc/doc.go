// Package malloc puts gperftools' tcmalloc (minimal) in place of glibc's
// malloc for the C and C++ libraries a program links: importing it, as
// cmd/tlbo-native does, is all there is to do.
//
// Why: molecule decoding spends much of its time in RDKit and libtorch
// calls that allocate and free many short-lived objects (molecules,
// SMILES strings, small tensors), and glibc's allocator spends a large
// share of the decoder's CPU time on them; tcmalloc takes less (the
// figures, and the command that measures them: docs/performance.md,
// "Figures from the package docs"). PyTorch's CPU performance guide
// recommends the same. Go's own memory is
// untouched: the Go runtime has its own allocator.
//
// The library must be linked into the executable itself, ahead of libc, so
// that the dynamic linker binds every library's malloc to it; a cgo
// directive in a package the main program imports does exactly that. A
// shared library that merely depends on tcmalloc would not (glibc's malloc
// would be found first). Build with the tag notcmalloc to keep glibc's.
package malloc
