package molecule

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
)

// prefetchBatches returns batches of placeholders of cacheMolecules'
// featurisable molecules, repeated within and across batches, as a
// retraining draws them.
func prefetchBatches(t *testing.T, smiles []string, f *Featuriser) [][]jtvae.Example {
	t.Helper()
	var good []string
	for _, s := range smiles {
		if _, err := featurised(f, s); err == nil {
			good = append(good, s)
		}
	}
	if len(good) < 8 {
		t.Fatalf("%d featurisable molecules, want 8 at least", len(good))
	}
	pick := [][]int{{0, 1, 2, 0}, {3, 4, 1}, {5, 6, 7}, {len(good) - 1, 3}, {0, len(good) - 1}}
	for i := 8; i < len(good); i++ {
		pick[2] = append(pick[2], i)
	}
	batches := make([][]jtvae.Example, len(pick))
	for b, rows := range pick {
		for _, i := range rows {
			batches[b] = append(batches[b], jtvae.Example{Vocab: f.vocab, Smiles: good[i]})
		}
	}
	return batches
}

// cacheFiles returns the content of every file under dir, by name.
func cacheFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	return files
}

// materialiseAll materialises the batches in order through c, flushes it
// and returns the examples.
func materialiseAll(t *testing.T, c *lazyCache, batches [][]jtvae.Example) [][]jtvae.Example {
	t.Helper()
	out := make([][]jtvae.Example, len(batches))
	for b, ex := range batches {
		got, err := c.materialise(ex)
		if err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		out[b] = got
	}
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitMade waits until c has made n molecules on demand (a minute at most).
func waitMade(t *testing.T, c *lazyCache, n int) {
	t.Helper()
	for end := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if made, _ := c.stats(); made >= n {
			return
		} else if time.Now().After(end) {
			t.Fatalf("%d molecules made, want %d", made, n)
		}
	}
}

// waitGoroutines waits until no more goroutines run than n (a few seconds
// at most: one that has ended may take a moment to go).
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > n; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d goroutines, %d before the prefetch: it leaked", runtime.NumGoroutine(), n)
		}
	}
}

