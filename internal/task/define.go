package task

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/models"
)

// Defined is a task's Spec as a Task, with the typed access the generic
// flows and the task's tests use: its objective and data set over the
// task's objects O, and its VAE as the BO loop's model.
type Defined[O, E any] struct{ s Spec[O, E] }

var (
	_ Task    = (*Defined[string, models.Dense])(nil)
	_ Diverse = (*Defined[string, models.Dense])(nil)
)

// Define turns a task package's Spec into a Task for Register; it panics on
// an incomplete spec (a programming error).
func Define[O, E any](s Spec[O, E]) *Defined[O, E] {
	if err := s.Validate(); err != nil {
		panic(err)
	}
	return &Defined[O, E]{s: s}
}

func (d *Defined[O, E]) Name() string       { return d.s.Name }
func (d *Defined[O, E]) Usage() string      { return d.s.Usage }
func (d *Defined[O, E]) Defaults() Defaults { return d.s.Defaults }
func (d *Defined[O, E]) Options() []Option  { return slices.Clone(d.s.Options) }
func (d *Defined[O, E]) Networks() []string { return slices.Clone(d.s.Networks) }

// Spec returns the task's spec.
func (d *Defined[O, E]) Spec() Spec[O, E] { return d.s }

func (d *Defined[O, E]) unsupported(verb string) error {
	return fmt.Errorf("task %s: %s is not supported", d.s.Name, verb)
}

// Objective returns the task's black box under env's options.
func (d *Defined[O, E]) Objective(env *Env) (Objective[O], error) { return d.s.Objective(env) }

// Dataset is a task's training objects with their scores and where they came
// from.
type Dataset[O any] struct {
	bo.Data[O]
	// Source says where the data came from (a file, or "synthetic ...").
	Source string
}

// Dataset returns the task's training objects with their scores.
func (d *Defined[O, E]) Dataset(env *Env) (Dataset[O], error) {
	objs, scores, source, err := d.s.Dataset(env)
	if err != nil {
		return Dataset[O]{}, err
	}
	if len(objs) != len(scores) {
		return Dataset[O]{}, fmt.Errorf("task %s: data set of %d objects with %d scores", d.s.Name, len(objs), len(scores))
	}
	return Dataset[O]{Data: bo.Data[O]{Objects: objs, Scores: scores}, Source: source}, nil
}

// ErrNoDiversity is Diversity's error for a task that defines none.
var ErrNoDiversity = errors.New("the task defines no diversity of its objects")

// Diverse is a task that can measure the diversity of a set of its objects
// (every Defined task is one; Diversity then says ErrNoDiversity when its
// spec has none).
type Diverse interface {
	// Diversity returns the diversity of the objects of keys (a run's
	// keys, as results.npz holds them).
	Diversity(keys []string) (float64, error)
}

// Diversity returns the diversity of the objects of keys under the task's
// Spec.Diversity, or an error wrapping ErrNoDiversity.
func (d *Defined[O, E]) Diversity(keys []string) (float64, error) {
	if d.s.Diversity == nil {
		return 0, fmt.Errorf("task %s: %w", d.s.Name, ErrNoDiversity)
	}
	return d.s.Diversity(keys)
}

func (d *Defined[O, E]) BuildData(env *Env, dir string) error {
	if d.s.BuildData == nil {
		return d.unsupported("data")
	}
	return d.s.BuildData(env, dir)
}

func (d *Defined[O, E]) Score(env *Env, args []string) error {
	if d.s.Score == nil {
		return d.unsupported("score")
	}
	return d.s.Score(env, args)
}

func (d *Defined[O, E]) Import(env *Env, req ImportRequest) error {
	if d.s.Import == nil {
		return d.unsupported("checkpoint import")
	}
	return d.s.Import(env, req)
}

// bind hands the network of a verb to the spec's Bind, if any.
func (d *Defined[O, E]) bind(env *Env, net models.VAE[E]) error {
	if d.s.Bind == nil {
		return nil
	}
	return d.s.Bind(env, net)
}

// loadNetwork loads a checkpoint of one of the task's networks onto
// env.Device and binds it.
func (d *Defined[O, E]) loadNetwork(env *Env, path string) (models.VAE[E], models.Header, error) {
	net, h, err := models.LoadVAE[E](path, env.Device, d.s.Networks...)
	if err != nil {
		return nil, h, err
	}
	if err := d.bind(env, net); err != nil {
		net.Close()
		return nil, h, err
	}
	return net, h, nil
}

// materialise completes examples left to be made on demand (Spec.Materialise).
func (d *Defined[O, E]) materialise(ex []E) ([]E, error) {
	if d.s.Materialise == nil {
		return ex, nil
	}
	return d.s.Materialise(ex)
}

// examples converts objects into network examples, reusing cached ones.
func (d *Defined[O, E]) examples(objs []O, cache map[string]E, key func(O) string) ([]E, error) {
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
