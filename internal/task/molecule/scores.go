package molecule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// ScoreShardSize is the number of molecules of one shard of the score cache:
// a killed scoring loses at most one shard's work.
const ScoreShardSize = 2048

// scoreCacheVersion names what the score cache holds; bump it when an
// objective's definition changes.
const scoreCacheVersion = 1

// ScoreCacheOptions configure CachedScores.
type ScoreCacheOptions struct {
	// Dir is the cache's root; the scores go to Dir/<objective>-<key>/,
	// key digesting DataDigest, the objective's name, the shard size and
	// the cache's version.
	Dir string
	// DataDigest identifies the data set (task.FileDigest of its file).
	DataDigest string
	// ShardSize is the number of molecules per shard (0: ScoreShardSize).
	ShardSize int
	// Workers is the number of goroutines (0: all CPUs).
	Workers int
	// Progress, when set, is told the molecules done (those of finished
	// shards first) of the total.
	Progress func(done, total int)
	// Log, when set, receives notes (shards to make, bad shards rebuilt).
	Log io.Writer
	// Ctx, when set, stops the scoring between molecules; finished shards
	// stay.
	Ctx context.Context
}

// ScoreCacheDir returns the directory of the cached scores of a data set
// under an objective, in shards of the given size.
func ScoreCacheDir(root, dataDigest string, obj Objective, shardSize int) string {
	h := sha256.New()
	fmt.Fprintf(h, "scores %d\nshard %d\ndata %s\nobjective %s\n", scoreCacheVersion, shardSize, dataDigest, obj.Name())
	return filepath.Join(root, obj.Name()+"-"+hex.EncodeToString(h.Sum(nil))[:16])
}

// CachedScores returns obj's score of every molecule of smiles (a data
// set's, in its order; obj's failure score where it failed) and the number that
// failed, reading the shards of the cache and scoring, in parallel, only the
// molecules of missing ones. Each shard (an .npz of the molecules' SMILES,
// scores and errors) is written atomically as soon as its molecules are
// scored, so an interrupted scoring resumes where it stopped; a shard that
// cannot be read or holds other molecules is rebuilt, and Log says so.
func CachedScores(o ScoreCacheOptions, obj Objective, smiles []string) ([]float64, int, error) {
	size := o.ShardSize
	if size <= 0 {
		size = ScoreShardSize
	}
	dir := ScoreCacheDir(o.Dir, o.DataDigest, obj, size)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, 0, fmt.Errorf("score cache: %w", err)
	}
	scores, errs := make([]float64, len(smiles)), make([]string, len(smiles))
	var todo []int
	for s := 0; s*size < len(smiles); s++ {
		lo, hi := s*size, min(len(smiles), (s+1)*size)
		err := readScoreShard(scoreShardPath(dir, s), smiles[lo:hi], scores[lo:hi], errs[lo:hi])
		switch {
		case err == nil:
			continue
		case !errors.Is(err, fs.ErrNotExist) && o.Log != nil:
			fmt.Fprintf(o.Log, "score cache: %v; rebuilding it\n", err)
		}
		todo = append(todo, s)
	}
	total, done := len(smiles), len(smiles)
	for _, s := range todo {
		done -= min(len(smiles), (s+1)*size) - s*size
	}
	if len(todo) > 0 && o.Log != nil {
		fmt.Fprintf(o.Log, "score cache %s: scoring %d molecules by %s (%d of %d shards to make)\n", dir, total-done, obj.Name(),
			len(todo), (total+size-1)/size)
	}
	if o.Progress != nil {
		o.Progress(done, total)
	}
	for _, s := range todo {
		lo, hi := s*size, min(len(smiles), (s+1)*size)
		var progress func(int)
		if o.Progress != nil {
			progress = func(k int) { o.Progress(done+k, total) }
		}
		if err := scoreInto(o.Ctx, obj, smiles[lo:hi], scores[lo:hi], errs[lo:hi], o.Workers, progress); err != nil {
			return nil, 0, fmt.Errorf("score cache %s: interrupted after %d of %d molecules (finished shards kept; run again to resume): %w",
				dir, done, total, err)
		}
		if err := writeScoreShard(scoreShardPath(dir, s), smiles[lo:hi], scores[lo:hi], errs[lo:hi]); err != nil {
			return nil, 0, err
		}
		done += hi - lo
	}
	failed := 0
	for _, e := range errs {
		if e != "" {
			failed++
		}
	}
	return scores, failed, nil
}

func scoreShardPath(dir string, s int) string {
	return filepath.Join(dir, fmt.Sprintf("shard-%05d.npz", s))
}

// writeScoreShard writes one shard atomically.
func writeScoreShard(path string, smiles []string, scores []float64, errs []string) error {
	n := len(smiles)
	return numpy.WriteNPZ(path, []numpy.Array{
		{Name: "smiles", Shape: []int{n}, Data: smiles},
		{Name: "score", Shape: []int{n}, Data: scores},
		{Name: "error", Shape: []int{n}, Data: errs},
	})
}

