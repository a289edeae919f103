package molecule

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// fixtureShard is the featurisation cache's shard as written from
// FeaturiserVersion 3 until 2026-11-27 (examples unpacked), and
// fixturePackedShard as written since (examples packed by jtvae.Pack),
// spelled here apart from the code so that a change of either format fails
// the tests: the magic line, the SHA-256 of the payload, and a gob of the
// struct (gob matches fields by name).
type fixtureShard struct {
	Key      string
	Start    int
	Smiles   []string
	Examples []jtvae.Example
	Errors   []string
}

type fixturePackedShard struct {
	Key    string
	Start  int
	Pack   int
	Smiles []string
	Packed [][]byte
	Errors []string
}

const (
	fixtureMagic       = "tlbo-native jtvae examples\n"
	fixturePackedMagic = "tlbo-native jtvae packed examples\n"
)

// writeFixtureShard writes sh (a fixtureShard or fixturePackedShard) as a
// shard file opened by magic.
func writeFixtureShard(t *testing.T, path, magic string, sh any) {
	t.Helper()
	var payload bytes.Buffer
	must(t, gob.NewEncoder(&payload).Encode(sh))
	sum := sha256.Sum256(payload.Bytes())
	must(t, os.WriteFile(path, slices.Concat([]byte(magic), sum[:], payload.Bytes()), 0o644))
}

// readFixturePackedShard reads a shard of the packed format, failing t if
// the file is not one.
func readFixturePackedShard(t *testing.T, path string) fixturePackedShard {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	n := len(fixturePackedMagic) + sha256.Size
	if len(b) < n || string(b[:len(fixturePackedMagic)]) != fixturePackedMagic {
		t.Fatalf("%s: not a shard of the packed fixture format", path)
	}
	if sum := sha256.Sum256(b[n:]); !bytes.Equal(sum[:], b[len(fixturePackedMagic):n]) {
		t.Fatalf("%s: checksum mismatch", path)
	}
	var sh fixturePackedShard
	must(t, gob.NewDecoder(bytes.NewReader(b[n:])).Decode(&sh))
	return sh
}

// checkPackedShards checks that the shards of dir are in the packed format
// and hold smiles' molecules, each packed example unpacking to its fresh
// featurisation (checkCached) and each error as featurisation's.
func checkPackedShards(t *testing.T, dir string, smiles []string, f *Featuriser) {
	t.Helper()
	var got []Cached
	for s := 0; 4*s < len(smiles); s++ {
		sh := readFixturePackedShard(t, filepath.Join(dir, fmt.Sprintf("shard-%05d.gob", s)))
		if sh.Key != filepath.Base(dir) || sh.Start != 4*s || sh.Pack != jtvae.PackVersion ||
			!slices.Equal(sh.Smiles, smiles[4*s:4*s+4]) || len(sh.Packed) != 4 || len(sh.Errors) != 4 {
			t.Fatalf("shard %d: key %s, start %d, packing %d, smiles %v", s, sh.Key, sh.Start, sh.Pack, sh.Smiles)
		}
		for k := range sh.Packed {
			c := Cached{Example: jtvae.Example{Packed: sh.Packed[k], Vocab: f.vocab, Smiles: sh.Smiles[k]}}
			if sh.Errors[k] != "" {
				c = Cached{Err: errors.New(sh.Errors[k])}
			}
			got = append(got, c)
		}
	}
	checkCached(t, got, smiles, f)
}

