package simp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// spec is the JSON form of a problem (docs/design.md section 7); pointers tell
// absent keys, which take the defaults, from zeros.
type spec struct {
	NelX       *int     `json:"nelx"`
	NelY       *int     `json:"nely"`
	VolFrac    *float64 `json:"volfrac"`
	Penal      *float64 `json:"penal,omitempty"`
	RMin       *float64 `json:"rmin,omitempty"`
	Nu         *float64 `json:"nu,omitempty"`
	XMin       *float64 `json:"xmin,omitempty"`
	Iterations *int     `json:"iterations,omitempty"`
	Move       *float64 `json:"move,omitempty"`
	Damping    *float64 `json:"damping,omitempty"`
}

// ParseSpec reads a problem spec:
//
//	{"nelx", "nely", "volfrac", "penal" (3), "rmin" (1.5), "nu" (1/3),
//	 "xmin" (0.001), "iterations" (100), "move" (0.2), "damping" (0.5),
//	 "fixed": [[node, "x"|"y"], ...], "loads": [[node, "x"|"y", value], ...]}
//
// with the defaults in brackets. Unknown keys are errors, and the problem is
// validated (see [Problem.Validate]).
func ParseSpec(r io.Reader) (Problem, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Problem{}, err
	}
	// Axis names arrive as strings inside numeric tuples: decode the tuples
	// as raw JSON and convert them by hand.
	var raw struct {
		spec
		Fixed [][]json.RawMessage `json:"fixed"`
		Loads [][]json.RawMessage `json:"loads"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return Problem{}, errors.New("spec: empty input")
		}
		return Problem{}, fmt.Errorf("spec: %w", err)
	}
	if dec.More() {
		return Problem{}, errors.New("spec: trailing data after the object")
	}
	s := raw.spec
	switch {
	case s.NelX == nil:
		return Problem{}, errors.New("spec: missing nelx")
	case s.NelY == nil:
		return Problem{}, errors.New("spec: missing nely")
	case s.VolFrac == nil:
		return Problem{}, errors.New("spec: missing volfrac")
	}
	p := NewProblem(*s.NelX, *s.NelY, *s.VolFrac)
	setIf(&p.Penal, s.Penal)
	setIf(&p.RMin, s.RMin)
	setIf(&p.Nu, s.Nu)
	setIf(&p.XMin, s.XMin)
	setIf(&p.Iterations, s.Iterations)
	setIf(&p.Move, s.Move)
	setIf(&p.Damping, s.Damping)
	for i, t := range raw.Fixed {
		f, err := parseTuple(t, false)
		if err != nil {
			return Problem{}, fmt.Errorf("spec: fixed[%d]: %w", i, err)
		}
		p.Fixed = append(p.Fixed, Fixed{Node: f.Node, Axis: f.Axis})
	}
	for i, t := range raw.Loads {
		l, err := parseTuple(t, true)
		if err != nil {
			return Problem{}, fmt.Errorf("spec: loads[%d]: %w", i, err)
		}
		p.Loads = append(p.Loads, l)
	}
	if err := p.Validate(); err != nil {
		return Problem{}, fmt.Errorf("spec: %w", err)
	}
	return p, nil
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// parseTuple reads [node, "x"|"y"] or, with value, [node, "x"|"y", value].
func parseTuple(t []json.RawMessage, value bool) (Load, error) {
	want := 2
	if value {
		want = 3
	}
	if len(t) != want {
		return Load{}, fmt.Errorf("want %d entries, got %d", want, len(t))
	}
	var node float64
	if err := json.Unmarshal(t[0], &node); err != nil || node != math.Trunc(node) || math.Abs(node) > 1<<40 {
		return Load{}, fmt.Errorf("node %s is not an integer", t[0])
	}
	var axis string
	if err := json.Unmarshal(t[1], &axis); err != nil || (axis != "x" && axis != "y") {
		return Load{}, fmt.Errorf("axis %s is not \"x\" or \"y\"", t[1])
	}
	l := Load{Node: int(node), Axis: X}
	if axis == "y" {
		l.Axis = Y
	}
	if value {
		if err := json.Unmarshal(t[2], &l.Value); err != nil {
			return Load{}, fmt.Errorf("value %s is not a finite number", t[2])
		}
	}
	return l, nil
}

// ReadSpec reads and validates the spec file at path; errors name the file.
func ReadSpec(path string) (Problem, error) {
	f, err := os.Open(path)
	if err != nil {
		return Problem{}, err
	}
	defer f.Close()
	p, err := ParseSpec(f)
	if err != nil {
		return Problem{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// WriteSpec writes p as a spec with every setting spelled out.
func WriteSpec(w io.Writer, p Problem) error {
	fixed := make([][]any, len(p.Fixed))
	for i, f := range p.Fixed {
		fixed[i] = []any{f.Node, f.Axis.String()}
	}
	loads := make([][]any, len(p.Loads))
	for i, l := range p.Loads {
		loads[i] = []any{l.Node, l.Axis.String(), l.Value}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(map[string]any{
		"nelx": p.NelX, "nely": p.NelY, "volfrac": p.VolFrac, "penal": p.Penal, "rmin": p.RMin,
		"nu": p.Nu, "xmin": p.XMin, "iterations": p.Iterations, "move": p.Move, "damping": p.Damping,
		"fixed": fixed, "loads": loads,
	})
}
