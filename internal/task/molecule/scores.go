package molecule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
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

// ScoreCacheOptions configure CachedScores; their fields are those of
// CacheOptions, the scores going to Dir/<objective>-<key>/ (ScoreCacheDir)
// in shards of ShardSize molecules (0: ScoreShardSize).
type ScoreCacheOptions CacheOptions

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
	if o.ShardSize <= 0 {
		o.ShardSize = ScoreShardSize
	}
	c := &shardCache[scored]{
		CacheOptions: CacheOptions(o), name: "score cache", dir: ScoreCacheDir(o.Dir, o.DataDigest, obj, o.ShardSize), ext: ".npz",
		size: o.ShardSize,
		read: func(path string, _ int, smiles []string, out []scored) error {
			return readScoreShard(path, smiles, out)
		},
		compute: func(s string) scored { return scoreOne(obj, s) },
		write: func(path string, _ int, smiles []string, out []scored) error {
			return writeScoreShard(path, smiles, out)
		},
		plan: func(n int) string { return fmt.Sprintf("scoring %d molecules by %s", n, obj.Name()) },
	}
	got, err := c.get(smiles)
	if err != nil {
		return nil, 0, err
	}
	scores, failed := make([]float64, len(got)), 0
	for i, x := range got {
		scores[i] = x.score
		if x.err != "" {
			failed++
		}
	}
	return scores, failed, nil
}

// scored is a molecule's score, or its objective's failure score and the
// reason it failed.
type scored struct {
	score float64
	err   string // "" where it was scored
}

// scoreOne scores a molecule, the error message on one line.
func scoreOne(obj Objective, smiles string) scored {
	v, err := obj.Score(smiles)
	if err != nil {
		return scored{score: obj.FailureScore(), err: strings.Join(strings.Fields(err.Error()), " ")}
	}
	return scored{score: v}
}

// writeScoreShard writes one shard atomically: an .npz of the molecules'
// SMILES, scores and errors.
func writeScoreShard(path string, smiles []string, items []scored) error {
	n := len(smiles)
	scores, errs := make([]float64, n), make([]string, n)
	for i, x := range items {
		scores[i], errs[i] = x.score, x.err
	}
	return numpy.WriteNPZ(path, []numpy.Array{
		{Name: "smiles", Shape: []int{n}, Data: smiles},
		{Name: "score", Shape: []int{n}, Data: scores},
		{Name: "error", Shape: []int{n}, Data: errs},
	})
}

// readScoreShard reads a shard into out, checking that it holds the
// molecules smiles.
func readScoreShard(path string, smiles []string, out []scored) error {
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return fmt.Errorf("shard %w", err) // ReadNPZ's error begins with the path
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
	for i := range out {
		out[i] = scored{score: y[i], err: e[i]}
	}
	return nil
}

// scoreInto scores smiles[i] into scores[i] on workers goroutines (errs[i]:
// the reason it failed, scores[i] then obj's failure score); progress, when
// set, is told the molecules done now and then.
func scoreInto(ctx context.Context, obj Objective, smiles []string, scores []float64, errs []string, workers int, progress func(int)) error {
	var done atomic.Int64
	var mu sync.Mutex
	return forEach(ctx, workers, len(smiles), func(i int) {
		x := scoreOne(obj, smiles[i])
		scores[i], errs[i] = x.score, x.err
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
	if root := cacheRoot(env.Opts.String(optCacheDir), dataPath, ".scores"); root == "" {
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
