package task

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/external"
)

// lenObjective is a built-in objective of string objects: their length,
// minimised, failure score 100.
type lenObjective struct{}

func (lenObjective) Score(s string) (float64, error) { return float64(len(s)), nil }
func (lenObjective) FailureScore() float64           { return 100 }
func (lenObjective) Deterministic() bool             { return true }
func (lenObjective) Maximize() bool                  { return false }
func (lenObjective) Key(s string) string             { return strings.TrimSpace(s) }
func (lenObjective) Parse(k string) (string, error)  { return k, nil }
func (lenObjective) Describe() map[string]string     { return map[string]string{"objective": "length"} }

// TestExternalObjective: a program (awk over the JSON protocol, no shell
// between the object and it) replaces the built-in objective; keys and
// parsing stay the task's, the direction and failure score are the
// request's, and a direction that turns the task's needs a failure score.
func TestExternalObjective(t *testing.T) {
	d := &Defined[string, struct{}]{s: Spec[string, struct{}]{Name: "toy"}}
	env := &Env{}
	// The test scorer of internal/external: an object scores its length.
	prog := "/usr/bin/python3 ../external/testdata/scorer.py"
	e, err := d.newExternalObjective(env, t.TempDir(), lenObjective{}, ExternalRequest{Command: prog, Evaluators: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a, err := e.Score("C#N")
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Score("C#N(Cl)[O-]%10")
	if err != nil || !(b > a) {
		t.Errorf("scores %v, %v (%v); want the longer object to score more", a, b, err)
	}
	if e.Maximize() || e.FailureScore() != 100 || e.Key(" x ") != "x" || !e.Deterministic() ||
		e.Describe()["objective"] != CommandPrefix+prog {
		t.Errorf("direction %v, failure %v, key %q, deterministic %v, description %v: want the task's, and the program recorded",
			e.Maximize(), e.FailureScore(), e.Key(" x "), e.Deterministic(), e.Describe())
	}
	if _, err := d.newExternalObjective(env, t.TempDir(), lenObjective{}, ExternalRequest{Command: "true", Direction: "maximize"}); err == nil ||
		!strings.Contains(err.Error(), "--failure-score") {
		t.Errorf("a turned direction without a failure score: %v, want an error naming --failure-score", err)
	}
	f := -1.0
	m, err := d.newExternalObjective(env, t.TempDir(), lenObjective{}, ExternalRequest{Command: "sh -c 'exit 3'", Direction: "maximize",
		FailureScore: &f, Stochastic: true, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = m.Score("CCO")
	var fail *external.Failure
	if !m.Maximize() || m.FailureScore() != -1 || m.Deterministic() || !errors.As(err, &fail) {
		t.Errorf("maximize %v failure %v deterministic %v error %v; want the request's and a crash failure", m.Maximize(), m.FailureScore(),
			m.Deterministic(), err)
	}
	if _, err := d.newExternalObjective(env, filepath.Join(t.TempDir(), "x"), lenObjective{}, ExternalRequest{Command: "true", Executor: "cloud"}); err == nil {
		t.Error("an unknown executor was accepted")
	}
}
