package expression

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/datadir"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadExpressions(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "ok.txt", "x + 1\nsin(x)*2\n  exp( x )  \n")
	got, err := ReadExpressions(p)
	if want := []string{"x + 1", "sin( x ) * 2", "exp( x )"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ReadExpressions = %q, %v; want %q", got, err, want)
	}
	for _, tc := range []struct{ name, content, msg string }{
		{"minus.txt", "x + 1\nx - 1\n", "minus.txt:2: expression \"x - 1\": '-'"},
		{"long.txt", "x + x + x + x + x + x + x + x\n", "long.txt:1: expression"},
		{"blank.txt", "x\n\nx\n", "blank.txt:2: empty line"},
		{"empty.txt", "", "no expressions"},
	} {
		_, err := ReadExpressions(writeFile(t, dir, tc.name, tc.content))
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.msg)
		}
	}
	if _, err := ReadExpressions(filepath.Join(dir, "missing.txt")); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ReadExpressions(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("directory: %v", err)
	}
}

const smallData = "x + 1\nsin( x ) * 2\n1 / 3 + x + sin( x * x )\n"

func TestLoadExplicitDir(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, filepath.Join("expression", DataFileName), smallData)
	d, err := Load(LoadOptions{DataDir: dir, Log: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Exprs) != 3 || d.Scores[2] != 0 || !strings.HasPrefix(d.Source, "file ") || d.Target != DefaultTarget {
		t.Errorf("Load = %+v", d)
	}
	// $TLBO_DATA, with the file directly in the directory.
	dir2 := t.TempDir()
	writeFile(t, dir2, DataFileName, smallData)
	t.Setenv(datadir.Env, dir2)
	d, err = Load(LoadOptions{Target: "x", Log: &bytes.Buffer{}})
	if err != nil || len(d.Exprs) != 3 || d.Target != "x" || !strings.Contains(d.Source, dir2) {
		t.Errorf("Load from $%s = %+v, %v", datadir.Env, d, err)
	}
	if _, err := Load(LoadOptions{DataDir: dir, Target: "x -"}); err == nil || !strings.Contains(err.Error(), "target") {
		t.Errorf("bad target: %v", err)
	}
	missing := filepath.Join(dir, "no-such-dir")
	if _, err := Load(LoadOptions{DataDir: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing data directory: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("Load created the missing data directory")
	}
}

func TestLoadDownload(t *testing.T) {
	sum := sha256.Sum256([]byte(smallData))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, smallData)
	}))
	defer srv.Close()
	var log bytes.Buffer
	dir := t.TempDir()
	d, err := Load(LoadOptions{DataDir: dir, URL: srv.URL + "/data.txt", SHA256: hex.EncodeToString(sum[:]), Log: &log})
	if err != nil || len(d.Exprs) != 3 || !strings.HasPrefix(d.Source, "downloaded to ") {
		t.Fatalf("download: %+v, %v", d, err)
	}
	if _, ok := findFile(dir); !ok || !strings.Contains(log.String(), "downloading") {
		t.Errorf("downloaded file not in place, log %q", log.String())
	}
	// Wrong checksum: error, and no file left behind.
	dir = t.TempDir()
	_, err = Load(LoadOptions{DataDir: dir, URL: srv.URL + "/data.txt", SHA256: strings.Repeat("0", 64), Log: &log})
	if err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("bad checksum: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "expression")); len(entries) != 0 {
		t.Errorf("bad download left %v", entries)
	}
	_, err = Load(LoadOptions{DataDir: dir, URL: srv.URL + "/missing", SHA256: "00", Log: &log})
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), dir) {
		t.Errorf("404: %v", err)
	}
}

// TestLoadGenerates checks the last fallback: no data directory, no file above the
// working directory or in the cache, download failing: an error naming where Load
// looked and how to get the data, unless synthetic data are asked for.
func TestLoadGenerates(t *testing.T) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	t.Setenv(datadir.Env, "")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	t.Setenv("HOME", tmp)
	// The locator searches shared/data upwards from the working directory:
	// a data set beside an ancestor of the temporary directory would be
	// found, and the test would check nothing.
	for dir := filepath.Dir(tmp); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "shared", "data")); err == nil {
			t.Skipf("%s holds shared/data, which the locator finds from %s", dir, tmp)
		}
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var log bytes.Buffer
	opts := LoadOptions{GenerateN: 500, Seed: 3, URL: srv.URL, SHA256: "00", Timeout: 5 * time.Second, Log: &log}
	_, err := Load(opts)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(tmp, "shared", "data")) ||
		!strings.Contains(err.Error(), "--data-dir") || !strings.Contains(err.Error(), "--synthetic-data") {
		t.Fatalf("missing data set without --synthetic-data: %v", err)
	}
	opts.Synthetic = true
	d, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Exprs) != 500 || !strings.HasPrefix(d.Source, "generated") || !strings.Contains(log.String(), "generating 500 expressions") {
		t.Errorf("generated %d, source %q, log %q", len(d.Exprs), d.Source, log.String())
	}
}

