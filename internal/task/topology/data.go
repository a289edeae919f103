package topology

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/datadir"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/simp"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// Task options.
const (
	optDesigns    = "designs"
	optTarget     = "target"
	optTargetSeed = "target-seed"
	optN          = "n"
	optDenseWidth = "dense-width"
)

// syntheticN is the number of designs solved for --synthetic-data when no
// data set is found (about half a second each).
const syntheticN = 64

// targetStream is the PCG stream of the target's index.
const targetStream = 0x746172676574

// dataPath returns the data set file: the option designs, else
// topology.npz (or topology/topology.npz) in the data directory
// (task.DataDirs: --data-dir, $TLBO_DATA or a shared/data folder in the
// working directory or above it).
func dataPath(env *task.Env) (string, error) {
	if p := env.Opts.String(optDesigns); p != "" {
		return p, nil
	}
	p, err := datadir.FindFile(env.DataDir, simp.DataFileName, filepath.Join("topology", simp.DataFileName))
	if err != nil {
		return "", fmt.Errorf("topology data set: %w; make it with `tlbo-native data topology --out DIR` and give DIR with "+
			"--data-dir or $%s, or the file with --%s, or pass --synthetic-data to solve %d small problems instead",
			err, datadir.Env, optDesigns, syntheticN)
	}
	return p, nil
}

// readDataFile reads the designs array of a data set file.
func readDataFile(path string) ([]Design, error) {
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	for _, a := range arrays {
		if a.Name == "designs" {
			return designsOf(path, a)
		}
	}
	return nil, fmt.Errorf("%s: no array \"designs\" (not written by `data topology`)", path)
}

// allDesigns returns every design of the data set (target included) and
// where they came from.
func allDesigns(env *task.Env) ([]Design, string, error) {
	path, err := dataPath(env)
	if err != nil {
		if !env.Synthetic {
			return nil, "", err
		}
		return synthetic(env)
	}
	ds, err := readDataFile(path)
	if err != nil {
		return nil, "", err
	}
	return ds, "file " + path, nil
}

// synthetic solves syntheticN random problems of env's seed (the
// --synthetic-data fallback).
func synthetic(env *task.Env) ([]Design, string, error) {
	fmt.Fprintf(env.Stderr, "topology data: no %s found; solving %d random problems (seed %d)\n", simp.DataFileName, syntheticN, env.Seed)
	out := make([]Design, syntheticN)
	for i := range out {
		d, err := simp.SolveRandom(context.Background(), env.Seed%(1<<63), i, simp.Options{})
		if err != nil {
			return nil, "", err
		}
		out[i] = d.Image
		if env.Progress != nil {
			env.Progress.Count("designs", i+1, syntheticN)
		}
	}
	return out, fmt.Sprintf("synthetic (%d SIMP designs, seed %d)", syntheticN, env.Seed), nil
}

// target is the task's target design and its description.
type target struct {
	design Design
	// index is the held-out design's index in the data set, -1 for a file.
	index int
	desc  string
}

// targetSeed reads the option target-seed.
func targetSeed(env *task.Env) (uint64, error) {
	s := env.Opts.Int(optTargetSeed)
	if s < 0 {
		return 0, fmt.Errorf("--%s %d: want a non-negative integer", optTargetSeed, s)
	}
	return uint64(s), nil
}

// pickTarget returns the target: the design of the option target, else the
// design of the data set at the index drawn from target-seed.
func pickTarget(env *task.Env, designs []Design, source string) (target, error) {
	if p := env.Opts.String(optTarget); p != "" {
		ds, err := ReadDesigns(p)
		if err != nil {
			return target{}, err
		}
		if len(ds) != 1 {
			return target{}, fmt.Errorf("--%s %s: %d designs, want one", optTarget, p, len(ds))
		}
		return checkTarget(target{design: ds[0], index: -1, desc: "file " + p})
	}
	seed, err := targetSeed(env)
	if err != nil {
		return target{}, err
	}
	i := targetIndex(seed, len(designs))
	return checkTarget(target{design: designs[i], index: i,
		desc: fmt.Sprintf("design %d of %s (target-seed %d)", i, source, seed)})
}

// targetIndex returns the index of the held-out design of a data set of n.
func targetIndex(seed uint64, n int) int { return rand.New(rand.NewPCG(seed, targetStream)).IntN(n) }

func checkTarget(t target) (target, error) {
	if !slices.Contains(t.design, 1) {
		return t, fmt.Errorf("target %s is empty: every design would score 0", t.desc)
	}
	return t, nil
}

// loadTask returns the target and the training designs (every design of the
// data set except the copies of the target) with their scores.
func loadTask(env *task.Env) (target, []Design, []float64, string, error) {
	all, source, err := allDesigns(env)
	if err != nil {
		return target{}, nil, nil, "", err
	}
	tg, err := pickTarget(env, all, source)
	if err != nil {
		return tg, nil, nil, "", err
	}
	train := make([]Design, 0, len(all))
	for _, d := range all {
		if !slices.Equal(d, tg.design) {
			train = append(train, d)
		}
	}
	if len(train) == 0 {
		return tg, nil, nil, "", errors.New("topology data: no design left besides the target")
	}
	scores := make([]float64, len(train))
	for i, d := range train {
		scores[i] = Similarity(d, tg.design)
	}
	src := fmt.Sprintf("%s: %d designs, %d copies of the target (%s) dropped", source, len(train), len(all)-len(train), tg.desc)
	return tg, train, scores, src, nil
}

// dataset is the task's Spec.Dataset.
func dataset(env *task.Env) ([]Design, []float64, string, error) {
	_, train, scores, src, err := loadTask(env)
	return train, scores, src, err
}

// buildData solves the option n's random problems of env's seed into
// dir/topology.npz, resuming an interrupted run.
func buildData(env *task.Env, dir string) error {
	n := env.Opts.Int(optN)
	if n < 1 {
		return fmt.Errorf("--%s %d: want a positive integer", optN, n)
	}
	start := time.Now()
	out, err := simp.Generate(env.Context(), simp.GenerateOptions{Dir: dir, N: n, Seed: env.Seed,
		Progress: func(done, total int) {
			if env.Progress != nil {
				env.Progress.Count("designs", done, total)
			}
		}})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted: finished designs are kept in %s; rerun to resume", dir)
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "designs %d\nout %s\nseconds %.1f\n", n, out, time.Since(start).Seconds())
	return nil
}
