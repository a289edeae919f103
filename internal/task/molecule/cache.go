package molecule

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// FeaturiserVersion names what Featurise produces; bump it whenever
// featurise.go changes its output, so that caches made before are not used.
const FeaturiserVersion = 3

// DefaultShardSize is the number of molecules of one cache shard: a killed
// build loses at most the shards in progress (about 6 s of work per worker).
const DefaultShardSize = 256

// packedShardMagic opens every shard file written now, and shardMagic
// those written before 2026-11-27, which hold their examples unpacked; the
// SHA-256 of the gob payload follows either.
const (
	packedShardMagic = "tlbo-native jtvae packed examples\n"
	shardMagic       = "tlbo-native jtvae examples\n"
)

// CacheOptions configure CachedExamples and, as ScoreCacheOptions,
// CachedScores.
type CacheOptions struct {
	// Dir is the cache's root; the shards go to a directory under it named
	// by what they depend on: Dir/<key>/ for examples, key digesting
	// DataDigest, the vocabulary, FeaturiserVersion and ShardSize (CacheKey),
	// and Dir/<objective>-<key>/ for scores (ScoreCacheDir).
	Dir string
	// DataDigest identifies the data set (task.FileDigest of its file).
	DataDigest string
	// ShardSize is the number of molecules per shard (0: DefaultShardSize
	// for examples, ScoreShardSize for scores).
	ShardSize int
	// Workers is the number of goroutines (0: all CPUs).
	Workers int
	// Progress, when set and there is anything to make, is told the
	// molecules done (those kept from an earlier run first) of the total.
	Progress func(done, total int)
	// Log, when set, receives notes (shards to make, bad shards rebuilt).
	Log io.Writer
	// Ctx, when set, stops the build between molecules; finished shards stay.
	Ctx context.Context
}

// Cached is the featurisation of one molecule: its example, packed
// (jtvae.Pack: about 2 KiB of a ZINC molecule's 49 KiB; Collate unpacks), or the
// reason it could not be featurised.
type Cached struct {
	Example jtvae.Example
	Err     error
}

// packCached returns the featurisation of a molecule as a Cached.
func packCached(ex jtvae.Example, err error) Cached {
	if err != nil {
		return Cached{Err: err}
	}
	if ex, err = jtvae.Pack(ex); err != nil {
		return Cached{Err: err}
	}
	return Cached{Example: ex}
}

// packedShard is the content of one shard file: molecules Start.. of the
// data set, with their SMILES (checked on reading) and examples packed by
// jtvae.Pack with encoding Pack (jtvae.PackVersion), or errors. Stored
// packed, a shard reads back without decoding its examples, and ZINC's
// shards take about a seventh of the disk.
type packedShard struct {
	Key    string
	Start  int
	Pack   int
	Smiles []string
	Packed [][]byte // nil where the molecule has an error
	Errors []string // "" where the example is good
	// Made marks the molecules made so far in a part file (lazy.go); nil
	// in a whole shard, whose gob then has no such field.
	Made []bool
}

// shard is the content of a shard file written before 2026-11-27, with
// its examples unpacked (Vocab left out: it is the cache's); such shards
// are read, and rewritten packed.
type shard struct {
	Key      string
	Start    int
	Smiles   []string
	Examples []jtvae.Example
	Errors   []string
}

