package molecule

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
)

// shardCache is a cache of one result of type T per molecule of a data
// set, kept in files of size molecules each under dir, so that long work
// over the data set is done once and interrupted work resumes from its
// finished shards. The featurisation and score caches are shardCaches: each
// gives its shard format (read, write) and how a molecule's result is made.
type shardCache[T any] struct {
	CacheOptions        // Workers, Progress, Log, Ctx; Dir and ShardSize are resolved into dir and size
	name         string // names the cache in notes and errors: "score cache"
	dir          string // holds the shards
	ext          string // of the shard files: ".gob"
	size         int    // molecules per shard, the last shard holding the rest

	// read reads the shard of molecules lo.. (smiles) into out, checking
	// that it holds them; an error wrapping fs.ErrNotExist means no shard
	// and is not noted. An error names the file.
	read func(path string, lo int, smiles []string, out []T) error
	// compute returns the result of one molecule.
	compute func(smiles string) T
	// write writes the finished shard of molecules lo.. atomically; it may
	// then change out in place (the featurisation cache packs its examples).
	write func(path string, lo int, smiles []string, out []T) error
	// plan, when set, says on Log what making n molecules means ("scoring
	// 12 molecules by qed"), before the count of shards to make.
	plan func(n int) string
}

// shardFile returns the path of shard s under dir.
func shardFile(dir string, s int, ext string) string {
	return filepath.Join(dir, fmt.Sprintf("shard-%05d%s", s, ext))
}

// bounds returns the molecules lo..hi-1 of shard s of a data set of n.
func (c *shardCache[T]) bounds(s, n int) (lo, hi int) { return s * c.size, min(n, (s+1)*c.size) }

// get returns the result of every molecule of smiles (a data set's, in
// its order): read from the shards that hold them, made in parallel for
// the others, whose shards are written as soon as their molecules are done.
// A shard that cannot be read or holds other molecules is made again, and
// Log says so.
func (c *shardCache[T]) get(smiles []string) ([]T, error) {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	if err := c.removeTemporaries(); err != nil {
		return nil, err
	}
	out := make([]T, len(smiles))
	todo := c.readShards(smiles, out)
	if len(todo) > 0 && c.Log != nil {
		shards := fmt.Sprintf("%d of %d shards to make", len(todo), (len(smiles)+c.size-1)/c.size)
		if c.plan != nil {
			shards = fmt.Sprintf("%s (%s)", c.plan(c.count(todo, len(smiles))), shards)
		}
		fmt.Fprintf(c.Log, "%s %s: %s\n", c.name, c.dir, shards)
	}
	if err := c.build(smiles, todo, out); err != nil {
		return nil, err
	}
	return out, nil
}

// removeTemporaries deletes the temporary files a killed build left
// (numpy.AtomicWriteFile's ".shard-00001.gob.tmp123").
func (c *shardCache[T]) removeTemporaries() error {
	tmp, err := filepath.Glob(filepath.Join(c.dir, ".shard-*.tmp*"))
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	for _, p := range tmp {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	return nil
}

// readShards reads every shard there is into out and returns the shards
// to make: those missing, and those found bad (noted on Log).
func (c *shardCache[T]) readShards(smiles []string, out []T) (todo []int) {
	for s := 0; s*c.size < len(smiles); s++ {
		lo, hi := c.bounds(s, len(smiles))
		err := c.read(shardFile(c.dir, s, c.ext), lo, smiles[lo:hi], out[lo:hi])
		switch {
		case err == nil:
			continue
		case !errors.Is(err, fs.ErrNotExist) && c.Log != nil:
			fmt.Fprintf(c.Log, "%s: %v; rebuilding it\n", c.name, err)
		}
		todo = append(todo, s)
	}
	return todo
}

// count returns the number of molecules of the shards.
func (c *shardCache[T]) count(shards []int, n int) int {
	k := 0
	for _, s := range shards {
		lo, hi := c.bounds(s, n)
		k += hi - lo
	}
	return k
}

// build makes the molecules of the todo shards on Workers goroutines, one
// molecule per task in shard order, and writes each shard when its last
// molecule is done. Progress hears of the molecules done, those of the
// shards read first, when there is anything to make.
func (c *shardCache[T]) build(smiles []string, todo []int, out []T) error {
	if len(todo) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(orBackground(c.Ctx))
	defer cancel()
	var jobs []int
	left := make(map[int]*atomic.Int32, len(todo)) // molecules of the shard not yet made
	for _, s := range todo {
		lo, hi := c.bounds(s, len(smiles))
		for i := lo; i < hi; i++ {
			jobs = append(jobs, i)
		}
		left[s] = new(atomic.Int32)
		left[s].Store(int32(hi - lo))
	}
	total := len(smiles)
	var done atomic.Int64
	done.Store(int64(total - len(jobs)))
	var (
		mu       sync.Mutex
		firstErr error
		last     = -1
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
		cancel()
	}
	report := func() {
		mu.Lock() // keeps the reports in order, each once
		defer mu.Unlock()
		if d := int(done.Load()); c.Progress != nil && d > last {
			last = d
			c.Progress(d, total)
		}
	}
	report()
	forEach(ctx, c.Workers, len(jobs), func(k int) {
		i := jobs[k]
		out[i] = c.compute(smiles[i])
		if s := i / c.size; left[s].Add(-1) == 0 { // the shard's last molecule
			lo, hi := c.bounds(s, total)
			if err := c.write(shardFile(c.dir, s, c.ext), lo, smiles[lo:hi], out[lo:hi]); err != nil {
				fail(err)
			}
		}
		if d := done.Add(1); d%64 == 0 || int(d) == total {
			report()
		}
	})
	if firstErr != nil {
		return firstErr
	}
	if orBackground(c.Ctx).Err() != nil {
		err := context.Cause(c.Ctx) // the signal, for signal.NotifyContext
		return fmt.Errorf("%s %s: interrupted after %d of %d molecules (finished shards kept; run again to resume): %w",
			c.name, c.dir, done.Load(), total, err)
	}
	return nil
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

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

func workerCount(w, jobs int) int {
	if w <= 0 {
		w = runtime.NumCPU()
	}
	return max(1, min(w, jobs))
}
