package bo

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// Curve is the best score of a run against the number of distinct
// evaluations: queries whose object was evaluated for the first time in the
// run. Repeats of an object already evaluated and invalid decodes spend a
// query but no evaluation of a new object, so they add no point.
type Curve struct {
	// Dir is the run directory.
	Dir string
	// Fields is the run's configuration.
	Fields []Field
	// Maximize is the task's direction.
	Maximize bool
	// Best[i] is the best score after i distinct evaluations (see
	// BestCurve); Best[0] is the best of the labelled start.
	Best []float64
	// Queries is the number of queries of the run, Known the number of
	// them whose score was known (from the data or an earlier query) and
	// not evaluated again: repeats the loop avoided.
	Queries, Known int
	// Evaluations are the distinct evaluations in order.
	Evaluations []Evaluation
	// Initial are the run's initial oracle calls (InitialFile: a labelled
	// start the objective scored for the run), in order; none when its
	// labelled start was given.
	Initial []Evaluation
}

// Distinct returns the number of distinct evaluations of the run.
func (c Curve) Distinct() int { return len(c.Best) - 1 }

// OracleCalls returns the run's oracle calls in the order they count (the
// PMO protocol's): its initial calls, then its distinct evaluations.
func (c Curve) OracleCalls() []Evaluation {
	return append(append(make([]Evaluation, 0, len(c.Initial)+len(c.Evaluations)), c.Initial...), c.Evaluations...)
}