// CacheKey names the cache of a data set featurised over a vocabulary in
// shards of the given size.
func CacheKey(dataDigest string, v Vocab, shardSize int) string {
	h := sha256.New()
	fmt.Fprintf(h, "featuriser %d\nshard %d\ndata %s\nvocabulary %d\n", FeaturiserVersion, shardSize, dataDigest, len(v))
	for _, c := range v {
		fmt.Fprintf(h, "%s\n", c)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// CachedExamples returns the featurisation of every molecule of smiles (a
// data set's, in its order) over f's vocabulary, reading the shards of the
// cache and featurising, in parallel, only the molecules of missing ones.
// Each shard is written whole (temporary file, fsync, rename) as soon as its
// molecules are done, so an interrupted build resumes where it stopped; a
// shard that is corrupt or belongs to other molecules is rebuilt, and Log
// says so.
func CachedExamples(o CacheOptions, f *Featuriser, smiles []string) ([]Cached, error) {
	if o.ShardSize <= 0 {
		o.ShardSize = DefaultShardSize
	}
	key := CacheKey(o.DataDigest, f.vocab, o.ShardSize)
	c := &shardCache[Cached]{
		CacheOptions: o, name: "featurisation cache", dir: filepath.Join(o.Dir, key), ext: ".gob", size: o.ShardSize,
		read: func(path string, lo int, smiles []string, out []Cached) error {
			old, err := readShard(path, key, lo, smiles, f.vocab, out)
			if err == nil && old {
				migrateShard(o, path, key, lo, smiles, out)
			}
			if err == nil {
				removeStalePart(o, filepath.Dir(path), lo/o.ShardSize)
			}
			return err
		},
		compute: func(s string) Cached {
			return packCached(f.Featurise(s))
		},
		write: func(path string, lo int, smiles []string, out []Cached) error {
			if err := writeShard(path, key, lo, smiles, out); err != nil {
				return err
			}
			removeStalePart(o, filepath.Dir(path), lo/o.ShardSize)
			return nil
		},
	}
	return c.get(smiles)
}

func shardPath(dir string, s int) string { return shardFile(dir, s, ".gob") }

// removeStalePart deletes the part file of shard s under dir, which
// featurisation on demand began before the whole shard was made: every
// reader takes the whole shard, so the part file is only disk (about 2% of
// a ZINC cache filled after a run). Failing to delete it is noted on o.Log,
// not an error: the cache is right either way.
func removeStalePart(o CacheOptions, dir string, s int) {
	part := partPath(dir, s)
	if err := os.Remove(part); err != nil && !errors.Is(err, fs.ErrNotExist) && o.Log != nil {
		fmt.Fprintf(o.Log, "featurisation cache: a stale part file stays: %v\n", err)
	}
}

// writeShard writes molecules lo.. (their examples packed) as one shard
// file: magic, SHA-256 of the payload, gob payload. Gob because a packed
// example is already a gob (jtvae.Pack), and the shard's other fields are
// few.
func writeShard(path, key string, lo int, smiles []string, ex []Cached) error {
	return writeShardFile(path, packedShardMagic, key, lo, smiles, ex, nil)
}

// writeShardFile writes the molecules of ex marked in made (all of them when
// made is nil, a whole shard) atomically: magic, the SHA-256 of the payload,
// the gob of a packedShard (whose Made is made). Whole shards and part files
// (writePart) differ only in their magic and Made.
func writeShardFile(path, magic, key string, lo int, smiles []string, ex []Cached, made []bool) error {
	sh := packedShard{Key: key, Start: lo, Pack: jtvae.PackVersion, Smiles: smiles, Made: slices.Clone(made),
		Packed: make([][]byte, len(ex)), Errors: make([]string, len(ex))}
	for k, c := range ex {
		switch {
		case made != nil && !made[k]:
		case c.Err != nil:
			sh.Errors[k] = c.Err.Error()
		case c.Example.Packed == nil:
			return fmt.Errorf("featurisation cache %s: molecule %d not packed", path, lo+k)
		default:
			sh.Packed[k] = c.Example.Packed
		}
	}
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(&sh); err != nil {
		return fmt.Errorf("featurisation cache %s: %w", path, err)
	}
	sum := sha256.Sum256(payload.Bytes())
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		for _, b := range [][]byte{[]byte(magic), sum[:], payload.Bytes()} {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// migrateShard rewrites a shard of the earlier, unpacked format packed
// (its examples out, read from it and packed), so that it reads back
// faster next time; a failure is noted on Log and leaves the old shard,
// which still reads.
func migrateShard(o CacheOptions, path, key string, lo int, smiles []string, out []Cached) {
	if err := writeShard(path, key, lo, smiles, out); err != nil && o.Log != nil {
		fmt.Fprintf(o.Log, "featurisation cache: rewriting %s packed: %v; it stays as it was\n", path, err)
	}
}

// readShard reads the shard of molecules lo.. into out (packed), checking
// its checksum, key, start, SMILES and packing; old reports a shard of the
// earlier, unpacked format. An error names the file.
func readShard(path, key string, lo int, smiles []string, v Vocab, out []Cached) (old bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	bad := func(what string, args ...any) error {
		return fmt.Errorf("shard %s: %s", path, fmt.Sprintf(what, args...))
	}
	var magic string
	for _, m := range []string{packedShardMagic, shardMagic} {
		if bytes.HasPrefix(b, []byte(m)) && len(b) >= len(m)+sha256.Size {
			magic = m
		}
	}
	if magic == "" {
		return false, bad("not a featurisation cache shard")
	}
	n := len(magic) + sha256.Size
	if sum := sha256.Sum256(b[n:]); !bytes.Equal(sum[:], b[len(magic):n]) {
		return false, bad("corrupt (checksum mismatch)")
	}
	var sh packedShard
	old = magic == shardMagic
	if old {
		sh, err = decodeUnpackedShard(b[n:])
	} else {
		err = gob.NewDecoder(bytes.NewReader(b[n:])).Decode(&sh)
	}
	if err != nil {
		return false, bad("corrupt: %v", err)
	}
	switch {
	case sh.Key != key || sh.Start != lo:
		return false, bad("made for cache %s at molecule %d, want %s at %d", sh.Key, sh.Start, key, lo)
	case sh.Pack != jtvae.PackVersion:
		return false, bad("packed with encoding %d, want %d", sh.Pack, jtvae.PackVersion)
	case !slices.Equal(sh.Smiles, smiles) || len(sh.Packed) != len(smiles) || len(sh.Errors) != len(smiles):
		return false, bad("holds other molecules than the data set's %d..%d", lo, lo+len(smiles)-1)
	}
	for k := range out {
		switch {
		case sh.Errors[k] != "":
			out[k] = Cached{Err: errors.New(sh.Errors[k])}
		case len(sh.Packed[k]) == 0:
			return false, bad("molecule %d has neither an example nor an error", lo+k)
		default:
			out[k] = Cached{Example: jtvae.Example{Packed: sh.Packed[k], Vocab: v, Smiles: smiles[k]}}
		}
	}
	return old, nil
}

// decodeUnpackedShard decodes the payload of a shard of the earlier format,
// whose examples are stored unpacked, and packs them.
func decodeUnpackedShard(payload []byte) (packedShard, error) {
	var sh shard
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&sh); err != nil {
		return packedShard{}, err
	}
	p := packedShard{Key: sh.Key, Start: sh.Start, Pack: jtvae.PackVersion, Smiles: sh.Smiles,
		Packed: make([][]byte, len(sh.Examples)), Errors: sh.Errors}
	for k, ex := range sh.Examples {
		if k < len(sh.Errors) && sh.Errors[k] != "" {
			continue
		}
		packed, err := jtvae.Pack(ex)
		if err != nil {
			return packedShard{}, err
		}
		p.Packed[k] = packed.Packed
	}
	return p, nil
}

// cacheRoot returns the root of a cache of a data set file under the
// --cache-dir option: "" puts it next to the file with the cache's
// extension (DIR/molecules.examples for DIR/molecules.npz and ".examples"),
// "none" turns the cache off (""), another value is the root itself (both
// caches may share it: their subdirectories differ).
func cacheRoot(option, dataPath, ext string) string {
	switch option {
	case "none":
		return ""
	case "":
		return strings.TrimSuffix(dataPath, filepath.Ext(dataPath)) + ext
	}
	return option
}

// useCache featurises the data set's molecules through the cache of
// --cache-dir (none: not at all; examples are then made as they are asked
// for) and keeps them for example. It returns the molecules that could be
// featurised, with their scores, and says on stderr how many were left out.
func (b *binding) useCache(env *task.Env, dataPath string, smiles []string, scores []float64, clusters []string) ([]string, []float64, error) {
	root := cacheRoot(env.Opts.String(optCacheDir), dataPath, ".examples")
	b.mu.Lock()
	unbound := b.f == nil
	b.cached, b.lazy = nil, nil
	b.mu.Unlock()
	if root == "" || unbound { // no network bound: examples are made as they are asked for
		return smiles, scores, nil
	}
	if env.Opts.String(optFeaturise) == FeaturiseOnDemand {
		if clusters != nil {
			return b.lazyData(env, root, dataPath, smiles, scores, clusters)
		}
		if env.Stderr != nil {
			fmt.Fprintf(env.Stderr, "molecule data set: %s has no %s or %s array (made by an earlier data molecule): featurising the whole training split; "+
				"make the data again for featurisation on demand\n", dataPath, ClusterArray, RecoveredArray)
		}
	}
	cached, f, err := b.readCache(env, root, dataPath, smiles)
	if err != nil {
		return nil, nil, err
	}
	m := make(map[string]Cached, len(smiles))
	var keep []string
	var y []float64
	var first error
	for i, s := range smiles {
		m[s] = cached[i]
		if cached[i].Err == nil {
			keep, y = append(keep, s), append(y, scores[i])
		} else if first == nil {
			first = cached[i].Err
		}
	}
	leftOut(env, len(smiles)-len(keep), len(smiles), first)
	b.mu.Lock()
	if b.f == f {
		b.cached = m
	}
	b.mu.Unlock()
	return keep, y, nil
}

// leftOut says on stderr how many training molecules cannot be featurised.
func leftOut(env *task.Env, n, of int, first error) {
	if first != nil && env.Stderr != nil {
		fmt.Fprintf(env.Stderr, "molecule data set: %d of %d training molecules cannot be featurised over the vocabulary and are left out (the first: %v)\n",
			n, of, first)
	}
}

// lazyData is useCache with featurisation on demand (lazy.go): it keeps
// the molecules featurised in the cache, those not made yet whose clusters
// the vocabulary labels, and binds the cache for example and materialise.
func (b *binding) lazyData(env *task.Env, root, dataPath string, smiles []string, scores []float64, clusters []string) ([]string, []float64, error) {
	digest, err := task.FileDigest(dataPath)
	if err != nil {
		return nil, nil, err
	}
	f := b.featuriser()
	c, err := openLazy(CacheOptions{Dir: root, DataDigest: digest, Workers: env.Opts.Int(optWorkers), Log: env.Stderr}, f, smiles)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (give --%s DIR to keep the cache elsewhere, or none)", err, optCacheDir)
	}
	memo := map[string]error{}
	var keep []string
	var y []float64
	var first error
	made := 0
	for i, s := range smiles {
		err := labelled(f, clusters[i], memo)
		if c.done[i] {
			err = c.made[i].Err
			made++
		}
		if err == nil {
			keep, y = append(keep, s), append(y, scores[i])
		} else if first == nil {
			first = err
		}
	}
	leftOut(env, len(smiles)-len(keep), len(smiles), first)
	if env.Stderr != nil {
		fmt.Fprintf(env.Stderr, "featurisation cache %s: %d of %d training molecules made; the others are featurised as the run needs them\n",
			c.dir, made, len(smiles))
	}
	b.mu.Lock()
	if b.f == f {
		b.lazy = c
	}
	b.mu.Unlock()
	return keep, y, nil
}

// readCache returns the cached featurisation of the data set's molecules
// under root, with the featuriser bound.
func (b *binding) readCache(env *task.Env, root, dataPath string, smiles []string) ([]Cached, *Featuriser, error) {
	workers := env.Opts.Int(optWorkers)
	digest, err := task.FileDigest(dataPath)
	if err != nil {
		return nil, nil, err
	}
	// SIGTERM and SIGINT stop the featurisation between molecules with an
	// error that says so, the finished shards kept; only while it runs, so
	// that the verb's later work keeps its own handling of them.
	ctx, stop := signal.NotifyContext(env.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := CacheOptions{Dir: root, DataDigest: digest, Workers: workers, Log: env.Stderr, Ctx: ctx}
	if env.Progress != nil {
		o.Progress = func(done, total int) { env.Progress.Count("molecules", done, total) }
	}
	chem.SetLogging(env.Opts.Bool(optRDKitLog))
	f := b.featuriser()
	cached, err := CachedExamples(o, f, smiles)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (give --%s DIR to keep the cache elsewhere, or none)", err, optCacheDir)
	}
	return cached, f, nil
}
