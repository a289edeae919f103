package external

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// DefaultFailFast is the number of first evaluations that, all failed,
// show a program broken (FailFast).
const DefaultFailFast = 3

// Broken is the error of a program found broken by FailFast: it cannot be
// started, or its first evaluations all failed.
type Broken struct {
	// Program is the program's command line.
	Program string
	// Failures are what showed it broken: the start failure, or the
	// failures of the first evaluations, in the order they ended.
	Failures []*Failure
}

// Error names the program and says how it failed: the reason of each
// failure (exit status or signal and the last lines of its standard error,
// the timeout, the error reply), the same reasons counted once.
func (b *Broken) Error() string {
	if len(b.Failures) == 1 && b.Failures[0].Kind == FailStart {
		return fmt.Sprintf("the objective's program cannot be started: %s", trimObjective(b.Failures[0].Reason))
	}
	var reasons []string
	count := map[string]int{}
	for _, f := range b.Failures {
		r := trimObjective(f.Reason)
		if count[r]++; count[r] == 1 {
			reasons = append(reasons, r)
		}
	}
	for i, r := range reasons {
		if n := count[r]; n > 1 {
			reasons[i] = fmt.Sprintf("%d x %s", n, r)
		}
	}
	return fmt.Sprintf("the objective's program %s failed each of its first %d evaluations: %s", b.Program, len(b.Failures),
		strings.Join(reasons, "; "))
}

// trimObjective drops the "objective: " that starts most reasons.
func trimObjective(reason string) string {
	return strings.TrimPrefix(reason, "objective: ")
}

// FailFast tells a broken program from objects that fail: a program that
// cannot be started is broken at once, and so is one whose first Max
// evaluations all fail (whatever the reasons: an error reply, a crash, a
// timeout, a score that is not a number). Once an evaluation succeeded,
// failures are the objects' again. Evaluations given up (FailClosed, a
// cancelled context) do not count. It is safe for concurrent use.
type FailFast struct {
	program string
	max     int

	mu       sync.Mutex
	ok       bool       // an evaluation succeeded
	failures []*Failure // failures before the first success
	broken   *Broken
}

// NewFailFast returns the rule for the program of the command line
// program, broken after max failed first evaluations (0: only when it
// cannot be started).
func NewFailFast(program string, max int) *FailFast {
	return &FailFast{program: program, max: max}
}

// Broken returns the error of the program found broken, or nil.
func (f *FailFast) Broken() *Broken {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.broken
}

// Record records how an evaluation ended (err nil: a score) and returns
// the *Broken error when this outcome shows the program broken: a start
// failure (every one of them, also after the rule fired: no program ran),
// or the failure that completed the first Max. A failure of an evaluation
// that was running when the rule fired is the object's, as any later one.
func (f *FailFast) Record(err error) *Broken {
	kind := FailureKind(err)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err == nil:
		f.ok = true
		return nil
	case kind == FailStart:
		if f.broken == nil {
			f.broken = &Broken{Program: f.program, Failures: []*Failure{asFailure(err)}}
		}
		return f.broken
	case kind == "" || kind == FailClosed || f.ok || f.broken != nil || f.max <= 0:
		return nil
	}
	f.failures = append(f.failures, asFailure(err))
	if len(f.failures) < f.max {
		return nil
	}
	f.broken = &Broken{Program: f.program, Failures: f.failures}
	return f.broken
}

// asFailure returns the *Failure err is or wraps.
func asFailure(err error) *Failure {
	var fl *Failure
	if !errors.As(err, &fl) {
		return &Failure{Reason: err.Error()}
	}
	return fl
}
