// Package openblas routes gonum's BLAS and LAPACK calls through the system
// OpenBLAS library (Debian's libopenblas, linked with cgo).
//
// Importing the package for its side effect is enough:
//
//	import _ "github.com/tlbo-native/tlbo-native/internal/openblas"
//
// Its init function installs [Implementation] with blas64.Use and [Lapack]
// with lapack64.Use, so every gonum mat, lapack64 and blas64 call in the
// process runs on OpenBLAS from then on. The number of OpenBLAS threads is
// taken from the TLBO_BLAS_THREADS environment variable, else from
// OPENBLAS_NUM_THREADS, else it is the number of CPU cores; [SetThreads]
// changes it at run time.
//
// On virtual machines OpenBLAS's run-time CPU detection can fall back to
// old SSE3 kernels ("Prescott") on a CPU with AVX-512; unless
// OPENBLAS_CORETYPE is set, init then re-selects the fastest kernel set the
// CPU's features allow (see [CoreName]).
//
// Only the routines that dominate numerical work (level-3 BLAS, the common
// level-2 routines and the Cholesky family of LAPACK) are forwarded to
// OpenBLAS; every other routine is gonum's pure-Go implementation, which in
// turn calls the forwarded routines. Arguments are validated in Go before
// crossing into C, so a misuse panics as gonum's own implementation would
// instead of corrupting memory.
package openblas
