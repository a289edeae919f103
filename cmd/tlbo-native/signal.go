package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tlbo-native/tlbo-native/internal/external"
)

// signalStop is the cause of a run stopped by a signal.
type signalStop struct{ sig syscall.Signal }

func (s *signalStop) Error() string {
	return fmt.Sprintf("stopped by %s: the evaluations in progress were given up (their programs killed) and are not "+
		"journaled; the journal is complete: rerun with --resume to continue", signalName(s.sig))
}

// status is the exit status of a process stopped by the signal: 128 + its
// number, as a shell reports a process the signal killed.
func (s *signalStop) status() int { return 128 + int(s.sig) }

// signalName names SIGINT and SIGTERM as users type them.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// stopOnSignal returns a context that the first SIGINT or SIGTERM cancels
// with a *signalStop cause: the run stops proposing, its programs that are
// evaluating are killed (their process groups: what they started dies
// too) and their objects left for --resume, and the journal ends on a
// complete record. A second signal kills every running program's process
// group and exits at once (the journal holds what was complete; a resume
// drops a torn last line). stop ends the watch and restores the default
// handling.
func stopOnSignal(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var s os.Signal
		select {
		case s = <-sigs:
		case <-done:
			return
		}
		sig := s.(syscall.Signal)
		fmt.Fprintf(os.Stderr, "\ntlbo-native: %s: stopping (the programs evaluating are killed, the journal is finished; "+
			"%s again exits at once)\n", signalName(sig), signalName(sig))
		cancel(&signalStop{sig: sig})
		select {
		case s = <-sigs:
		case <-done:
			return
		}
		sig = s.(syscall.Signal)
		n := external.KillGroups()
		fmt.Fprintf(os.Stderr, "tlbo-native: %s again: exiting at once (%d programs' process groups killed); rerun with --resume "+
			"to continue\n", signalName(sig), n)
		os.Exit(128 + int(sig))
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
