package molecule

import (
	"bytes"
	"context"
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
	"sync/atomic"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/rusage"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// Featurisation on demand. A BO step needs the examples of the GP's points
// (2,000 best and 8,000 random molecules of the training split) and of the
// retraining's mini-batches (drawn by rank weight, mostly among the best),
// not of all 200,000 molecules. Optimize therefore featurises a data-set
// molecule the first time a mini-batch needs it, into the same cache as
// the full featurisation; the next mini-batches' molecules are made in the
// background while a step runs (prefetch). An encoding needs only a
// molecule's tree and graph, a small part of the work (most of it is
// recovery and assembly), so a GP point not made yet gets those alone,
// kept for the run but not in the cache (materialiseEncoder). The random GP points fall in nearly
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
// molecule that passed that check and then fails to featurise (for an
// encoding, to make its tree and graph; in a mini-batch, at all) stops the
// run with an error that says to make the whole cache first; it is never
// left out silently. Data files made before data molecule checked recovery
// are featurised whole (useCache): 14 of ZINC250K's training molecules
// decompose but fail recovery, and on demand they stopped runs.

// partShardMagic opens a part file.
const partShardMagic = "tlbo-native jtvae packed examples, part\n"

// flushEvery is the number of molecules made on demand, and flushAfter
// the time, after which the part files are written: a killed run (kill
// -9, a second SIGINT) loses at most that much work. A run that ends, or
// stops on a signal, writes the rest when it ends (binding.flush).
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
	// inflight holds the molecules being made, each with the channel
	// that is closed when the call making it ends.
	inflight map[int]chan struct{}
	// encoder holds the trees and graphs made for the encoder alone
	// (materialiseEncoder), by position.
	encoder  map[int]Cached
	progress featuriseProgress
	// cpuNanos is the CPU time of the featurisations made so far, on
	// whichever threads made them (CPUSeconds).
	cpuNanos atomic.Int64
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
		done: make([]bool, len(smiles)), dirty: map[int]bool{}, touched: map[int]bool{}, flushed: time.Now(),
		inflight: map[int]chan struct{}{}, encoder: map[int]Cached{}, progress: featuriseProgress{every: progressEvery}}
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
			removeStalePart(o, c.dir, s)
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
	want, err := c.positions(ex)
	if err != nil {
		return nil, err
	}
	if err := c.make(nil, want); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending >= flushEvery || c.pending > 0 && time.Since(c.flushed) >= flushAfter {
		if err := c.flushLocked(); err != nil {
			return nil, err
		}
	}
	return c.fillLocked(ex, func(i int) Cached { return c.made[i] })
}

// fillLocked returns ex with each placeholder replaced by get's example of
// its molecule (by data-set position); get's error is the run's.
func (c *lazyCache) fillLocked(ex []jtvae.Example, get func(i int) Cached) ([]jtvae.Example, error) {
	out := slices.Clone(ex)
	for k, e := range ex {
		if !isPlaceholder(e) {
			continue
		}
		i := c.index[e.Smiles]
		made := get(i)
		if err := made.Err; err != nil {
			return nil, fmt.Errorf("data-set molecule %d (%s) passed the data's decomposition and the vocabulary but cannot be featurised: %w; "+
				"featurise the whole training split first (optimize --%s %s) so that it is left out from the start", i+1, e.Smiles, err, optFeaturise, FeaturiseFull)
		}
		out[k] = made.Example
		out[k].Vocab, out[k].Smiles = c.f.vocab, e.Smiles
	}
	return out, nil
}

