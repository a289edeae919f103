package bo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// Files of a run directory.
const (
	ConfigFile  = "config.json"
	FlagsFile   = "flags.json"
	JournalFile = "journal.jsonl"
	ResultsFile = "results.npz"
)

// modelFileName is the name the model saves its weights under, inside the
// directory of its version.
const modelFileName = "model.pt"

// versionDir returns the directory of a model version.
func versionDir(v int) string { return fmt.Sprintf("model-v%d", v) }

// versionFile returns the weights file of a model version, relative to the
// run directory.
func versionFile(v int) string { return filepath.Join(versionDir(v), modelFileName) }

// ModelVersions returns the model versions saved in a run directory, in
// increasing order, and the path of each one's weights.
func ModelVersions(dir string) ([]int, map[int]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var versions []int
	files := map[int]string{}
	for _, e := range entries {
		num, ok := strings.CutPrefix(e.Name(), "model-v")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 0 || !e.IsDir() || e.Name() != versionDir(v) {
			continue
		}
		file := filepath.Join(dir, versionFile(v))
		if _, err := os.Stat(file); err != nil {
			return nil, nil, err
		}
		versions, files[v] = append(versions, v), file
	}
	slices.Sort(versions)
	return versions, files, nil
}

// writeConfig writes the configuration's fields to dir/config.json atomically.
func writeConfig(dir string, c Config) error {
	m := make(map[string]string)
	for _, f := range c.Fields() {
		m[f.Name] = f.Value
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", ConfigFile, err)
	}
	return numpy.AtomicWriteFile(filepath.Join(dir, ConfigFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadConfigFields reads the fields of a run's config.json.
func ReadConfigFields(dir string) ([]Field, error) {
	path := filepath.Join(dir, ConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read run configuration: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	fs := make([]Field, 0, len(m))
	for k, v := range m {
		fs = append(fs, Field{k, v})
	}
	return fs, nil
}

// WriteFlags writes FlagsFile (as a run does at its start): for a caller
// that must keep a run's flags before the loop runs (a start that waits
// for people's measurements).
func WriteFlags(dir string, flags map[string]string) error { return writeFlags(dir, flags) }

// writeFlags writes the command line's settings to dir/flags.json
// atomically (nothing when flags is nil).
func writeFlags(dir string, flags map[string]string) error {
	if flags == nil {
		return nil
	}
	b, err := json.MarshalIndent(flags, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", FlagsFile, err)
	}
	return numpy.AtomicWriteFile(filepath.Join(dir, FlagsFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadFlags reads the command line's settings kept with a run
// (Options.Flags); nil and no error when the run kept none (it was made
// before they were kept, or dir holds no run).
func ReadFlags(dir string) (map[string]string, error) {
	path := filepath.Join(dir, FlagsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the run's flags: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// writeResults rewrites dir/results.npz atomically from the queries and
// the versions' samples, with the reference's keys (opt_points,
// opt_point_properties, opt_model_version, sample_points, sample_versions,
// sample_properties, rand_point_due_bo_fail, params), initial_best (the
// best score of the labelled start whose evaluation did not fail, NaN when
// all failed), opt_latents, opt_known (1 where the query's object was
// known and its score reused: a repeat avoided) and opt_failed (1 where the
// query scored the failure score: an invalid decode or a failed
// evaluation, never a best score).
// Points are the task's keys ("" for invalid decodes); samples are flat,
// one version number per sample.
func writeResults(dir string, c Config, dim int, initialBest float64, queries []Query, versions []Version) error {
	n := len(queries)
	points := make([]string, n)
	props := make([]float64, n)
	vers := make([]int64, n)
	random := make([]int64, n)
	known := make([]int64, n)
	failed := make([]int64, n)
	latents := make([]float64, 0, n*dim)
	for i, q := range queries {
		points[i], props[i], vers[i] = q.Object, q.Score, int64(q.Version)
		if q.Random {
			random[i] = 1
		}
		if q.Known {
			known[i] = 1
		}
		if q.Failure != "" {
			failed[i] = 1
		}
		latents = append(latents, q.Z...)
	}
	var sPoints []string
	var sProps []float64
	var sVers []int64
	for _, v := range versions {
		for _, s := range v.Samples {
			sPoints = append(sPoints, s.Object)
			sProps = append(sProps, s.Score)
			sVers = append(sVers, int64(v.Version))
		}
	}
	params := make([]string, 0)
	for _, f := range c.Fields() {
		params = append(params, f.Name+"="+f.Value)
	}
	arrays := []numpy.Array{
		{Name: "opt_points", Shape: []int{n}, Data: points},
		{Name: "opt_point_properties", Shape: []int{n}, Data: props},
		{Name: "opt_model_version", Shape: []int{n}, Data: vers},
		{Name: "sample_points", Shape: []int{len(sPoints)}, Data: nonNil(sPoints)},
		{Name: "sample_versions", Shape: []int{len(sVers)}, Data: nonNil(sVers)},
		{Name: "sample_properties", Shape: []int{len(sProps)}, Data: nonNil(sProps)},
		{Name: "rand_point_due_bo_fail", Shape: []int{n}, Data: random},
		{Name: "opt_known", Shape: []int{n}, Data: known},
		{Name: "opt_failed", Shape: []int{n}, Data: failed},
		// numpy's scalar strings do not round-trip through npyio; a
		// one-element array does.
		{Name: "params", Shape: []int{1}, Data: []string{strings.Join(params, " ")}},
		{Name: "initial_best", Shape: []int{1}, Data: []float64{initialBest}},
	}
	if n > 0 {
		arrays = append(arrays, numpy.Array{Name: "opt_latents", Shape: []int{n, dim}, Data: latents})
	}
	return numpy.WriteNPZ(filepath.Join(dir, ResultsFile), arrays)
}

// nonNil returns s, or an empty slice when s is nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
