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
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// shardMagic opens every shard file; the SHA-256 of the gob payload follows.
const shardMagic = "tlbo-native jtvae examples\n"

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
// (jtvae.Pack: a fourteenth of its size in memory; Collate unpacks), or the
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

// shard is the content of one shard file: molecules Start.. of the data
// set, with their SMILES (checked on reading) and examples or errors.
type shard struct {
	Key      string
	Start    int
	Smiles   []string
	Examples []jtvae.Example // Vocab left out: it is the cache's
	Errors   []string        // "" where the example is good
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
			return readShard(path, key, lo, smiles, f.vocab, out)
		},
		compute: func(s string) Cached {
			ex, err := f.Featurise(s)
			return Cached{Example: ex, Err: err}
		},
		write: func(path string, lo int, smiles []string, out []Cached) error {
			if err := writeShard(path, key, lo, smiles, out); err != nil {
				return err
			}
			for k, x := range out { // packed only now: the shard stores examples unpacked
				out[k] = packCached(x.Example, x.Err)
			}
			return nil
		},
	}
	return c.get(smiles)
}

func shardPath(dir string, s int) string { return shardFile(dir, s, ".gob") }

// writeShard writes molecules lo.. as one shard file: magic, SHA-256 of the
// payload, gob payload. Gob because an example is ragged (trees, graphs,
// groups of candidate graphs) and gob stores it as it is, with no flattening
// code to keep in step with jtvae.Example, and compactly: one-hot 0 and 1
// features take 1 and 3 bytes, small indices one. The examples of ex are
// the featuriser's, not yet packed.
func writeShard(path, key string, lo int, smiles []string, ex []Cached) error {
	sh := shard{Key: key, Start: lo, Smiles: smiles, Examples: make([]jtvae.Example, len(ex)), Errors: make([]string, len(ex))}
	for k, c := range ex {
		if c.Err != nil {
			sh.Errors[k] = c.Err.Error()
			continue
		}
		sh.Examples[k] = c.Example
		sh.Examples[k].Vocab = nil
	}
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(&sh); err != nil {
		return fmt.Errorf("featurisation cache %s: %w", path, err)
	}
	sum := sha256.Sum256(payload.Bytes())
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		for _, b := range [][]byte{[]byte(shardMagic), sum[:], payload.Bytes()} {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// readShard reads the shard of molecules lo.. into out, checking its
// checksum, key, start and SMILES; an error names the file.
func readShard(path, key string, lo int, smiles []string, v Vocab, out []Cached) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	bad := func(what string, args ...any) error {
		return fmt.Errorf("shard %s: %s", path, fmt.Sprintf(what, args...))
	}
	n := len(shardMagic) + sha256.Size
	if len(b) < n || string(b[:len(shardMagic)]) != shardMagic {
		return bad("not a featurisation cache shard")
	}
	if sum := sha256.Sum256(b[n:]); !bytes.Equal(sum[:], b[len(shardMagic):n]) {
		return bad("corrupt (checksum mismatch)")
	}
	var sh shard
	if err := gob.NewDecoder(bytes.NewReader(b[n:])).Decode(&sh); err != nil {
		return bad("corrupt: %v", err)
	}
	switch {
	case sh.Key != key || sh.Start != lo:
		return bad("made for cache %s at molecule %d, want %s at %d", sh.Key, sh.Start, key, lo)
	case !slices.Equal(sh.Smiles, smiles) || len(sh.Examples) != len(smiles) || len(sh.Errors) != len(smiles):
		return bad("holds other molecules than the data set's %d..%d", lo, lo+len(smiles)-1)
	}
	for k := range out {
		if sh.Errors[k] != "" {
			out[k] = Cached{Err: errors.New(sh.Errors[k])}
			continue
		}
		sh.Examples[k].Vocab = v
		out[k] = packCached(sh.Examples[k], nil)
	}
	return nil
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
func useCache(env *task.Env, dataPath string, smiles []string, scores []float64) ([]string, []float64, error) {
	root := cacheRoot(env.Opts.String(optCacheDir), dataPath, ".examples")
	bound.Lock()
	unbound := bound.f == nil
	bound.Unlock()
	if root == "" || unbound { // no network bound: examples are made as they are asked for
		bound.Lock()
		bound.cached = nil
		bound.Unlock()
		return smiles, scores, nil
	}
	cached, f, err := readCache(env, root, dataPath, smiles)
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
	if first != nil && env.Stderr != nil {
		fmt.Fprintf(env.Stderr, "molecule data set: %d of %d training molecules cannot be featurised over the vocabulary and are left out (the first: %v)\n",
			len(smiles)-len(keep), len(smiles), first)
	}
	bound.Lock()
	if bound.f == f {
		bound.cached = m
	}
	bound.Unlock()
	return keep, y, nil
}

// readCache returns the cached featurisation of the data set's molecules
// under root, with the featuriser bound.
func readCache(env *task.Env, root, dataPath string, smiles []string) ([]Cached, *Featuriser, error) {
	workers := env.Opts.Int(optWorkers)
	digest, err := task.FileDigest(dataPath)
	if err != nil {
		return nil, nil, err
	}
	o := CacheOptions{Dir: root, DataDigest: digest, Workers: workers, Log: env.Stderr, Ctx: env.Ctx}
	if env.Progress != nil {
		o.Progress = func(done, total int) { env.Progress.Count("molecules", done, total) }
	}
	chem.SetLogging(env.Opts.Bool(optRDKitLog))
	bound.Lock()
	f := bound.f
	bound.Unlock()
	cached, err := CachedExamples(o, f, smiles)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (give --%s DIR to keep the cache elsewhere, or none)", err, optCacheDir)
	}
	return cached, f, nil
}
