package bo

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// InitialFile holds a run's initial oracle calls: the labelled start's
// objects when the objective scored them for this run (the PMO protocol's
// starting molecules, which the benchmark charges to the budget), keys and
// scores in the order they count (arrays points and scores). The task flow
// writes it before the loop starts (task.Defined.Optimize), records their
// number in the configuration field InitialCallsField, and ReadCurve puts
// them before the run's distinct evaluations (Curve.OracleCalls). A run
// without the field has no initial calls: its labelled start cost none.
const InitialFile = "initial.npz"

// InitialCallsField is the configuration field with the number of a run's
// initial oracle calls.
const InitialCallsField = "initial-calls"

// WriteInitial records a run's initial oracle calls in dir/InitialFile,
// atomically, for a new run (no config.json yet). A resumed run keeps its
// file, which is written only when missing: Run refuses to resume with
// another labelled start (the configuration's data-sha256 digests its
// objects and scores), naming what differs.
func WriteInitial(dir string, calls []Evaluation) error {
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err == nil {
		if _, err := os.Stat(filepath.Join(dir, InitialFile)); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bo: run directory: %w", err)
	}
	n := len(calls)
	points, scores := make([]string, n), make([]float64, n)
	for i, c := range calls {
		points[i], scores[i] = c.Object, c.Score
	}
	return numpy.WriteNPZ(filepath.Join(dir, InitialFile), []numpy.Array{
		{Name: "points", Shape: []int{n}, Data: nonNil(points)},
		{Name: "scores", Shape: []int{n}, Data: nonNil(scores)},
	})
}

// ReadInitial reads a run's initial oracle calls from dir/InitialFile (an
// error wrapping fs.ErrNotExist when there is none).
func ReadInitial(dir string) ([]Evaluation, error) {
	path := filepath.Join(dir, InitialFile)
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	var points []string
	var scores []float64
	for _, a := range arrays {
		switch a.Name {
		case "points":
			points, _ = a.Data.([]string)
		case "scores":
			if scores, err = a.Float64s(); err != nil {
				return nil, fmt.Errorf("%s: scores: %w", path, err)
			}
		}
	}
	if points == nil || scores == nil || len(points) != len(scores) {
		return nil, fmt.Errorf("%s: want arrays points (str) and scores of one length", path)
	}
	out := make([]Evaluation, len(points))
	for i := range points {
		if math.IsNaN(scores[i]) || math.IsInf(scores[i], 0) {
			return nil, fmt.Errorf("%s: scores[%d] is %v: initial calls' scores are finite", path, i, scores[i])
		}
		out[i] = Evaluation{Object: points[i], Score: scores[i]}
	}
	return out, nil
}
