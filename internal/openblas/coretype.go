package openblas

/*
#include <stdlib.h>
char *openblas_get_corename(void);
void gotoblas_dynamic_init(void);
void gotoblas_dynamic_quit(void);
*/
import "C"

import (
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// CoreName returns the name of the CPU kernel set OpenBLAS uses (for
// example "SkylakeX" or "Haswell").
func CoreName() string {
	return C.GoString(C.openblas_get_corename())
}

// coreTier ranks OpenBLAS x86-64 kernel sets by vector width: 3 AVX-512,
// 2 AVX2+FMA, 1 AVX, 0 anything older.
func coreTier(name string) int {
	switch strings.ToLower(name) {
	case "skylakex", "cooperlake", "sapphirerapids":
		return 3
	case "haswell", "zen":
		return 2
	case "sandybridge", "bulldozer", "piledriver", "steamroller", "excavator":
		return 1
	}
	return 0
}

// bestCore returns the fastest kernel set the CPU's features allow, or "".
func bestCore() string {
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512DQ && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512CD:
		return "SkylakeX"
	case x.HasAVX2 && x.HasFMA:
		return "Haswell"
	case x.HasAVX:
		return "SandyBridge"
	}
	return ""
}

// fixCoreType re-selects OpenBLAS's kernels when its CPU detection fell back
// to an older kernel set than the CPU supports. This happens on virtual
// machines whose CPUID reports a generic model (OpenBLAS 0.3.21 then picks
// "Prescott", SSE3 kernels, about 4x slower than AVX-512 ones for dgemm).
// It runs in init, before any BLAS call, and does nothing when the user set
// OPENBLAS_CORETYPE. It reports the kernel set in use afterwards.
func fixCoreType() string {
	if _, set := os.LookupEnv("OPENBLAS_CORETYPE"); set {
		return CoreName()
	}
	best := bestCore()
	if best == "" || coreTier(CoreName()) >= coreTier(best) {
		return CoreName()
	}
	name := C.CString("OPENBLAS_CORETYPE")
	val := C.CString(best)
	defer C.free(unsafe.Pointer(name))
	defer C.free(unsafe.Pointer(val))
	// gotoblas_dynamic_init reads the variable through the C environment.
	C.setenv(name, val, 1)
	C.gotoblas_dynamic_quit()
	C.gotoblas_dynamic_init()
	C.unsetenv(name)
	return CoreName()
}