// Field returns the value of a configuration field and whether the run's
// configuration has it.
func (c Curve) Field(name string) (string, bool) {
	for _, f := range c.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

// Queries are a run's queries as results.npz holds them.
type Queries struct {
	// Points are the task's keys of the queried objects ("" for an invalid
	// decode), Scores their scores (opt_points, opt_point_properties).
	Points []string
	Scores []float64
	// Known marks the queries whose score was reused from the data or an
	// earlier query instead of evaluated (opt_known; nil: none).
	Known []bool
	// Failed marks the queries that scored the failure score (opt_failed;
	// nil: none known, as in runs written before it was kept).
	Failed []bool
}

// Distinct reports which queries are distinct evaluations: the object is
// valid (its key is not empty), its score was not known, and no earlier
// query of the run holds the same object.
func (q Queries) Distinct() []bool {
	out := make([]bool, len(q.Points))
	seen := make(map[string]bool, len(q.Points))
	for i, p := range q.Points {
		if p == "" || (q.Known != nil && q.Known[i]) || seen[p] {
			continue
		}
		seen[p] = true
		out[i] = true
	}
	return out
}

// Evaluation is a distinct evaluation of a run: its object's key and score.
type Evaluation struct {
	Object string
	Score  float64
}

// Evaluations returns the run's distinct evaluations in the order they
// were made (the oracle calls of the PMO protocol).
func (q Queries) Evaluations() []Evaluation {
	var out []Evaluation
	for i, d := range q.Distinct() {
		if d {
			out = append(out, Evaluation{Object: q.Points[i], Score: q.Scores[i]})
		}
	}
	return out
}

// BestCurve returns the running best after the labelled start's best,
// initial, against the number of distinct evaluations: element i is the
// best of initial and of every evaluated query up to the i-th distinct
// evaluation. A known score (q.Known) stays out, as it was not evaluated;
// an invalid decode or a repeat that was evaluated again (runs before the
// loop avoided repeats) counts with the next distinct evaluation; neither
// can improve on the best of a deterministic objective. Queries after the
// last distinct evaluation add no point. A failed query (q.Failed) is never
// the best: initial is NaN when the whole start failed, and the curve is
// NaN until an evaluation succeeds.
func BestCurve(initial float64, q Queries, maximize bool) []float64 {
	distinct := q.Distinct()
	out := make([]float64, 1, len(q.Scores)+1)
	best := initial
	out[0] = best
	for i, s := range q.Scores {
		if q.Known != nil && q.Known[i] {
			continue
		}
		failed := q.Failed != nil && q.Failed[i]
		if !failed && (math.IsNaN(best) || (maximize && s > best) || (!maximize && s < best)) {
			best = s
		}
		if distinct[i] {
			out = append(out, best)
		}
	}
	return out
}

// ReadCurve reads a run's curve from its results.npz and config.json, and
// its initial oracle calls from InitialFile when its configuration counts
// some (InitialCallsField). Runs written before opt_known existed have no
// known queries.
func ReadCurve(dir string) (Curve, error) {
	fields, err := ReadConfigFields(dir)
	if err != nil {
		return Curve{}, err
	}
	c := Curve{Dir: dir, Fields: fields}
	if v, ok := c.Field("maximize"); ok {
		if c.Maximize, err = strconv.ParseBool(v); err != nil {
			return Curve{}, fmt.Errorf("%s: field maximize: %w", filepath.Join(dir, ConfigFile), err)
		}
	}
	path := filepath.Join(dir, ResultsFile)
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return Curve{}, err
	}
	var q Queries
	var initial []float64
	havePoints := false
	for _, a := range arrays {
		switch a.Name {
		case "opt_points":
			q.Points, havePoints = a.Data.([]string)
			if !havePoints {
				err = fmt.Errorf("%T, want strings", a.Data)
			}
		case "opt_point_properties":
			q.Scores, err = a.Float64s()
		case "opt_known":
			q.Known, err = flags(a)
		case "opt_failed":
			q.Failed, err = flags(a)
		case "initial_best":
			initial, err = a.Float64s()
		}
		if err != nil {
			return Curve{}, fmt.Errorf("%s: %s: %w", path, a.Name, err)
		}
	}
	switch {
	case len(initial) != 1:
		return Curve{}, fmt.Errorf("%s: initial_best has %d values, want 1", path, len(initial))
	case !havePoints:
		return Curve{}, fmt.Errorf("%s: no opt_points", path)
	case len(q.Points) != len(q.Scores):
		return Curve{}, fmt.Errorf("%s: %d opt_points but %d opt_point_properties", path, len(q.Points), len(q.Scores))
	case q.Known != nil && len(q.Known) != len(q.Scores):
		return Curve{}, fmt.Errorf("%s: %d opt_known but %d queries", path, len(q.Known), len(q.Scores))
	case q.Failed != nil && len(q.Failed) != len(q.Scores):
		return Curve{}, fmt.Errorf("%s: %d opt_failed but %d queries", path, len(q.Failed), len(q.Scores))
	}
	// initial_best is NaN for a start that failed whole (no best yet).
	if math.IsInf(initial[0], 0) {
		return Curve{}, fmt.Errorf("%s: initial_best is %v: a run's scores are finite", path, initial[0])
	}
	for i, s := range q.Scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return Curve{}, fmt.Errorf("%s: opt_point_properties[%d] is %v: a run's scores are finite (its journal holds no other)",
				path, i, s)
		}
	}
	if v, ok := c.Field(InitialCallsField); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Curve{}, fmt.Errorf("%s: field %s %q: want a count", filepath.Join(dir, ConfigFile), InitialCallsField, v)
		}
		if c.Initial, err = ReadInitial(dir); err != nil {
			return Curve{}, fmt.Errorf("the run counts %d initial oracle calls: %w", n, err)
		}
		if len(c.Initial) != n {
			return Curve{}, fmt.Errorf("%s: %d initial oracle calls, the configuration counts %d", filepath.Join(dir, InitialFile), len(c.Initial), n)
		}
	}
	c.Best = BestCurve(initial[0], q, c.Maximize)
	c.Evaluations = q.Evaluations()
	c.Queries = len(q.Scores)
	for _, k := range q.Known {
		if k {
			c.Known++
		}
	}
	return c, nil
}

// objectiveFields identify a run's objective: the objective's name (or
// program) and its target, by content where the run records it
// ("target-key") rather than by description.
var objectiveFields = []string{"objective", "target-key", "target"}

// Objective returns what identifies the run's objective, as
// "field=value" pairs of objectiveFields ("" when it records none of
// them: the task's only objective).
func (c Curve) Objective() string {
	var parts []string
	for _, name := range objectiveFields {
		if v, ok := c.Field(name); ok {
			parts = append(parts, name+"="+v)
			if name == "target-key" {
				break // the target's content; its description may name a path
			}
		}
	}
	return strings.Join(parts, " ")
}

