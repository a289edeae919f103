package bo

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// Curve is the best score of a run against the number of evaluations.
type Curve struct {
	// Dir is the run directory.
	Dir string
	// Fields is the run's configuration.
	Fields []Field
	// Maximize is the task's direction.
	Maximize bool
	// Best[i] is the best score after i queries; Best[0] is the best of
	// the labelled start.
	Best []float64
}

// BestCurve returns the running best of scores after the labelled start's
// best, initial: element i is the best after i queries.
func BestCurve(initial float64, scores []float64, maximize bool) []float64 {
	out := make([]float64, 0, len(scores)+1)
	best := initial
	out = append(out, best)
	for _, s := range scores {
		if (maximize && s > best) || (!maximize && s < best) {
			best = s
		}
		out = append(out, best)
	}
	return out
}

// ReadCurve reads a run's curve from its results.npz and config.json.
func ReadCurve(dir string) (Curve, error) {
	fields, err := ReadConfigFields(dir)
	if err != nil {
		return Curve{}, err
	}
	c := Curve{Dir: dir, Fields: fields}
	for _, f := range fields {
		if f.Name == "maximize" {
			c.Maximize, err = strconv.ParseBool(f.Value)
			if err != nil {
				return Curve{}, fmt.Errorf("%s: field maximize: %w", filepath.Join(dir, ConfigFile), err)
			}
		}
	}
	path := filepath.Join(dir, ResultsFile)
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return Curve{}, err
	}
	var scores, initial []float64
	for _, a := range arrays {
		switch a.Name {
		case "opt_point_properties":
			scores, err = a.Float64s()
		case "initial_best":
			initial, err = a.Float64s()
		}
		if err != nil {
			return Curve{}, fmt.Errorf("%s: %s: %w", path, a.Name, err)
		}
	}
	if len(initial) != 1 {
		return Curve{}, fmt.Errorf("%s: initial_best has %d values, want 1", path, len(initial))
	}
	c.Best = BestCurve(initial[0], scores, c.Maximize)
	return c, nil
}

// Group is a set of runs whose configurations differ only in the seed.
type Group struct {
	// Label names the settings that tell this group from the others.
	Label string
	// Runs are the group's curves.
	Runs []Curve
	// Mean and Std are the mean and sample standard deviation (0 for one
	// run) of the runs' best scores, over the length of the shortest run.
	Mean, Std []float64
}

// GroupCurves groups runs by configuration (all fields but the seed and
// the budget), in the order each configuration first appears.
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
	}
	return groups
}

// ignoredInGroups are the fields that do not separate configurations.
var ignoredInGroups = map[string]bool{"seed": true, "budget": true}

func groupKey(fs []Field) string {
	var parts []string
	for _, f := range fs {
		if !ignoredInGroups[f.Name] {
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
// groups (strategy and ELBO when nothing differs).
func groupLabels(groups []Group) []string {
	values := map[string]map[string]bool{}
	for _, g := range groups {
		for _, f := range g.Runs[0].Fields {
			if values[f.Name] == nil {
				values[f.Name] = map[string]bool{}
			}
			values[f.Name][f.Value] = true
		}
	}
	var differ []string
	for _, name := range labelPriority {
		if len(values[name]) > 1 {
			differ = append(differ, name)
		}
	}
	if len(differ) == 0 {
		for name, vs := range values {
			if len(vs) > 1 && !ignoredInGroups[name] {
				differ = append(differ, name)
			}
		}
		sort.Strings(differ)
	}
	if len(differ) == 0 {
		differ = []string{"strategy", "elbo"}
	}
	labels := make([]string, len(groups))
	for i, g := range groups {
		m := map[string]string{}
		for _, f := range g.Runs[0].Fields {
			m[f.Name] = f.Value
		}
		var parts []string
		for _, name := range differ {
			if v, ok := m[name]; ok {
				parts = append(parts, name+"="+v)
			}
		}
		labels[i] = strings.Join(parts, " ")
	}
	return labels
}

// meanStd returns the pointwise mean and sample standard deviation of the
// runs' curves, truncated to the shortest.
func meanStd(runs []Curve) (mean, std []float64) {
	n := math.MaxInt
	for _, r := range runs {
		n = min(n, len(r.Best))
	}
	mean, std = make([]float64, n), make([]float64, n)
	k := float64(len(runs))
	for i := 0; i < n; i++ {
		for _, r := range runs {
			mean[i] += r.Best[i] / k
		}
		if len(runs) < 2 {
			continue
		}
		ss := 0.0
		for _, r := range runs {
			d := r.Best[i] - mean[i]
			ss += d * d
		}
		std[i] = math.Sqrt(ss / (k - 1))
	}
	return mean, std
}
