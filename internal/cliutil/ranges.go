package cliutil

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"
)

// Range is the values a numeric flag takes: from Min to Max, each end
// included unless MinOpen or MaxOpen, ±Inf where there is no end; never
// NaN or ±Inf. A duration counts in seconds.
type Range struct {
	Min, Max         float64
	MinOpen, MaxOpen bool
	// WarnAbove, when positive, is the value above which the flag is
	// taken with a warning (Warning says why).
	WarnAbove float64
	Warning   string
	// Note says what the range rests on or what a special value means
	// ("0: libtorch's default").
	Note string
}

// AtLeast is the range [min, +Inf).
func AtLeast(min float64) Range { return Range{Min: min, Max: math.Inf(1)} }

// Positive is the range (0, +Inf).
func Positive() Range { return Range{Min: 0, MinOpen: true, Max: math.Inf(1)} }

// Between is the range [min, max].
func Between(min, max float64) Range { return Range{Min: min, Max: max} }

// Open is the range (min, max).
func Open(min, max float64) Range { return Range{Min: min, Max: max, MinOpen: true, MaxOpen: true} }

// Any is every finite value.
func Any() Range { return Range{Min: math.Inf(-1), Max: math.Inf(1)} }

// With returns r with its note set.
func (r Range) With(note string) Range {
	r.Note = note
	return r
}

// Contains reports whether v is in the range (and finite).
func (r Range) Contains(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	lo := v > r.Min || (!r.MinOpen && v == r.Min)
	hi := v < r.Max || (!r.MaxOpen && v == r.Max)
	return lo && hi
}

// String describes the range: "at least 1", "> 0", "in [0, 1)", "0 to 8".
func (r Range) String() string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var s string
	switch {
	case math.IsInf(r.Min, -1) && math.IsInf(r.Max, 1):
		s = "a finite number"
	case math.IsInf(r.Max, 1) && r.MinOpen:
		s = "> " + g(r.Min)
	case math.IsInf(r.Max, 1):
		s = "at least " + g(r.Min)
	case !r.MinOpen && !r.MaxOpen && r.Min == math.Trunc(r.Min) && r.Max == math.Trunc(r.Max):
		s = g(r.Min) + " to " + g(r.Max)
	default:
		s = fmt.Sprintf("in %s%s, %s%s", map[bool]string{true: "(", false: "["}[r.MinOpen], g(r.Min), g(r.Max),
			map[bool]string{true: ")", false: "]"}[r.MaxOpen])
	}
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

// coresRange bounds a count of threads or workers that share the cores:
// up to 4 x the cores (more only queue; 1,000 OpenBLAS and libtorch threads
// on 2 cores stalled a run), with a warning above the cores.
func coresRange(zero string) Range {
	n := runtime.NumCPU()
	return Range{Min: 0, Max: float64(4 * n), WarnAbove: float64(n),
		Note:    fmt.Sprintf("at most 4 x the %d cores; 0: %s", n, zero),
		Warning: fmt.Sprintf("more than the %d cores: the extra threads wait for the others (and spin while they wait)", n)}
}

