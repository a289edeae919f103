// Package rusage reads what the process has used so far (getrusage): CPU
// time and peak memory, which on a shared machine measure work better than
// the wall clock.
package rusage

import (
	"math"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// CPUSeconds returns the user and system CPU time of the process so far
// (NaN when the system does not say).
func CPUSeconds() float64 { return cpuSeconds(syscall.RUSAGE_SELF) }

// CPUSecondsWithChildren returns CPUSeconds plus the CPU time of the
// process's children that have ended and been waited for (programs it ran),
// NaN when the system does not say.
func CPUSecondsWithChildren() float64 {
	return cpuSeconds(syscall.RUSAGE_SELF) + cpuSeconds(syscall.RUSAGE_CHILDREN)
}

// ThreadCPU runs f with its goroutine held on one OS thread and returns
// the CPU seconds that thread spent in it (NaN when the system does not
// say): the cost of work done beside other threads' work (a background
// featurisation while a network trains), which the process's CPU time
// cannot tell apart.
func ThreadCPU(f func()) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := cpuSeconds(unix.RUSAGE_THREAD)
	f()
	return cpuSeconds(unix.RUSAGE_THREAD) - start
}

// cpuSeconds returns the user and system CPU time that getrusage reports
// for who (RUSAGE_SELF, RUSAGE_CHILDREN or RUSAGE_THREAD), NaN when it
// fails.
func cpuSeconds(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return math.NaN()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// PeakRSSMB returns the process's peak resident set size in MiB (Linux
// reports ru_maxrss in KiB).
func PeakRSSMB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Maxrss) / 1024
}