// flags reads an array of 0/1 flags.
func flags(a numpy.Array) ([]bool, error) {
	v, err := a.Float64s()
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(v))
	for i, x := range v {
		out[i] = x != 0
	}
	return out, nil
}

// CheckAxis returns an error naming two of the runs when they cannot share
// one axis of best scores: runs of different tasks (configuration field
// "task"), of different objectives (Objective: penalised logP and QED, two
// programs, two targets) or of different directions (maximised against
// minimised).
func CheckAxis(curves []Curve) error {
	if len(curves) == 0 {
		return nil
	}
	dir := map[bool]string{true: "maximised", false: "minimised"}
	a := curves[0]
	for _, c := range curves[1:] {
		ta, _ := a.Field("task")
		tc, _ := c.Field("task")
		if ta != tc {
			return fmt.Errorf("runs %s (task %q) and %s (task %q) are of different tasks: plot them separately", a.Dir, ta, c.Dir, tc)
		}
		if oa, oc := a.Objective(), c.Objective(); oa != oc {
			return fmt.Errorf("runs %s (%s) and %s (%s) optimise different objectives: their scores do not compare; "+
				"plot them separately", a.Dir, oa, c.Dir, oc)
		}
		if a.Maximize != c.Maximize {
			return fmt.Errorf("runs %s (%s) and %s (%s) optimise in different directions: plot them separately",
				a.Dir, dir[a.Maximize], c.Dir, dir[c.Maximize])
		}
	}
	return nil
}

// Group is a set of runs whose configurations differ only in the seed.
type Group struct {
	// Label names the settings that tell this group from the others.
	Label string
	// Runs are the group's curves.
	Runs []Curve
	// Seeds is the number of distinct seeds (configuration field "seed")
	// among the runs: two runs of one seed are one seed.
	Seeds int
	// Mean and Std are the mean and sample standard deviation (0 for one
	// run) of the runs' best scores, over the distinct evaluations of the
	// run with fewest.
	Mean, Std []float64
}

// Count says how many runs and seeds the group holds: "1 run", "5 seeds"
// (one run each), "2 runs, 1 seed".
func (g Group) Count() string {
	plural := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return strconv.Itoa(n) + " " + what + "s"
	}
	switch {
	case len(g.Runs) == 1:
		return "1 run"
	case g.Seeds == len(g.Runs):
		return plural(g.Seeds, "seed")
	}
	return plural(len(g.Runs), "run") + ", " + plural(g.Seeds, "seed")
}

// GroupCurves groups runs by configuration (all fields but the seed and
// the budget, and the digest of a labelled start drawn with the seed), in
// the order each configuration first appears.
func GroupCurves(curves []Curve) []Group {
	var groups []Group
	index := map[string]int{}
	for _, c := range curves {
		k := groupKey(c.Fields)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, Group{})
		}
		groups[i].Runs = append(groups[i].Runs, c)
	}
	labels := groupLabels(groups)
	for i := range groups {
		groups[i].Label = labels[i]
		groups[i].Mean, groups[i].Std = meanStd(groups[i].Runs)
		seeds := map[string]bool{}
		for _, r := range groups[i].Runs {
			v, _ := r.Field("seed")
			seeds[v] = true
		}
		groups[i].Seeds = len(seeds)
	}
	return groups
}

// ignoredInGroups are the fields that do not separate configurations.
var ignoredInGroups = map[string]bool{"seed": true, "budget": true}

// ignoredInGroup reports whether a field of a run whose configuration is fs
// does not separate configurations: the seed, the budget, and, for a run
// whose labelled start was drawn with its seed (InitialCallsField), the
// digest of that start.
func ignoredInGroup(name string, fs []Field) bool {
	return ignoredInGroups[name] || (name == "data-sha256" && slices.ContainsFunc(fs, func(f Field) bool { return f.Name == InitialCallsField }))
}

