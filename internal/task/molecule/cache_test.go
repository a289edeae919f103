package molecule

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// cacheMolecules returns 14 molecules of the JT-VAE test split and two
// that cannot be featurised (a bad SMILES, and one whose cluster is not in
// the vocabulary), with the featuriser of the shipped vocabulary.
func cacheMolecules(t *testing.T) ([]string, *Featuriser) {
	t.Helper()
	v, err := ReadVocab(testVocab(t))
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := FindDataDir("")
	all, err := readSmilesFile(filepath.Join(dir, TestFile))
	if err != nil {
		t.Fatal(err)
	}
	smiles := append(slices.Clone(all[:7]), "not a smiles")
	smiles = append(smiles, all[7:14]...)
	return append(smiles, "C1CCCCCCCCCCCCCCCCC1"), NewFeaturiser(v)
}

// fresh memoises the featurisation of cacheMolecules by vocabulary size
// and SMILES (the tests' featurisers differ in size or order only by the
// moved first cluster, keyed apart below).
var fresh sync.Map

func featurised(f *Featuriser, s string) (jtvae.Example, error) {
	key := f.vocab[0] + "\x00" + s
	if c, ok := fresh.Load(key); ok {
		return c.(Cached).Example, c.(Cached).Err
	}
	ex, err := f.Featurise(s)
	fresh.Store(key, Cached{Example: ex, Err: err})
	return ex, err
}

// nilEmpty returns a copy of v with every empty slice nil (gob does not
// tell them apart).
func nilEmpty(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Slice:
		if v.Len() == 0 {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(nilEmpty(v.Index(i)))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			out.Field(i).Set(nilEmpty(v.Field(i)))
		}
		return out
	}
	return v
}

// checkCached compares cached examples with fresh featurisation, array for
// array (with diffExample) and as whole values, errors by message.
func checkCached(t *testing.T, got []Cached, smiles []string, f *Featuriser) {
	t.Helper()
	if len(got) != len(smiles) {
		t.Fatalf("%d cached examples for %d molecules", len(got), len(smiles))
	}
	bad := 0
	for i, s := range smiles {
		want, werr := featurised(f, s)
		if werr != nil || got[i].Err != nil {
			bad++
			if werr == nil || got[i].Err == nil || werr.Error() != got[i].Err.Error() {
				t.Errorf("molecule %d %s: cached error %v, featurise %v", i, s, got[i].Err, werr)
			}
			continue
		}
		if got[i].Example.Packed == nil {
			t.Errorf("molecule %d %s: cached example not packed", i, s)
		}
		ex, err := got[i].Example.Unpack()
		if err != nil {
			t.Fatalf("molecule %d %s: %v", i, s, err)
		}
		if err := diffExample(nilEmpty(reflect.ValueOf(ex)).Interface().(jtvae.Example),
			nilEmpty(reflect.ValueOf(want)).Interface().(jtvae.Example)); err != nil {
			t.Errorf("molecule %d %s: %v", i, s, err)
		}
		if !reflect.DeepEqual(nilEmpty(reflect.ValueOf(ex)).Interface(), nilEmpty(reflect.ValueOf(want)).Interface()) {
			t.Errorf("molecule %d %s: cached example differs", i, s)
		}
	}
	if bad < 2 {
		t.Errorf("%d molecules failed, want at least 2", bad)
	}
}

// builtCache builds the cache of cacheMolecules in a new directory; dir is
// the directory of its shards.
func builtCache(t *testing.T) (smiles []string, f *Featuriser, o CacheOptions, dir string) {
	t.Helper()
	smiles, f = cacheMolecules(t)
	o = cacheOptions(t.TempDir(), &bytes.Buffer{})
	if _, err := CachedExamples(o, f, smiles); err != nil {
		t.Fatal(err)
	}
	return smiles, f, o, filepath.Join(o.Dir, CacheKey(o.DataDigest, f.vocab, o.ShardSize))
}

func cacheOptions(dir string, log *bytes.Buffer) CacheOptions {
	return CacheOptions{Dir: dir, DataDigest: "data", ShardSize: 4, Workers: 2, Log: log}
}

