package chem

// The library directory, as in torch/cgo.go: build.sh builds with the tag
// tlbo_libdir and passes its BUILD_DIR and each binary's run path itself; a plain
// go build or go test in the checkout links against build/ and finds it there.

// #cgo CFLAGS: -I${SRCDIR}/../../native/chem
// #cgo LDFLAGS: -ltlbo_chem
// #cgo !tlbo_libdir LDFLAGS: -L${SRCDIR}/../../build -Wl,-rpath,${SRCDIR}/../../build
// #include <stdlib.h>
// #include "chem.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Error is a failure reported by RDKit, with the operation that failed.
type Error struct {
	Op  string // e.g. "parse SMILES" or "kekulize"
	Msg string // RDKit's message
}

func (e *Error) Error() string { return fmt.Sprintf("chem: %s: %s", e.Op, e.Msg) }

// takeError converts a status and a native error string into an error naming op,
// and releases the string.
func takeError(status C.int, msg *C.char, op string) error {
	if status == 0 {
		return nil
	}
	text := "unknown error"
	if msg != nil {
		text = C.GoString(msg)
		C.tlbo_chem_free(unsafe.Pointer(msg))
	}
	return &Error{Op: op, Msg: text}
}

// takeString converts a malloc'd C string into a Go string and releases it.
func takeString(s *C.char) string {
	defer C.tlbo_chem_free(unsafe.Pointer(s))
	return C.GoString(s)
}

// SetLogging turns RDKit's own log lines (on stderr) on or off; they are off
// by default. It only switches boost's log sinks, which do not fail in
// practice; were they to, RDKit would log as before, so there is no error.
func SetLogging(on bool) {
	var msg *C.char
	_ = takeError(C.tlbo_chem_set_logging(cbool(on), &msg), msg, "set logging")
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
