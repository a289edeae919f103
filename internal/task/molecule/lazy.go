package molecule

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// Featurisation on demand. A BO step needs the examples of the GP's points
// (2,000 best and 8,000 random molecules of the training split) and of the
// retraining's mini-batches (drawn by rank weight, mostly among the best),
// not of all 200,000 molecules. Optimize therefore featurises a data-set
// molecule the first time an encoding or a mini-batch needs it, into the
// same cache as the full featurisation. The random GP points fall in nearly
// every shard, so the fill is per molecule, not per shard: the molecules of
// a shard made so far are kept in a part file beside it
// (shard-00012.part.gob: the shard's format with a Made mask, under its own
// magic, so that an earlier release never reads it), which becomes the
// shard once every molecule of it is made.
//
// Which molecules the loop may train on and fit (Model.Accept) must not
// depend on when they are featurised. A molecule not featurised yet is
// accepted when `data molecule` decomposed it and recovered its fragments
// (its ok entry; its clusters are in the data file, ClusterArray, and the
// file says it checked recovery, RecoveredArray) and the vocabulary labels
// all its clusters: the verdict of the full featurisation, which fails past
// that point only in assembly (no ZINC250K training molecule does). A
// molecule that passed that check and then fails to featurise stops the
// run with an error that says to make the whole cache first; it is never
// left out silently. Data files made before data molecule checked recovery
// are featurised whole (useCache): 14 of ZINC250K's training molecules
// decompose but fail recovery, and on demand they stopped runs.

// partShardMagic opens a part file.
const partShardMagic = "tlbo-native jtvae packed examples, part\n"

// flushEvery is the number of molecules made on demand, and flushAfter
// the time, after which the part files are written: a killed run loses at
// most that much work.
var (
	flushEvery = 1024
	flushAfter = 10 * time.Second
)

// FeaturiseOnDemand and FeaturiseFull are the values of --featurise.
const (
	FeaturiseOnDemand = "on-demand"
	FeaturiseFull     = "full"
)

// lazyCache holds the featurisation of a data set's molecules, made on
// demand and kept in the shards of the featurisation cache.
type lazyCache struct {
	mu      sync.Mutex
	f       *Featuriser
	dir     string // the cache's directory for this data set and vocabulary
	key     string // its CacheKey
	size    int    // molecules per shard
	workers int
	log     io.Writer

	smiles  []string       // the data set, in its order
	index   map[string]int // position of each molecule
	made    []Cached       // featurisation, where done
	done    []bool
	dirty   map[int]bool // shards with molecules made since the last flush
	pending int          // molecules made since the last flush
	// Made counts the molecules made on demand, Shards the shards they
	// touched (for the notes).
	madeCount int
	touched   map[int]bool
	flushed   time.Time // when the part files were last written
}

// openLazy reads what the cache under root holds of smiles: whole shards
// (checked as CachedExamples checks them) and part files. A bad file is
// noted on log and made again.
func openLazy(o CacheOptions, f *Featuriser, smiles []string) (*lazyCache, error) {
	if o.ShardSize <= 0 {
		o.ShardSize = DefaultShardSize
	}
	key := CacheKey(o.DataDigest, f.vocab, o.ShardSize)
	c := &lazyCache{f: f, dir: filepath.Join(o.Dir, key), key: key, size: o.ShardSize, workers: o.Workers, log: o.Log,
		smiles: smiles, index: make(map[string]int, len(smiles)), made: make([]Cached, len(smiles)),
		done: make([]bool, len(smiles)), dirty: map[int]bool{}, touched: map[int]bool{}, flushed: time.Now()}
	for i, s := range smiles {
		if _, dup := c.index[s]; !dup {
			c.index[s] = i
		}
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("featurisation cache: %w", err)
	}
	for s := 0; s*c.size < len(smiles); s++ {
		lo, hi := s*c.size, min(len(smiles), (s+1)*c.size)
		path := shardPath(c.dir, s)
		_, err := readShard(path, key, lo, smiles[lo:hi], f.vocab, c.made[lo:hi])
		if err == nil {
			for i := lo; i < hi; i++ {
				c.done[i] = true
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			c.note("featurisation cache: %v; making it again", err)
		}
		err = readPart(partPath(c.dir, s), key, lo, smiles[lo:hi], f.vocab, c.made[lo:hi], c.done[lo:hi])
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.note("featurisation cache: %v; making it again", err)
			clear(c.done[lo:hi])
		}
	}
	return c, nil
}

func (c *lazyCache) note(format string, args ...any) {
	if c.log != nil {
		fmt.Fprintf(c.log, format+"\n", args...)
	}
}

func partPath(dir string, s int) string { return shardFile(dir, s, ".part.gob") }

// lookup returns the featurisation of molecule s when it is made, a
// placeholder (see isPlaceholder) when it is a data-set molecule not made
// yet, and ok false when it is not in the data set.
func (c *lazyCache) lookup(s string) (Cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.index[s]
	if !ok {
		return Cached{}, false
	}
	if c.done[i] {
		return c.made[i], true
	}
	return Cached{Example: jtvae.Example{Vocab: c.f.vocab, Smiles: s}}, true
}

// isPlaceholder reports whether ex stands for a data-set molecule whose
// featurisation is made on demand: it has neither a packed example nor a
// tree (every featurised molecule has one or the other).
func isPlaceholder(ex jtvae.Example) bool {
	return ex.Packed == nil && len(ex.Tree.Labels) == 0 && ex.Smiles != ""
}

