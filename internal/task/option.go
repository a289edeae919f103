package task

import (
	"fmt"
	"os"
	"slices"
	"time"
)

// Verb names a command that takes a task's options. A task's option applies
// to the verbs it lists, and the command line offers it only there: `score
// molecule --help` lists the molecule task's options of the score verb and
// nothing else, and any other option is refused, named.
type Verb string

// The verbs that take task options.
const (
	VerbData     Verb = "data"
	VerbScore    Verb = "score"
	VerbTrain    Verb = "train"
	VerbOptimize Verb = "optimize"
	VerbEncode   Verb = "encode"
	VerbDecode   Verb = "decode"
	VerbImport   Verb = "checkpoint import"
	VerbAnalyze  Verb = "analyze"
)

// Kind is the type of an option's value.
type Kind int

const (
	// KindString is any text.
	KindString Kind = iota
	// KindFile is the path of an existing file ("" when not given: the
	// task's default place); a path that names no regular file is refused.
	KindFile
	// KindInt is an integer of at least the option's Min.
	KindInt
	// KindBool is a switch (--name, or --name=false).
	KindBool
	// KindDuration is a time span such as 90s or 10m (time.ParseDuration);
	// its range is the command line's (cliutil's table of flag ranges).
	KindDuration
)

// Option is a task's own setting, offered as a typed flag by the verbs it
// lists.
type Option struct {
	Name, Usage string
	Kind        Kind
	// Default is the value when the flag is not given: a string (KindString,
	// KindFile), an int (KindInt), a bool (KindBool) or a time.Duration
	// (KindDuration); nil is the kind's zero value.
	Default any
	// Min is the smallest value of a KindInt option.
	Min int
	// Verbs are the verbs that take the option.
	Verbs []Verb
}

// StringOption returns a text option.
func StringOption(name, def, usage string, verbs ...Verb) Option {
	return Option{Name: name, Usage: usage, Kind: KindString, Default: def, Verbs: verbs}
}

// FileOption returns an option naming an existing file (none by default).
func FileOption(name, usage string, verbs ...Verb) Option {
	return Option{Name: name, Usage: usage, Kind: KindFile, Default: "", Verbs: verbs}
}

// IntOption returns an integer option of at least min.
func IntOption(name string, def, min int, usage string, verbs ...Verb) Option {
	return Option{Name: name, Usage: usage, Kind: KindInt, Default: def, Min: min, Verbs: verbs}
}

// DurationOption returns a time-span option.
func DurationOption(name string, def time.Duration, usage string, verbs ...Verb) Option {
	return Option{Name: name, Usage: usage, Kind: KindDuration, Default: def, Verbs: verbs}
}

// BoolOption returns a switch, off by default.
func BoolOption(name, usage string, verbs ...Verb) Option {
	return Option{Name: name, Usage: usage, Kind: KindBool, Default: false, Verbs: verbs}
}

// For reports whether verb takes the option.
func (o Option) For(verb Verb) bool { return slices.Contains(o.Verbs, verb) }

// Zero returns the option's default, typed by its kind.
func (o Option) Zero() any {
	if o.Default != nil {
		return o.Default
	}
	switch o.Kind {
	case KindInt:
		return 0
	case KindBool:
		return false
	case KindDuration:
		return time.Duration(0)
	}
	return ""
}

// Check returns an error naming the flag when v is not a valid value of the
// option: a value of another type, a path that names no regular file, an
// integer below Min.
func (o Option) Check(v any) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("--%s %v: %s", o.Name, v, fmt.Sprintf(format, args...))
	}
	switch o.Kind {
	case KindString, KindFile:
		s, ok := v.(string)
		if !ok {
			return bad("want text")
		}
		if o.Kind == KindFile && s != "" {
			st, err := os.Stat(s)
			switch {
			case err != nil:
				return bad("%v", unwrapPath(err))
			case !st.Mode().IsRegular():
				return bad("not a regular file")
			}
		}
	case KindInt:
		n, ok := v.(int)
		if !ok {
			return bad("want an integer")
		}
		if n < o.Min {
			return bad("want at least %d", o.Min)
		}
	case KindBool:
		if _, ok := v.(bool); !ok {
			return bad("want true or false")
		}
	case KindDuration:
		if _, ok := v.(time.Duration); !ok {
			return bad("want a duration such as 90s or 10m")
		}
	}
	return nil
}

// unwrapPath drops the operation and path of a *os.PathError (the message
// names the path already).
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Values are the values of a verb's task options, by name, typed by their
// kind. A value that is absent reads as its type's zero value.
type Values map[string]any

// OptionValues returns the defaults of the options verb takes.
func OptionValues(opts []Option, verb Verb) Values {
	v := Values{}
	for _, o := range opts {
		if o.For(verb) {
			v[o.Name] = o.Zero()
		}
	}
	return v
}

// String returns a text or file option's value.
func (v Values) String(name string) string {
	s, _ := v[name].(string)
	return s
}

// Int returns an integer option's value.
func (v Values) Int(name string) int {
	n, _ := v[name].(int)
	return n
}

// Duration returns a time-span option's value.
func (v Values) Duration(name string) time.Duration {
	d, _ := v[name].(time.Duration)
	return d
}

// Bool returns a switch's value.
func (v Values) Bool(name string) bool {
	b, _ := v[name].(bool)
	return b
}
