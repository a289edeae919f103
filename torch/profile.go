package torch

// #include <stdlib.h>
// #include "tlbo.h"
import "C"

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"unsafe"
)

// Profile runs fn under libtorch's operator profiler and writes what it
// recorded, forward and backward operators alike, to path as a Chrome trace
// (open it in chrome://tracing or Perfetto, or summarise it with
// ReadProfile). libtorch profiles one OS thread, so fn runs locked to the
// calling goroutine's thread: ops that fn issues from other goroutines are
// not recorded. Times are the host's: on CUDA they measure launches, not
// kernels. The trace is written to a temporary file and renamed.
func Profile(path string, fn func() error) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tmp := path + ".tmp"
	ctmp := C.CString(tmp)
	defer C.free(unsafe.Pointer(ctmp))
	var msg *C.char
	if err := takeError(C.tlbo_profile_start(ctmp, &msg), msg, "profile "+path); err != nil {
		return err
	}
	defer func() {
		var msg *C.char
		if stopErr := takeError(C.tlbo_profile_stop(&msg), msg, "profile "+path); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		if err != nil {
			_ = os.Remove(tmp)
			return
		}
		if renameErr := os.Rename(tmp, path); renameErr != nil {
			err = fmt.Errorf("profile: %w", renameErr)
		}
	}()
	return fn()
}

// ProfileEntry is the time of one operator name in a profile.
type ProfileEntry struct {
	Name  string
	Calls int
	Total float64 // µs, including the operators it called
	Self  float64 // µs, excluding them
}

// traceEvent is one complete event ("ph": "X") of a Chrome trace.
type traceEvent struct {
	Name string  `json:"name"`
	Ph   string  `json:"ph"`
	Ts   float64 `json:"ts"`
	Dur  float64 `json:"dur"`
	Tid  int64   `json:"tid"`
}

// ReadProfile summarises a trace written by Profile per operator name,
// sorted by self time, largest first. Self time is an event's duration less
// that of the events nested in it on the same thread.
func ReadProfile(path string) ([]ProfileEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	var events []traceEvent
	if err := json.Unmarshal(data, &events); err != nil {
		return nil, fmt.Errorf("read profile %s: %w", path, err)
	}
	byName := map[string]*ProfileEntry{}
	for _, e := range selfTimes(events) {
		p := byName[e.Name]
		if p == nil {
			p = &ProfileEntry{Name: e.Name}
			byName[e.Name] = p
		}
		p.Calls++
		p.Total += e.Total
		p.Self += e.Self
	}
	out := make([]ProfileEntry, 0, len(byName))
	for _, p := range byName {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b ProfileEntry) int {
		return cmp.Or(cmp.Compare(b.Self, a.Self), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// selfTimes returns each complete event with its self time: events are
// visited in start order, outer before inner, and each is charged to the
// innermost open event that contains it.
func selfTimes(events []traceEvent) []ProfileEntry {
	complete := slices.DeleteFunc(slices.Clone(events), func(e traceEvent) bool { return e.Ph != "X" })
	slices.SortStableFunc(complete, func(a, b traceEvent) int {
		return cmp.Or(cmp.Compare(a.Tid, b.Tid), cmp.Compare(a.Ts, b.Ts), cmp.Compare(b.Dur, a.Dur))
	})
	out := make([]ProfileEntry, len(complete))
	var open []int // indices into complete, innermost last
	for i, e := range complete {
		out[i] = ProfileEntry{Name: e.Name, Calls: 1, Total: e.Dur, Self: e.Dur}
		for len(open) > 0 {
			top := complete[open[len(open)-1]]
			if top.Tid == e.Tid && e.Ts < top.Ts+top.Dur {
				break
			}
			open = open[:len(open)-1]
		}
		if len(open) > 0 {
			out[open[len(open)-1]].Self -= e.Dur
		}
		open = append(open, i)
	}
	return out
}