// readScoreShard reads a shard into scores and errs, checking that it holds
// the molecules smiles.
func readScoreShard(path string, smiles []string, scores []float64, errs []string) error {
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("shard %s: %w", path, err)
	}
	var got []string
	var y []float64
	var e []string
	for _, a := range arrays {
		switch a.Name {
		case "smiles":
			got, _ = a.Data.([]string)
		case "score":
			y, _ = a.Data.([]float64)
		case "error":
			e, _ = a.Data.([]string)
		}
	}
	switch {
	case got == nil || y == nil || e == nil:
		return fmt.Errorf("shard %s: want arrays smiles, score (float64) and error", path)
	case !slices.Equal(got, smiles) || len(y) != len(smiles) || len(e) != len(smiles):
		return fmt.Errorf("shard %s: holds other molecules than the data set's", path)
	}
	copy(scores, y)
	copy(errs, e)
	return nil
}

// scoreInto scores smiles[i] into scores[i] on workers goroutines (errs[i]:
// the reason it failed, scores[i] then obj's failure score); progress, when
// set, is told the molecules done now and then.
func scoreInto(ctx context.Context, obj Objective, smiles []string, scores []float64, errs []string, workers int, progress func(int)) error {
	var done atomic.Int64
	var mu sync.Mutex
	return forEach(ctx, workers, len(smiles), func(i int) {
		v, err := obj.Score(smiles[i])
		scores[i], errs[i] = v, ""
		if err != nil {
			scores[i], errs[i] = obj.FailureScore(), strings.Join(strings.Fields(err.Error()), " ")
		}
		if d := done.Add(1); progress != nil && (d%64 == 0 || int(d) == len(smiles)) {
			mu.Lock()
			progress(int(d))
			mu.Unlock()
		}
	})
}

// scoreAll returns obj's scores of smiles, FailureScore where it failed,
// scored on workers goroutines without a cache.
func scoreAll(ctx context.Context, obj Objective, smiles []string, workers int, progress func(int)) []float64 {
	scores, errs := make([]float64, len(smiles)), make([]string, len(smiles))
	_ = scoreInto(ctx, obj, smiles, scores, errs, workers, progress)
	return scores
}

// forEach calls f(i) for i in [0, n) on workers goroutines (0: all CPUs);
// it stops early, returning ctx's error, when ctx is done.
func forEach(ctx context.Context, workers, n int, f func(i int)) error {
	ctx = orBackground(ctx)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workerCount(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n) && ctx.Err() == nil; i = next.Add(1) - 1 {
				f(int(i))
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// scoresRoot returns the score cache's root for a data set file under the
// --cache-dir option: "" puts it next to the file (DIR/molecules.scores for
// DIR/molecules.npz), "none" turns the cache off (""), another value is the
// root itself (the featurisation cache's too: their subdirectories differ).
func scoresRoot(option, dataPath string) string {
	switch option {
	case "none":
		return ""
	case "":
		return strings.TrimSuffix(dataPath, filepath.Ext(dataPath)) + ".scores"
	}
	return option
}

// objectiveScores returns obj's scores of the data set's training molecules
// (smiles, read from dataPath), through the score cache of --cache-dir, in
// parallel (--workers), and says on stderr how many failed.
func objectiveScores(env *task.Env, obj Objective, dataPath string, smiles []string) ([]float64, error) {
	chem.SetLogging(env.Opts.Bool(optRDKitLog))
	workers := env.Opts.Int(optWorkers)
	var progress func(done, total int)
	if env.Progress != nil {
		progress = func(done, total int) { env.Progress.Count("molecules scored by "+obj.Name(), done, total) }
	}
	var scores []float64
	failed := 0
	if root := scoresRoot(env.Opts.String(optCacheDir), dataPath); root == "" {
		var p func(int)
		if progress != nil {
			p = func(k int) { progress(k, len(smiles)) }
		}
		errs := make([]string, len(smiles))
		scores = make([]float64, len(smiles))
		if err := scoreInto(env.Ctx, obj, smiles, scores, errs, workers, p); err != nil {
			return nil, fmt.Errorf("scoring the data set by %s: %w", obj.Name(), err)
		}
		for _, e := range errs {
			if e != "" {
				failed++
			}
		}
	} else {
		digest, err := task.FileDigest(dataPath)
		if err != nil {
			return nil, err
		}
		scores, failed, err = CachedScores(ScoreCacheOptions{Dir: root, DataDigest: digest, Workers: workers, Progress: progress,
			Log: env.Stderr, Ctx: env.Ctx}, obj, smiles)
		if err != nil {
			return nil, fmt.Errorf("%w (give --%s DIR to keep the cache elsewhere, or none)", err, optCacheDir)
		}
	}
	if failed > 0 && env.Stderr != nil {
		fmt.Fprintf(env.Stderr, "molecule data set: %d of %d training molecules could not be scored by %s and have its failure score %g\n",
			failed, len(smiles), obj.Name(), obj.FailureScore())
	}
	return scores, nil
}