// flagRanges is the range of every numeric flag of the command line, by
// flag name, or by "COMMAND/NAME" where a command's flag means something
// else (COMMAND its own name, not its parents'). A task's own options
// (task.Option) are the task's: their Min is checked where their values
// are read. TestEveryNumericFlagHasARange (cmd/tlbo-native) goes through
// every command and task verb.
var flagRanges = map[string]Range{
	"attempts":               AtLeast(0).With("0: the network's default"),
	"batch":                  AtLeast(1),
	"batch-size":             AtLeast(1),
	"best-quantile":          Between(0, 1),
	"beta-every":             AtLeast(0),
	"beta-factor":            AtLeast(0),
	"beta-final":             AtLeast(0),
	"beta-init":              AtLeast(0),
	"beta-step":              AtLeast(0),
	"beta-warmup":            AtLeast(0),
	"bins":                   AtLeast(1),
	"blas-threads":           coresRange("TLBO_BLAS_THREADS, else the cores"),
	"box":                    Positive(),
	"budget":                 AtLeast(1),
	"candidates":             AtLeast(0),
	"checkpoint-every":       AtLeast(0).With("0: after each epoch only"),
	"d":                      AtLeast(1),
	"decode-attempts":        AtLeast(0).With("0: the network's default"),
	"decodes":                AtLeast(1),
	"epochs":                 AtLeast(1),
	"eta":                    Open(0, 1),
	"eval-timeout":           AtLeast(0).With("0: none"),
	"evaluations":            AtLeast(1),
	"evaluators":             AtLeast(0).With("0: q"),
	"gp-iters":               AtLeast(1),
	"grad-clip":              AtLeast(0),
	"hidden":                 AtLeast(1),
	"inducing":               AtLeast(0).With("0: an exact GP"),
	"initial-retrain-epochs": AtLeast(0),
	"labelled-fraction":      Between(0, 1),
	"latent":                 AtLeast(0).With("0: the task's"),
	"lr":                     Positive(),
	"lr-decay":               Between(0, 1),
	"lr-decay-every":         AtLeast(0).With("0: no decay"),
	"lr-factor":              Open(0, 1),
	"lr-patience":            AtLeast(0),
	"m":                      AtLeast(1),
	"margin":                 AtLeast(0),
	"max":                    Positive(),
	"max-iter":               AtLeast(0).With("0: the default"),
	"max-pairs":              AtLeast(1),
	"max-points":             AtLeast(0).With("0: all"),
	"metric-weight":          AtLeast(0),
	"min":                    Positive(),
	"min-lr":                 AtLeast(0),
	"n":                      AtLeast(1),
	"n-best":                 AtLeast(0),
	"n-rand":                 AtLeast(0),
	"novelty-redo":           AtLeast(0),
	"nu":                     AtLeast(0).With("0: unset"),
	"perturb-tries":          AtLeast(0),
	"pred-weight":            AtLeast(0),
	"prior-samples":          AtLeast(0).With("0: skip"),
	"q":                      AtLeast(1),
	"raw-samples":            AtLeast(1),
	"repeat-tries":           AtLeast(1),
	"reps":                   AtLeast(1),
	"restarts":               AtLeast(1),
	"retrain-batch-size":     AtLeast(1),
	"retrain-epochs":         AtLeast(0),
	"retrain-every":          AtLeast(1),
	"retrain-grad-clip":      AtLeast(0),
	"samples-per-model":      AtLeast(0),
	"seed":                   Between(0, math.MaxUint64),
	"splits":                 AtLeast(1),
	"steps":                  AtLeast(1),
	"tau":                    AtLeast(0).With("0: never"),
	"test-fraction":          Open(0, 1),
	"threads":                coresRange("libtorch's default, and OPENBLAS_NUM_THREADS or all cores"),
	"threshold":              Between(0, 1).With("0: the task's"),
	"top":                    AtLeast(0),
	"tr-failures":            AtLeast(0).With("0: ceil(max(4, d) / q)"),
	"tr-init":                Positive(),
	"tr-max":                 Positive(),
	"tr-min":                 Positive(),
	"tr-successes":           AtLeast(1),
	"val-fraction":           Range{Min: 0, Max: 1, MaxOpen: true},
	"warm-iter":              AtLeast(0).With("0: the default"),
	"warm-starts":            AtLeast(0).With("0: none"),
	"workers":                coresRange("all cores"),
}

// RangeOf returns the range of the flag name of command cmd (its own
// name) and whether it has one.
func RangeOf(cmd, name string) (Range, bool) {
	if r, ok := flagRanges[cmd+"/"+name]; ok {
		return r, true
	}
	r, ok := flagRanges[name]
	return r, ok
}

// NumericValue returns the value of a numeric flag of c (a duration in
// seconds) and whether the flag is numeric.
func NumericValue(c *cli.Context, name string) (float64, bool) {
	switch v := c.Value(name).(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		return v, true
	case time.Duration:
		return v.Seconds(), true
	}
	return 0, false
}

// ranged reports whether f is a flag that flagRanges must cover: a
// numeric flag of urfave/cli's types (a task's options are other types).
func ranged(f cli.Flag) bool {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag, *cli.Float64Flag, *cli.DurationFlag:
		return true
	}
	return false
}

// Unranged returns the numeric flags of cmd that have no range (for the
// test that every one has).
func Unranged(cmd *cli.Command) []string {
	var out []string
	for _, f := range cmd.Flags {
		if name := f.Names()[0]; ranged(f) {
			if _, ok := RangeOf(cmd.Name, name); !ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// CheckRanges checks the numeric flags the user set on c's command
// against their ranges (flagRanges): the first out of range is an error
// naming the flag, its value and the range; one above its WarnAbove is
// taken with a warning on w.
func CheckRanges(c *cli.Context, w io.Writer) error {
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if !ranged(f) || !c.IsSet(name) {
			continue
		}
		r, ok := RangeOf(c.Command.Name, name)
		v, numeric := NumericValue(c, name)
		if !ok || !numeric {
			continue
		}
		if !r.Contains(v) {
			return fmt.Errorf("--%s %v: want %s", name, c.Value(name), r)
		}
		if r.WarnAbove > 0 && v > r.WarnAbove {
			fmt.Fprintf(w, "warning: --%s %v is %s\n", name, c.Value(name), r.Warning)
		}
	}
	return nil
}

// WithRanges makes every command of cmds and of their subcommands check
// its numeric flags (CheckRanges, warnings on w) before its own Before and
// Action.
func WithRanges(cmds []*cli.Command, w io.Writer) {
	for _, cmd := range cmds {
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			if err := CheckRanges(c, w); err != nil {
				return err
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
		WithRanges(cmd.Subcommands, w)
	}
}
