package torch

// The library directory: build.sh builds with the tag tlbo_libdir and passes its
// BUILD_DIR and each binary's run path itself; a plain go build or go test in the
// checkout links against build/ and finds it there.

// #cgo CFLAGS: -I${SRCDIR}/../native
// #cgo LDFLAGS: -ltlbo_native
// #cgo !tlbo_libdir LDFLAGS: -L${SRCDIR}/../build -Wl,-rpath,${SRCDIR}/../build
// #include <stdlib.h>
// #include "tlbo.h"
import "C"

import (
	"errors"
	"fmt"
)

// takeError converts a status and a native error string into a Go error naming op,
// and releases the string.
func takeError(status C.int, msg *C.char, op string) error {
	if status == 0 {
		return nil
	}
	text := "unknown error"
	if msg != nil {
		text = C.GoString(msg)
		C.tlbo_free(unsafePointer(msg))
	}
	return &Error{Op: op, Msg: text}
}

// Error is a failure reported by libtorch, with the name of the operation that failed.
type Error struct {
	Op  string // e.g. "aten::matmul" or "load"
	Msg string // libtorch's message
}

func (e *Error) Error() string { return fmt.Sprintf("torch: %s: %s", e.Op, e.Msg) }

// errClosed is returned when a closed tensor is used.
var errClosed = errors.New("tensor is closed")