// readOnly reads the examples of smiles from the cache, failing t if any
// shard is made again (progress reported or a note logged).
func readOnly(t *testing.T, o CacheOptions, f *Featuriser, smiles []string) {
	t.Helper()
	o.Progress = func(done, total int) { t.Errorf("progress %d/%d with every shard there", done, total) }
	got, err := CachedExamples(o, f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	checkCached(t, got, smiles, f)
	if log := o.Log.(*bytes.Buffer); log.Len() != 0 {
		t.Errorf("shards there: log %q", log.String())
	}
}

// TestCacheFormat: shards written in the earlier, unpacked format spelled
// by the fixture are read without featurising anything and rewritten in
// the packed format; shards the cache writes read as the packed fixture
// format, in the same directory and file names.
func TestCacheFormat(t *testing.T) {
	smiles, f := cacheMolecules(t)
	var log bytes.Buffer
	o := cacheOptions(t.TempDir(), &log)
	dir := filepath.Join(o.Dir, CacheKey(o.DataDigest, f.vocab, o.ShardSize))
	must(t, os.MkdirAll(dir, 0o755))
	for s := 0; s*o.ShardSize < len(smiles); s++ {
		lo, hi := s*o.ShardSize, min(len(smiles), (s+1)*o.ShardSize)
		sh := fixtureShard{Key: filepath.Base(dir), Start: lo, Smiles: smiles[lo:hi],
			Examples: make([]jtvae.Example, hi-lo), Errors: make([]string, hi-lo)}
		for k, smi := range sh.Smiles {
			ex, err := featurised(f, smi)
			if err != nil {
				sh.Errors[k] = err.Error()
				continue
			}
			sh.Examples[k], sh.Examples[k].Vocab = ex, nil
		}
		writeFixtureShard(t, filepath.Join(dir, fmt.Sprintf("shard-%05d.gob", s)), fixtureMagic, &sh)
	}
	readOnly(t, o, f, smiles)
	checkPackedShards(t, dir, smiles, f) // rewritten packed
	readOnly(t, o, f, smiles)

	log.Reset()
	o = cacheOptions(t.TempDir(), &log)
	if _, err := CachedExamples(o, f, smiles); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(o.Dir, filepath.Base(dir))
	checkPackedShards(t, dir, smiles, f)

	// A shard packed with another encoding is refused and made again.
	path := filepath.Join(dir, "shard-00001.gob")
	sh := readFixturePackedShard(t, path)
	sh.Pack++
	writeFixtureShard(t, path, fixturePackedMagic, &sh)
	log.Reset()
	if _, err := CachedExamples(o, f, smiles); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%s: packed with encoding %d, want %d; rebuilding", path, jtvae.PackVersion+1, jtvae.PackVersion); !strings.Contains(log.String(), want) {
		t.Errorf("log %q lacks %q", log.String(), want)
	}
	checkPackedShards(t, dir, smiles, f)
}

// TestScoreCacheFormat: .npz shards of arrays smiles, score and error, as
// the score cache has written them, are read without scoring (the scores
// are made up, not QED's), and the cache's own shards hold those arrays.
func TestScoreCacheFormat(t *testing.T) {
	obj, err := ParseObjective("qed")
	must(t, err)
	smiles := append(slices.Clone(sampleSmiles[:4]), "C1CC")
	scores := []float64{0.1, 0.2, 0.3, 0.4, 0}
	errs := []string{"", "", "", "", "cannot parse"}
	var log bytes.Buffer
	o := ScoreCacheOptions{Dir: t.TempDir(), DataDigest: "abc", ShardSize: 3, Workers: 1, Log: &log,
		Progress: func(done, total int) { t.Errorf("progress %d/%d with every shard written", done, total) }}
	dir := ScoreCacheDir(o.Dir, o.DataDigest, obj, 3)
	must(t, os.MkdirAll(dir, 0o755))
	for s, lo := range []int{0, 3} {
		hi := min(len(smiles), lo+3)
		must(t, numpy.WriteNPZ(filepath.Join(dir, fmt.Sprintf("shard-%05d.npz", s)), []numpy.Array{
			{Name: "smiles", Shape: []int{hi - lo}, Data: smiles[lo:hi]},
			{Name: "score", Shape: []int{hi - lo}, Data: scores[lo:hi]},
			{Name: "error", Shape: []int{hi - lo}, Data: errs[lo:hi]},
		}))
	}
	got, failed, err := CachedScores(o, obj, smiles)
	if err != nil || !slices.Equal(got, scores) || failed != 1 || log.Len() != 0 {
		t.Errorf("fixture shards: %v, %d failed, %v, log %q", got, failed, err, log.String())
	}

	o.Dir, o.Progress = t.TempDir(), nil
	if _, _, err := CachedScores(o, obj, smiles); err != nil {
		t.Fatal(err)
	}
	arrays, err := numpy.ReadNPZ(filepath.Join(ScoreCacheDir(o.Dir, o.DataDigest, obj, 3), "shard-00001.npz"))
	must(t, err)
	names := map[string]any{}
	for _, a := range arrays {
		names[a.Name] = a.Data
	}
	if y, ok := names["score"].([]float64); !ok || len(y) != 2 || !slices.Equal(names["smiles"].([]string), smiles[3:]) ||
		names["error"].([]string)[1] == "" || len(arrays) != 3 {
		t.Errorf("written shard: %v", names)
	}
	if _, err := os.Stat(filepath.Join(ScoreCacheDir(o.Dir, o.DataDigest, obj, 3), "shard-00002.npz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a third shard for 5 molecules in shards of 3: %v", err)
	}
}