// materialiseEncoder is materialise for the encoder alone: a molecule not
// made yet gets its tree and graph (FeaturiseEncoder, a small part of
// the work), made now in parallel and kept for the run but not in the cache,
// whose shards hold whole examples. The encoder reads nothing else, so the
// encodings are those of materialise's examples; only a molecule that
// fails at recovery or assembly, which the data's check leaves to a
// retraining to find, is not an error here.
func (c *lazyCache) materialiseEncoder(ex []jtvae.Example) ([]jtvae.Example, error) {
	want, err := c.positions(ex)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	want = slices.DeleteFunc(want, func(i int) bool { _, ok := c.encoder[i]; return ok })
	c.mu.Unlock()
	made := make([]Cached, len(want))
	forEach(nil, c.workers, len(want), func(k int) {
		c.timed(func() { made[k] = packCached(c.f.FeaturiseEncoder(c.smiles[want[k]])) })
		c.progress.add(c.log, time.Now())
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, i := range want {
		c.encoder[i] = made[k]
	}
	return c.fillLocked(ex, func(i int) Cached {
		if c.done[i] {
			return c.made[i]
		}
		return c.encoder[i]
	})
}

// positions returns the data-set positions of the placeholders of ex not
// made yet, each once, in order; a placeholder of a molecule outside the
// data set is an error.
func (c *lazyCache) positions(ex []jtvae.Example) ([]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var want []int
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
	return want, nil
}

// make featurises the molecules at positions want that are not made yet,
// in parallel, and waits for those that another call is making. A
// molecule is made once whoever asks first: a call claims the molecules
// nobody is making (inflight) before it makes them, outside the lock. When
// ctx ends it returns its error, what it claimed and did not make given
// back; a call that waited for them then makes them itself.
func (c *lazyCache) make(ctx context.Context, want []int) error {
	ctx = orBackground(ctx)
	for {
		mine, wait := c.claim(want)
		if len(mine) == 0 && len(wait) == 0 {
			return nil
		}
		if len(mine) > 0 {
			if err := c.makeClaimed(ctx, mine); err != nil {
				return err
			}
		}
		for _, ch := range wait {
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// claim returns the molecules of want that nobody makes, now claimed, and
// the channels of the calls making others.
func (c *lazyCache) claim(want []int) (mine []int, wait []chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, i := range want {
		switch ch, ok := c.inflight[i]; {
		case c.done[i]:
		case ok:
			wait = append(wait, ch)
		default:
			mine = append(mine, i)
		}
	}
	if len(mine) > 0 {
		ch := make(chan struct{})
		for _, i := range mine {
			c.inflight[i] = ch
		}
	}
	return mine, wait
}

// makeClaimed featurises the claimed molecules at positions mine and
// keeps what it made; the others (ctx ended) it gives back.
func (c *lazyCache) makeClaimed(ctx context.Context, mine []int) error {
	made := make([]Cached, len(mine))
	finished := make([]bool, len(mine))
	err := forEach(ctx, c.workers, len(mine), func(k int) {
		c.timed(func() { made[k], finished[k] = packCached(c.f.Featurise(c.smiles[mine[k]])), true })
		c.progress.add(c.log, time.Now())
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.inflight[mine[0]]
	n := 0
	for k, i := range mine {
		delete(c.inflight, i)
		if finished[k] {
			c.made[i], c.done[i] = made[k], true
			c.dirty[i/c.size], c.touched[i/c.size] = true, true
			n++
		}
	}
	close(ch)
	c.pending += n
	c.madeCount += n
	return err
}

// prefetch makes the molecules of batches, batch by batch in order, in the
// background, as materialise will (the same molecules, the same
// featurisation), so that materialise finds them made or being made; the
// cache is written by materialise and flush as before. stop ends the work
// between molecules and returns once it has ended.
func (c *lazyCache) prefetch(batches [][]jtvae.Example) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for _, b := range batches {
			want, err := c.positions(b)
			if err != nil {
				continue // materialise says so when it gets there
			}
			if c.make(ctx, want) != nil {
				return
			}
		}
	}()
	return func() {
		cancel()
		<-ended
	}
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

// progressEvery is how often featurisation on demand says how far it has
// gone, as long work without a terminal does (cmd's progress lines).
const progressEvery = time.Minute

// featuriseProgress counts the molecules made on demand (by materialise
// and prefetch alike) and writes a line about them at most every
// every (progressEvery) while they are being made: a retraining or an encoding
// whose mini-batches need thousands of them otherwise shows nothing for
// minutes.
type featuriseProgress struct {
	mu     sync.Mutex
	every  time.Duration
	made   int       // molecules made on demand so far
	since  time.Time // the first molecule of the stretch
	atLine int       // made before the stretch the next line tells of
	last   time.Time // the last molecule made
}

// add counts one molecule made at now and writes the line on w when it
// is due.
func (p *featuriseProgress) add(w io.Writer, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.made++
	if p.since.IsZero() || now.Sub(p.last) >= p.every { // a new stretch of work, not the idle time before it
		p.since, p.atLine = now, p.made-1
	}
	p.last = now
	if d := now.Sub(p.since); w != nil && d >= p.every {
		fmt.Fprintf(w, "featurising on demand: %d molecules in the last %s (%.1f/s), %d since the run started\n",
			p.made-p.atLine, d.Round(time.Second), float64(p.made-p.atLine)/d.Seconds(), p.made)
		p.atLine, p.since = p.made, time.Time{}
	}
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

// timed runs a featurisation and adds its thread's CPU time to the cache's.
func (c *lazyCache) timed(featurise func()) {
	if s := rusage.ThreadCPU(featurise); s > 0 {
		c.cpuNanos.Add(int64(s * 1e9))
	}
}

// CPUSeconds returns the CPU time of the featurisations made on demand so
// far (whole molecules and the encoder's trees and graphs): they run on
// worker threads, often while the network trains, so the loop's stages
// cannot time them.
func (c *lazyCache) CPUSeconds() float64 { return float64(c.cpuNanos.Load()) / 1e9 }