func groupKey(fs []Field) string {
	var parts []string
	for _, f := range fs {
		if !ignoredInGroup(f.Name, fs) {
			parts = append(parts, f.Name+"="+f.Value)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// labelPriority lists the settings that name groups first: when one of
// them differs between groups, the others (GP sizes, which random search
// does not use) are left out of the labels.
var labelPriority = []string{"task", "strategy", "elbo", "acq", "k", "retrain-every", "warp", "labelled-fraction", "kernel"}

// groupLabels names each group by the fields whose values differ between
// groups (strategy and ELBO when nothing differs). Groups that those fields
// leave with one label (LBO at q = 1 and at q = 10 beside random search) add
// the other fields that differ among them.
func groupLabels(groups []Group) []string {
	differ := differing(groups, labelPriority)
	if len(differ) == 0 {
		differ = differing(groups, nil)
	}
	if len(differ) == 0 {
		differ = []string{"strategy", "elbo"}
	}
	labels := make([]string, len(groups))
	same := map[string][]int{}
	for i, g := range groups {
		labels[i] = fieldLabel(g, differ)
		same[labels[i]] = append(same[labels[i]], i)
	}
	for _, idx := range same {
		if len(idx) < 2 {
			continue
		}
		sub := make([]Group, len(idx))
		for k, i := range idx {
			sub[k] = groups[i]
		}
		var more []string
		for _, name := range differing(sub, nil) {
			if !slices.Contains(differ, name) {
				more = append(more, name)
			}
		}
		for _, i := range idx {
			labels[i] = strings.TrimSpace(labels[i] + " " + fieldLabel(groups[i], more))
		}
	}
	return labels
}

// differing returns the fields among names (nil: every field but those
// ignoredInGroup, sorted) whose values differ between the groups' runs.
func differing(groups []Group, names []string) []string {
	values := map[string]map[string]bool{}
	for _, g := range groups {
		for _, f := range g.Runs[0].Fields {
			if values[f.Name] == nil {
				values[f.Name] = map[string]bool{}
			}
			values[f.Name][f.Value] = true
		}
	}
	if names == nil {
		for name := range values {
			if !slices.ContainsFunc(groups, func(g Group) bool { return ignoredInGroup(name, g.Runs[0].Fields) }) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
	}
	var out []string
	for _, name := range names {
		if len(values[name]) > 1 {
			out = append(out, name)
		}
	}
	return out
}

// fieldLabel is "name=value ..." of a group's first run for the names it has.
func fieldLabel(g Group, names []string) string {
	m := map[string]string{}
	for _, f := range g.Runs[0].Fields {
		m[f.Name] = f.Value
	}
	var parts []string
	for _, name := range names {
		if v, ok := m[name]; ok {
			parts = append(parts, name+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// meanStd returns the pointwise mean and sample standard deviation of the
// runs' curves, truncated to the shortest. Each point is computed on the
// runs' values scaled by a power of two into [-1, 1], exactly, so that no
// difference or square overflows: a mean or standard deviation beyond
// float64 (of runs at ±MaxFloat64) is ±MaxFloat64.
func meanStd(runs []Curve) (mean, std []float64) {
	n := math.MaxInt
	for _, r := range runs {
		n = min(n, len(r.Best))
	}
	mean, std = make([]float64, n), make([]float64, n)
	k := float64(len(runs))
	for i := 0; i < n; i++ {
		big := 0.0
		for _, r := range runs {
			big = math.Max(big, math.Abs(r.Best[i]))
		}
		_, e := math.Frexp(big)
		m := 0.0
		for _, r := range runs {
			m += math.Ldexp(r.Best[i], -e) / k
		}
		mean[i] = math.Max(math.Min(math.Ldexp(m, e), math.MaxFloat64), -math.MaxFloat64) // rounding may pass it
		if len(runs) < 2 {
			continue
		}
		ss := 0.0
		for _, r := range runs {
			d := math.Ldexp(r.Best[i], -e) - m
			ss += d * d
		}
		std[i] = math.Min(math.Ldexp(math.Sqrt(ss/(k-1)), e), math.MaxFloat64)
	}
	return mean, std
}