// TestPrefetchSame: mini-batches materialised after a prefetch of them are
// those materialised without one, example for example, and the cache's
// files are byte for byte the same; the prefetch made every molecule the
// batches need, and materialise then made none.
func TestPrefetchSame(t *testing.T) {
	smiles, f := cacheMolecules(t)
	batches := prefetchBatches(t, smiles, f)
	plain, err := openLazy(cacheOptions(t.TempDir(), &bytes.Buffer{}), f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	want := materialiseAll(t, plain, batches)
	need, _ := plain.stats()

	ahead, err := openLazy(cacheOptions(t.TempDir(), &bytes.Buffer{}), f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	stop := ahead.prefetch(batches)
	waitMade(t, ahead, need)
	got := materialiseAll(t, ahead, batches)
	stop()
	waitGoroutines(t, before)
	if made, _ := ahead.stats(); made != need {
		t.Errorf("%d molecules made with the prefetch, %d without", made, need)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("the batches materialised after a prefetch differ from those without")
	}
	if a, b := cacheFiles(t, ahead.dir), cacheFiles(t, plain.dir); !reflect.DeepEqual(a, b) || len(a) == 0 {
		t.Errorf("cache files with the prefetch %d, without %d, or their contents differ", len(a), len(b))
	}
}

// TestPrefetchKilled: a prefetch stopped part-way (as a retraining that
// fails stops it) ends its goroutine; what it made is kept, reaches the
// cache with the next flush, is read back by a new run, which makes the
// rest, and the cache ends as that of a run never stopped.
func TestPrefetchKilled(t *testing.T) {
	smiles, f := cacheMolecules(t)
	batches := prefetchBatches(t, smiles, f)
	plain, err := openLazy(cacheOptions(t.TempDir(), &bytes.Buffer{}), f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	want := materialiseAll(t, plain, batches)

	dir := t.TempDir()
	c, err := openLazy(cacheOptions(dir, &bytes.Buffer{}), f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	stop := c.prefetch(batches)
	waitMade(t, c, 1)
	stop()
	waitGoroutines(t, before)
	made, _ := c.stats()
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	again, err := openLazy(cacheOptions(dir, &bytes.Buffer{}), f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, d := range again.done {
		if d {
			kept++
		}
	}
	if kept != made || made == 0 {
		t.Errorf("%d molecules made before the stop, %d read back", made, kept)
	}
	if got := materialiseAll(t, again, batches); !reflect.DeepEqual(got, want) {
		t.Error("the batches of the resumed cache differ from those of a run never stopped")
	}
	if a, b := cacheFiles(t, again.dir), cacheFiles(t, plain.dir); !reflect.DeepEqual(a, b) || len(a) == 0 {
		t.Errorf("the resumed cache's %d files differ from those of a run never stopped (%d)", len(a), len(b))
	}
}

// TestPrefetchBadInput: a batch with a molecule outside the data set, or
// one that cannot be featurised, is refused by materialise naming it
// whether or not it was prefetched; the prefetch goes on to the later
// batches, whose molecules come out right; an empty plan ends at once.
func TestPrefetchBadInput(t *testing.T) {
	smiles, f := cacheMolecules(t)
	good := prefetchBatches(t, smiles, f)
	batches := [][]jtvae.Example{
		{{Vocab: f.vocab, Smiles: "CCO"}},     // not in the data set
		{{Vocab: f.vocab, Smiles: smiles[7]}}, // "not a smiles"
		good[0],
	}
	c, err := openLazy(cacheOptions(t.TempDir(), &bytes.Buffer{}), f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	c.prefetch(nil)()
	stop := c.prefetch(batches)
	defer stop()
	if _, err := c.materialise(batches[0]); err == nil || !strings.Contains(err.Error(), `"CCO": not in the data set`) {
		t.Errorf("a molecule outside the data set: %v", err)
	}
	if _, err := c.materialise(batches[1]); err == nil || !strings.Contains(err.Error(), "data-set molecule 8 (not a smiles)") {
		t.Errorf("a molecule that cannot be featurised: %v", err)
	}
	got, err := c.materialise(batches[2])
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range got {
		want, _ := featurised(f, e.Smiles)
		if ex, err := e.Unpack(); err != nil || e.Smiles != batches[2][k].Smiles ||
			!reflect.DeepEqual(nilEmpty(reflect.ValueOf(ex)).Interface(), nilEmpty(reflect.ValueOf(want)).Interface()) {
			t.Errorf("batch 3 example %d (%s): %v, or not its featurisation", k, batches[2][k].Smiles, err)
		}
	}
	stop()
	waitGoroutines(t, before)
}

// TestFeaturiseProgress: featurisation on demand writes a line once a
// stretch of work has lasted progressEvery, counting its molecules, and
// starts a new stretch after an idle time instead of counting that in.
func TestFeaturiseProgress(t *testing.T) {
	var w bytes.Buffer
	p := featuriseProgress{every: time.Minute}
	t0 := time.Unix(1e9, 0)
	for i := range 60 { // a molecule every second
		p.add(&w, t0.Add(time.Duration(i)*time.Second))
	}
	if w.Len() != 0 {
		t.Errorf("a line before a minute of work: %q", w.String())
	}
	p.add(&w, t0.Add(60*time.Second))
	want := "featurising on demand: 61 molecules in the last 1m0s (1.0/s), 61 since the run started\n"
	if w.String() != want {
		t.Errorf("after a minute: %q, want %q", w.String(), want)
	}
	w.Reset()
	// An hour idle (the GP's fit), then 31 molecules in 30 s: no line, the
	// idle hour is not a stretch of work.
	t1 := t0.Add(time.Hour)
	for i := range 31 {
		p.add(&w, t1.Add(time.Duration(i)*time.Second))
	}
	if w.Len() != 0 {
		t.Errorf("a line after an idle hour and 30 s of work: %q", w.String())
	}
	p.add(nil, t1.Add(time.Hour)) // no writer: counted, nothing written
	if p.made != 93 {
		t.Errorf("%d molecules counted, want 93", p.made)
	}
}

// TestEncoderExamples: FeaturiseEncoder gives Featurise's tree and graph
// without assembly groups, and a JT-VAE encodes a batch of them exactly as
// the whole examples; a molecule Featurise refuses before recovery it
// refuses alike.
func TestEncoderExamples(t *testing.T) {
	smiles, f := cacheMolecules(t)
	var full, enc []jtvae.Example
	for _, s := range smiles {
		want, werr := featurised(f, s)
		got, err := f.FeaturiseEncoder(s)
		if werr != nil {
			if err == nil && (strings.Contains(werr.Error(), "decompose") || strings.Contains(werr.Error(), "not in the vocabulary")) {
				t.Errorf("%s: Featurise fails (%v), FeaturiseEncoder does not", s, werr)
			}
			continue
		}
		if err != nil || got.Assembly != nil || !reflect.DeepEqual(got.Tree, want.Tree) || !reflect.DeepEqual(got.Graph, want.Graph) {
			t.Errorf("%s: encoder example (error %v) is not Featurise's tree and graph alone", s, err)
			continue
		}
		full, enc = append(full, want), append(enc, got)
	}
	cfg := jtvae.DefaultConfig(f.vocab)
	cfg.Hidden, cfg.Latent, cfg.LatentTree = 16, 8, 4
	if err := torch.ManualSeed(1); err != nil {
		t.Fatal(err)
	}
	net, err := jtvae.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	a, err := models.EncodeMeans(net, full)
	if err != nil {
		t.Fatal(err)
	}
	b, err := models.EncodeMeans(net, enc)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(full)*8 || !slices.Equal(a, b) {
		t.Errorf("encoder means of the whole examples and of the encoder's differ (%d molecules)", len(full))
	}
}

// TestMaterialiseEncoder: for an encoding, molecules not made get their
// tree and graph, written to no cache file and not counted as made, while
// those made give their whole examples; a molecule outside the data set,
// or one whose tree cannot be made, is an error naming it.
func TestMaterialiseEncoder(t *testing.T) {
	smiles, f := cacheMolecules(t)
	batches := prefetchBatches(t, smiles, f)
	c, err := openLazy(cacheOptions(t.TempDir(), &bytes.Buffer{}), f, smiles)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := c.materialise(batches[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	files := cacheFiles(t, c.dir)
	made, _ := c.stats()
	got, err := c.materialiseEncoder(batches[1])
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range got {
		if e.Smiles != batches[1][k].Smiles {
			t.Fatalf("example %d is %s, want %s", k, e.Smiles, batches[1][k].Smiles)
		}
		ex, err := e.Unpack()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := featurised(f, e.Smiles)
		if i := slices.IndexFunc(batches[0], func(w jtvae.Example) bool { return w.Smiles == e.Smiles }); i >= 0 {
			if !reflect.DeepEqual(e, whole[i]) {
				t.Errorf("%s: made, but not its whole example", e.Smiles)
			}
		} else if ex.Assembly != nil || !reflect.DeepEqual(ex.Tree, want.Tree) || !reflect.DeepEqual(ex.Graph, want.Graph) {
			t.Errorf("%s: not its tree and graph alone", e.Smiles)
		}
	}
	if n, _ := c.stats(); n != made {
		t.Errorf("%d molecules made after the encoding, %d before", n, made)
	}
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cacheFiles(t, c.dir), files) {
		t.Error("the encoding changed the cache's files")
	}
	if _, err := c.materialiseEncoder([]jtvae.Example{{Vocab: f.vocab, Smiles: "CCO"}}); err == nil || !strings.Contains(err.Error(), `"CCO": not in the data set`) {
		t.Errorf("a molecule outside the data set: %v", err)
	}
	if _, err := c.materialiseEncoder([]jtvae.Example{{Vocab: f.vocab, Smiles: smiles[7]}}); err == nil || !strings.Contains(err.Error(), "data-set molecule 8 (not a smiles)") {
		t.Errorf("a molecule whose tree cannot be made: %v", err)
	}
}
