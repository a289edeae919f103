package task

import (
	"fmt"
	"slices"
)

// defined is a Spec as a Task.
type defined[O, E any] struct{ s Spec[O, E] }

// Define turns a task package's Spec into a Task for Register; it panics on
// an incomplete spec (a programming error).
func Define[O, E any](s Spec[O, E]) Task {
	if err := s.Validate(); err != nil {
		panic(err)
	}
	return &defined[O, E]{s: s}
}

func (d *defined[O, E]) Name() string       { return d.s.Name }
func (d *defined[O, E]) Usage() string      { return d.s.Usage }
func (d *defined[O, E]) Defaults() Defaults { return d.s.Defaults }
func (d *defined[O, E]) Options() []Option  { return slices.Clone(d.s.Options) }
func (d *defined[O, E]) Networks() []string { return slices.Clone(d.s.Networks) }

func (d *defined[O, E]) unsupported(verb string) error {
	return fmt.Errorf("task %s: %s is not supported", d.s.Name, verb)
}

func (d *defined[O, E]) Objective(env *Env) (Objective, error) {
	o, err := d.s.Objective(env)
	if err != nil {
		return nil, err
	}
	return erasedObjective[O]{o}, nil
}

func (d *defined[O, E]) Dataset(env *Env) (*Dataset, error) {
	objs, scores, source, err := d.s.Dataset(env)
	if err != nil {
		return nil, err
	}
	if len(objs) != len(scores) {
		return nil, fmt.Errorf("task %s: data set of %d objects with %d scores", d.s.Name, len(objs), len(scores))
	}
	return &Dataset{Objects: toAny(objs), Scores: scores, Source: source}, nil
}

func (d *defined[O, E]) BuildData(env *Env, dir string) error {
	if d.s.BuildData == nil {
		return d.unsupported("data")
	}
	return d.s.BuildData(env, dir)
}

func (d *defined[O, E]) Score(env *Env, args []string) error {
	if d.s.Score == nil {
		return d.unsupported("score")
	}
	return d.s.Score(env, args)
}

func (d *defined[O, E]) Import(env *Env, req ImportRequest) error {
	if d.s.Import == nil {
		return d.unsupported("checkpoint import")
	}
	return d.s.Import(env, req)
}

func (d *defined[O, E]) Plots(env *Env, dir string, best []Scored) error {
	if d.s.Plots == nil {
		return nil
	}
	return d.s.Plots(env, dir, best)
}

// erasedObjective is a TypedObjective behind any.
type erasedObjective[O any] struct{ o TypedObjective[O] }

func (e erasedObjective[O]) Score(obj any) (float64, error) {
	v, ok := obj.(O)
	if !ok {
		return 0, fmt.Errorf("object of type %T, want %T", obj, v)
	}
	return e.o.Score(v)
}

func (e erasedObjective[O]) FailureScore() float64       { return e.o.FailureScore() }
func (e erasedObjective[O]) Deterministic() bool         { return e.o.Deterministic() }
func (e erasedObjective[O]) Maximize() bool              { return e.o.Maximize() }
func (e erasedObjective[O]) Describe() map[string]string { return e.o.Describe() }

func (e erasedObjective[O]) Key(obj any) string {
	v, ok := obj.(O)
	if !ok {
		return fmt.Sprintf("<%T>", obj)
	}
	return e.o.Key(v)
}

func (e erasedObjective[O]) Parse(key string) (any, error) { return e.o.Parse(key) }

// toAny returns objs as []any.
func toAny[O any](objs []O) []any {
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

// fromAny returns objs as []O, or an error naming the first of another type.
func fromAny[O any](objs []any) ([]O, error) {
	out := make([]O, len(objs))
	for i, o := range objs {
		v, ok := o.(O)
		if !ok {
			return nil, fmt.Errorf("object %d is a %T, want %T", i, o, v)
		}
		out[i] = v
	}
	return out, nil
}

// bind hands env to the spec's Bind, if any.
func (d *defined[O, E]) bind(env *Env) error {
	if d.s.Bind == nil {
		return nil
	}
	return d.s.Bind(env)
}

// examples converts objects into network examples, reusing cached ones.
func (d *defined[O, E]) examples(objs []O, cache map[string]E, key func(O) string) ([]E, error) {
	out := make([]E, len(objs))
	for i, o := range objs {
		k := ""
		if cache != nil {
			k = key(o)
			if e, ok := cache[k]; ok {
				out[i] = e
				continue
			}
		}
		e, err := d.s.Example(o)
		if err != nil {
			return nil, fmt.Errorf("object %d: %w", i, err)
		}
		out[i] = e
		if cache != nil {
			cache[k] = e
		}
	}
	return out, nil
}