// materialise returns ex with each placeholder replaced by its molecule's
// featurisation, made now (in parallel) where it is not made yet. A
// molecule that cannot be featurised is an error (see the package note).
func (c *lazyCache) materialise(ex []jtvae.Example) ([]jtvae.Example, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var want []int // data-set positions to make, each once
	seen := map[int]bool{}
	for _, e := range ex {
		if !isPlaceholder(e) {
			continue
		}
		i, ok := c.index[e.Smiles]
		if !ok {
			return nil, fmt.Errorf("molecule %q: not in the data set whose featurisation is made on demand", e.Smiles)
		}
		if !c.done[i] && !seen[i] {
			seen[i] = true
			want = append(want, i)
		}
	}
	slices.Sort(want)
	forEach(nil, c.workers, len(want), func(k int) {
		i := want[k]
		c.made[i] = packCached(c.f.Featurise(c.smiles[i]))
	})
	for _, i := range want {
		c.done[i] = true
		c.dirty[i/c.size], c.touched[i/c.size] = true, true
	}
	c.pending += len(want)
	c.madeCount += len(want)
	if c.pending >= flushEvery || c.pending > 0 && time.Since(c.flushed) >= flushAfter {
		if err := c.flushLocked(); err != nil {
			return nil, err
		}
	}
	out := slices.Clone(ex)
	for k, e := range ex {
		if !isPlaceholder(e) {
			continue
		}
		i := c.index[e.Smiles]
		if err := c.made[i].Err; err != nil {
			return nil, fmt.Errorf("data-set molecule %d (%s) passed the data's decomposition and the vocabulary but cannot be featurised: %w; "+
				"featurise the whole training split first (optimize --%s %s) so that it is left out from the start", i+1, e.Smiles, err, optFeaturise, FeaturiseFull)
		}
		out[k] = c.made[i].Example
		out[k].Vocab, out[k].Smiles = c.f.vocab, e.Smiles
	}
	return out, nil
}

// flush writes the shards with molecules made since the last flush.
func (c *lazyCache) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked()
}

// flushLocked writes each dirty shard: whole when all its molecules are
// made (its part file then removed), else as a part file.
func (c *lazyCache) flushLocked() error {
	shards := make([]int, 0, len(c.dirty))
	for s := range c.dirty {
		shards = append(shards, s)
	}
	slices.Sort(shards)
	for _, s := range shards {
		lo, hi := s*c.size, min(len(c.smiles), (s+1)*c.size)
		if !slices.Contains(c.done[lo:hi], false) {
			if err := writeShard(shardPath(c.dir, s), c.key, lo, c.smiles[lo:hi], c.made[lo:hi]); err != nil {
				return err
			}
			if err := os.Remove(partPath(c.dir, s)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("featurisation cache: %w", err)
			}
		} else if err := writePart(partPath(c.dir, s), c.key, lo, c.smiles[lo:hi], c.made[lo:hi], c.done[lo:hi]); err != nil {
			return err
		}
		delete(c.dirty, s)
	}
	c.pending, c.flushed = 0, time.Now()
	return nil
}

// stats returns the molecules made on demand so far and the shards they
// fell in.
func (c *lazyCache) stats() (molecules, shards int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.madeCount, len(c.touched)
}

// writePart writes the molecules made of a shard (done) as its part file:
// the part magic, SHA-256 of the payload, the gob of a packedShard whose
// Made marks them.
func writePart(path, key string, lo int, smiles []string, ex []Cached, done []bool) error {
	return writeShardFile(path, partShardMagic, key, lo, smiles, ex, done)
}

// readPart reads a part file into out and done, checking it as readShard
// checks a shard. An error names the file.
func readPart(path, key string, lo int, smiles []string, v Vocab, out []Cached, done []bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	bad := func(what string, args ...any) error {
		return fmt.Errorf("part shard %s: %s", path, fmt.Sprintf(what, args...))
	}
	n := len(partShardMagic) + sha256.Size
	if !bytes.HasPrefix(b, []byte(partShardMagic)) || len(b) < n {
		return bad("not a featurisation cache part file")
	}
	if sum := sha256.Sum256(b[n:]); !bytes.Equal(sum[:], b[len(partShardMagic):n]) {
		return bad("corrupt (checksum mismatch)")
	}
	var sh packedShard
	if err := gob.NewDecoder(bytes.NewReader(b[n:])).Decode(&sh); err != nil {
		return bad("corrupt: %v", err)
	}
	switch {
	case sh.Key != key || sh.Start != lo:
		return bad("made for cache %s at molecule %d, want %s at %d", sh.Key, sh.Start, key, lo)
	case sh.Pack != jtvae.PackVersion:
		return bad("packed with encoding %d, want %d", sh.Pack, jtvae.PackVersion)
	case !slices.Equal(sh.Smiles, smiles) || len(sh.Packed) != len(smiles) || len(sh.Errors) != len(smiles) || len(sh.Made) != len(smiles):
		return bad("holds other molecules than the data set's %d..%d", lo, lo+len(smiles)-1)
	}
	for k := range out {
		switch {
		case !sh.Made[k]:
		case sh.Errors[k] != "":
			out[k], done[k] = Cached{Err: errors.New(sh.Errors[k])}, true
		case len(sh.Packed[k]) == 0:
			return bad("molecule %d has neither an example nor an error", lo+k)
		default:
			out[k], done[k] = Cached{Example: jtvae.Example{Packed: sh.Packed[k], Vocab: v, Smiles: smiles[k]}}, true
		}
	}
	return nil
}

// labelled reports whether the vocabulary labels every cluster of a
// molecule (clusters as ClusterArray holds them), memoising by cluster.
func labelled(f *Featuriser, clusters string, memo map[string]error) error {
	if clusters == "" {
		return errors.New("no clusters in the data file (decomposition failed)")
	}
	for _, c := range strings.Fields(clusters) {
		err, ok := memo[c]
		if !ok {
			_, err = f.label(c)
			memo[c] = err
		}
		if err != nil {
			return err
		}
	}
	return nil
}