// TestCacheRoundTrip builds a cache of 16 molecules in 4 shards and reads
// it back: both equal fresh featurisation; the second call featurises
// nothing.
func TestCacheRoundTrip(t *testing.T) {
	smiles, f := cacheMolecules(t)
	var log bytes.Buffer
	o := cacheOptions(t.TempDir(), &log)
	got, err := CachedExamples(o, f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	checkCached(t, got, smiles, f)
	shards, _ := filepath.Glob(filepath.Join(o.Dir, "*", "shard-*.gob"))
	if len(shards) != 4 {
		t.Errorf("%d shards, want 4", len(shards))
	}
	log.Reset()
	o.Progress = func(done, total int) { t.Errorf("progress %d/%d with every shard cached", done, total) }
	again, err := CachedExamples(o, f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	checkCached(t, again, smiles, f)
	if log.Len() != 0 {
		t.Errorf("second read logged %q", log.String())
	}
}

// TestCacheResume removes a shard and leaves a temporary file, as a killed
// build would: only the missing shard is featurised again; then an
// interrupted build keeps its finished shards.
func TestCacheResume(t *testing.T) {
	smiles, f, o, dir := builtCache(t)
	log := o.Log.(*bytes.Buffer)
	tmp := filepath.Join(dir, ".shard-00003.gob.tmp123")
	if err := os.Remove(shardPath(dir, 2)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("half a shard"), 0o644); err != nil {
		t.Fatal(err)
	}
	var first []int
	o.Progress = func(done, total int) { first = append(first, done) }
	got, err := CachedExamples(o, f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	checkCached(t, got, smiles, f)
	if len(first) == 0 || first[0] != len(smiles)-4 || first[len(first)-1] != len(smiles) {
		t.Errorf("progress %v, want from %d to %d", first, len(smiles)-4, len(smiles))
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}

	// Interrupt a fresh build after 6 molecules: one worker, so shard 0 is
	// whole and shard 1 not; a second run makes the others.
	o = cacheOptions(t.TempDir(), log)
	ctx, cancel := context.WithCancel(context.Background())
	o.Ctx, o.Workers = ctx, 1
	o.Progress = func(done, total int) {
		if done >= 6 {
			cancel()
		}
	}
	if _, err := CachedExamples(o, f, smiles); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("interrupted build: %v", err)
	}
	o.Ctx, o.Progress = nil, func(done, total int) { first = append(first[:0], done) }
	if got, err = CachedExamples(o, f, smiles); err != nil {
		t.Fatal(err)
	}
	checkCached(t, got, smiles, f)
	if first[0] < 4 {
		t.Errorf("resumed build kept %d molecules, want at least a shard", first[0])
	}
}

// TestStalePartRemoved: a part file beside a whole shard (featurisation on
// demand began the shard, the full featurisation made it) is deleted when
// the full featurisation writes or reads that shard and when a run opens
// the cache for featurisation on demand; the examples are the whole
// shards'.
func TestStalePartRemoved(t *testing.T) {
	smiles, f, o, dir := builtCache(t)
	stale := func(shards ...int) {
		t.Helper()
		for _, s := range shards {
			if err := os.WriteFile(partPath(dir, s), []byte("begun on demand"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	left := func(when string) {
		t.Helper()
		if parts, _ := filepath.Glob(filepath.Join(dir, "*.part.gob")); len(parts) > 0 {
			t.Errorf("%s: part files left %v", when, parts)
		}
	}
	stale(0, 2) // shard 0 is read, shard 2 made again
	if err := os.Remove(shardPath(dir, 2)); err != nil {
		t.Fatal(err)
	}
	got, err := CachedExamples(o, f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	checkCached(t, got, smiles, f)
	left("full featurisation")

	stale(1, 3)
	c, err := openLazy(o, f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(c.done, false) {
		t.Error("featurisation on demand opened a whole cache with molecules to make")
	}
	left("featurisation on demand")
}

// TestCacheStale checks that another data digest, vocabulary, shard size
// or featuriser version makes another cache, and that a cache made with one
// vocabulary gives labels of the other.
func TestCacheStale(t *testing.T) {
	smiles, f := cacheMolecules(t)
	k := CacheKey("a", f.vocab, 4)
	for name, other := range map[string]string{
		"data": CacheKey("b", f.vocab, 4), "vocabulary": CacheKey("a", append(slices.Clone(f.vocab), "CC"), 4),
		"shard": CacheKey("a", f.vocab, 5), "reordered vocabulary": CacheKey("a", append(slices.Clone(f.vocab[1:]), f.vocab[0]), 4),
	} {
		if other == k {
			t.Errorf("another %s: the same key %s", name, k)
		}
	}
	var log bytes.Buffer
	o := cacheOptions(t.TempDir(), &log)
	if _, err := CachedExamples(o, f, smiles); err != nil {
		t.Fatal(err)
	}
	moved := NewFeaturiser(append(slices.Clone(f.vocab[1:]), f.vocab[0]))
	log.Reset()
	got, err := CachedExamples(o, moved, smiles)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "4 of 4 shards to make") {
		t.Errorf("another vocabulary: log %q", log.String())
	}
	checkCached(t, got, smiles, moved)
}

// TestCacheCorrupt damages shards three ways: each is named, rebuilt and
// rewritten whole.
func TestCacheCorrupt(t *testing.T) {
	smiles, f, o, dir := builtCache(t)
	log := o.Log.(*bytes.Buffer)
	b, err := os.ReadFile(shardPath(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	flipped := slices.Clone(b)
	flipped[len(b)/2] ^= 0x40
	must(t, os.WriteFile(shardPath(dir, 1), flipped, 0o644))
	must(t, os.WriteFile(shardPath(dir, 2), b[:len(b)/3], 0o644))
	must(t, os.WriteFile(shardPath(dir, 3), b, 0o644)) // shard 1's molecules
	log.Reset()
	got, err := CachedExamples(o, f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	checkCached(t, got, smiles, f)
	for _, want := range []string{
		"shard " + shardPath(dir, 1) + ": corrupt (checksum mismatch); rebuilding",
		"shard " + shardPath(dir, 2) + ": corrupt (checksum mismatch); rebuilding",
		"shard " + shardPath(dir, 3) + ": made for cache " + filepath.Base(dir) + " at molecule 4, want",
		"3 of 4 shards to make",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log %q lacks %q", log.String(), want)
		}
	}
	log.Reset()
	if _, err := CachedExamples(o, f, smiles); err != nil || log.Len() != 0 {
		t.Errorf("after the rebuild: %v, log %q", err, log.String())
	}
	must(t, os.WriteFile(shardPath(dir, 0), []byte("something else"), 0o644))
	out := make([]Cached, 4)
	if _, err := readShard(shardPath(dir, 0), filepath.Base(dir), 0, smiles[:4], f.vocab, out); err == nil ||
		!strings.Contains(err.Error(), shardPath(dir, 0)+": not a featurisation cache shard") {
		t.Errorf("foreign file: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDatasetUsesCache reads a data set file through the task: the cache
// is made next to it, examples come from it and the molecules that cannot
// be featurised are left out; --cache-dir none makes none.
func TestDatasetUsesCache(t *testing.T) {
	smiles, _ := cacheMolecules(t)
	smiles = smiles[:10]
	path := filepath.Join(t.TempDir(), DataFileName)
	n := len(smiles)
	must(t, numpy.WriteNPZ(path, []numpy.Array{
		{Name: "smiles", Shape: []int{n}, Data: smiles},
		{Name: "canonical", Shape: []int{n}, Data: smiles},
		{Name: "score", Shape: []int{n}, Data: make([]float64, n)},
		{Name: "split", Shape: []int{n}, Data: make([]int64, n)},
		{Name: "ok", Shape: []int{n}, Data: slices.Repeat([]bool{true}, n)},
	}))
	env := testEnv(t, false, task.Values{optMolecules: path, optVocab: testVocab(t)})
	b := bindOptions(t, env)
	got, _, _, err := b.dataset(env)
	if err != nil {
		t.Fatal(err)
	}
	_, f := cacheMolecules(t)
	var good []string
	for _, s := range smiles {
		if _, err := featurised(f, s); err == nil {
			good = append(good, s)
		}
	}
	if !slices.Equal(got, good) || len(good) == n || !strings.Contains(env.Stderr.(*bytes.Buffer).String(),
		fmt.Sprintf("%d of %d training molecules cannot be featurised", n-len(good), n)) {
		t.Errorf("data set %d molecules, want the %d featurisable ones; stderr %q", len(got), len(good), env.Stderr)
	}
	shards, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "molecules.examples", "*", "shard-00000.gob"))
	if len(shards) != 1 {
		t.Fatalf("cache shards next to the data set: %v", shards)
	}
	if cached := len(b.cached); cached != n {
		t.Errorf("%d molecules cached, want %d", cached, n)
	}
	if _, err := b.example(smiles[0]); err != nil {
		t.Error(err)
	}
	other := t.TempDir()
	env = testEnv(t, false, task.Values{optMolecules: path, optVocab: testVocab(t), optCacheDir: other})
	if _, _, _, err := b.dataset(env); err != nil {
		t.Fatal(err)
	}
	if shards, _ := filepath.Glob(filepath.Join(other, "*", "shard-*.gob")); len(shards) != 1 {
		t.Errorf("--cache-dir: shards %v", shards)
	}
	env.Opts[optCacheDir] = "none"
	if _, _, _, err := b.dataset(env); err != nil {
		t.Fatal(err)
	}
}