func TestGenerate(t *testing.T) {
	a, b := Generate(2000, 7), Generate(2000, 7)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different expressions")
	}
	if slices.Equal(a, Generate(2000, 8)) {
		t.Error("different seeds, same expressions")
	}
	seen := map[string]bool{}
	total := 0
	for _, e := range a {
		rules, err := Parse(e)
		if err != nil {
			t.Fatalf("generated %q: %v", e, err)
		}
		if seen[e] {
			t.Fatalf("duplicate %q", e)
		}
		seen[e] = true
		total += len(rules)
	}
	t.Logf("mean derivation length %.1f rules", float64(total)/float64(len(a)))
}

func TestMT19937MatchesNumpy(t *testing.T) {
	// numpy: np.random.seed(0); np.random.permutation(10)
	if got := newMT19937(0).permutation(10); !slices.Equal(got, []int{2, 8, 4, 9, 1, 6, 7, 3, 0, 5}) {
		t.Errorf("permutation = %v", got)
	}
	// numpy: np.random.RandomState(5489).randint(0, 2**32, dtype=np.uint32), the first raw output.
	if got := newMT19937(5489).uint32(); got != 3499211612 {
		t.Errorf("first output for seed 5489 = %d, want 3499211612", got)
	}
}

func TestSubsetProperties(t *testing.T) {
	n := 1000
	scores := make([]float64, n)
	for i := range scores {
		scores[i] = float64((i * 7919) % n) // a permutation of 0..999
	}
	idx := Subset(scores, 0)
	// 65th percentile 649.35, 3rd 29.97: 350 worst (>= 650) and 50 of the band (30..649).
	worst, band := 0, 0
	seen := map[int]bool{}
	for _, i := range idx {
		if seen[i] {
			t.Fatalf("index %d twice", i)
		}
		seen[i] = true
		switch s := scores[i]; {
		case s >= 650:
			worst++
		case s >= 30:
			band++
		default:
			t.Errorf("protected point %d (score %g) in subset", i, s)
		}
	}
	if worst != 350 || band != 50 {
		t.Errorf("worst %d band %d, want 350 and 50", worst, band)
	}
	if !slices.Equal(idx, Subset(scores, 0)) || slices.Equal(idx, Subset(scores, 1)) {
		t.Error("subset not determined by its seed")
	}
	if Subset(nil, 0) != nil {
		t.Error("empty scores")
	}
}

// TestSubsetMatchesReference scores the whole data set and compares its seed-0 subset
// with the reference's (numpy, fixture), index for index.
func TestSubsetMatchesReference(t *testing.T) {
	dir := filepath.Dir(filepath.Dir(dataFile(t)))
	start := time.Now()
	d, err := Load(LoadOptions{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded and scored %d expressions in %v", len(d.Exprs), time.Since(start))
	idx := Subset(d.Scores, 0)
	raw := make([]byte, 8*len(idx))
	for i, v := range idx {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	sum := sha256.Sum256(raw)
	head := fixtureInt64(t, "subset_head")
	n := fixtureInt64(t, "subset_n")
	if len(idx) != int(n[0]) || hex.EncodeToString(sum[:]) != fixtureStrings(t, "subset_sha256")[0] {
		t.Errorf("subset of %d (head %v) differs from the reference's %d (head %v)", len(idx), idx[:min(20, len(idx))], n[0], head)
	}
}

func TestNPZRoundTrip(t *testing.T) {
	dir := t.TempDir()
	o, _ := NewObjective("")
	exprs := []string{"x + 1", "sin( x ) * 2", "exp( x / 3 ) + ( 1 )"}
	d := &Dataset{Exprs: exprs, Scores: o.ScoreAll(exprs)}
	full, subset, err := WriteDataNPZ(filepath.Join(dir, "out"), d, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, onehot, err := ReadNPZ(full)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Exprs, exprs) || !slices.Equal(got.Scores, d.Scores) || len(onehot) != 3*MaxRules*NumProductions {
		t.Errorf("round trip: %q %v (%d one-hot values)", got.Exprs, got.Scores, len(onehot))
	}
	if _, _, err := ReadNPZ(subset); err != nil {
		t.Errorf("subset: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "out")); len(entries) != 2 {
		t.Errorf("output directory holds %d entries, want the two npz files", len(entries))
	}
}

func TestNPZErrors(t *testing.T) {
	dir := t.TempDir()
	if err := WriteNPZ(filepath.Join(dir, "a.npz"), &Dataset{Exprs: []string{"x - 1"}, Scores: []float64{1}}); err == nil {
		t.Error("expression outside the grammar written")
	}
	if err := WriteNPZ(filepath.Join(dir, "a.npz"), &Dataset{Exprs: []string{"x"}}); err == nil {
		t.Error("missing scores accepted")
	}
	if err := WriteNPZ(filepath.Join(dir, "no", "such", "a.npz"), &Dataset{Exprs: []string{"x"}, Scores: []float64{1}}); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	if _, _, err := ReadNPZ(filepath.Join(dir, "missing.npz")); err == nil {
		t.Error("missing file read")
	}
	notZip := writeFile(t, dir, "bad.npz", "not a zip")
	if _, _, err := ReadNPZ(notZip); err == nil || !strings.Contains(err.Error(), "bad.npz") {
		t.Errorf("bad npz: %v", err)
	}
	if _, _, err := ReadNPZ(fixturePath); err == nil || !strings.Contains(err.Error(), `missing key "data"`) {
		t.Errorf("npz without the keys: %v", err)
	}
}
