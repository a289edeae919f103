package molecule

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/internal/task/molecule/objectives"
	"github.com/tlbo-native/tlbo-native/internal/zipcrc/ziptest"
)

// TestParseObjective: --objective takes plogp (the default, also ""), qed
// and the 19 PMO names; an unknown name is refused with every known one
// listed, a program ("command:...") as not available yet. The objective
// carries its name, failure score (-4 for plogp, 0 otherwise) and a
// description that names it (plogp's unchanged, so old runs resume).
func TestParseObjective(t *testing.T) {
	names := ObjectiveNames()
	if len(names) != 21 || names[0] != "plogp" || !slices.Contains(names, "qed") || !slices.Contains(names, "celecoxib_rediscovery") {
		t.Fatalf("objective names %v, want plogp, qed and the 19 PMO tasks", names)
	}
	for _, name := range append(names, "") {
		o, err := ParseObjective(name)
		if err != nil {
			t.Errorf("%q: %v", name, err)
			continue
		}
		want := name
		if name == "" {
			want = "plogp"
		}
		if o.Name() != want || !o.Maximize() || !o.Deterministic() {
			t.Errorf("%q: name %q, maximise %v", name, o.Name(), o.Maximize())
		}
		desc := o.Describe()["objective"]
		switch {
		case want == "plogp" && (o.FailureScore() != FailureScore || !strings.HasPrefix(desc, "penalised logP (Crippen")):
			t.Errorf("plogp: failure score %v, description %q", o.FailureScore(), desc)
		case want != "plogp" && (o.FailureScore() != 0 || !strings.HasPrefix(desc, want+" (")):
			t.Errorf("%s: failure score %v, description %q", want, o.FailureScore(), desc)
		}
	}
	for _, bad := range []string{"QED", "logp", "celecoxib", "command:./score.py"} {
		_, err := ParseObjective(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		for _, n := range names {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("%q: error %q does not list %s", bad, err, n)
			}
		}
		if strings.HasPrefix(bad, "command:") != strings.Contains(err.Error(), "an objective of optimize only") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// Through the task: the option's value picks the objective, and a bad one
	// is the verb's error.
	spec := TaskSpec()
	obj, err := spec.Objective(testEnv(t, true, task.Values{optObjective: "median1"}))
	if err != nil || obj.Describe()["objective"] != (Objective{f: mustLookup(t, "median1")}).Describe()["objective"] {
		t.Errorf("median1 through the task: %v %v", obj, err)
	}
	if _, err := spec.Objective(testEnv(t, true, task.Values{optObjective: "nope"})); err == nil || !strings.Contains(err.Error(), "--objective") {
		t.Errorf("unknown objective through the task: %v", err)
	}
	if _, _, _, err := (&binding{}).dataset(testEnv(t, true, task.Values{optObjective: "nope"})); err == nil {
		t.Error("data set under an unknown objective: no error")
	}
}

func mustLookup(t *testing.T, name string) *objectives.Objective {
	t.Helper()
	o, err := objectives.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestScoreVerbObjective: `score molecule --objective qed` prints QED
// (objectives.Lookup("qed")) of each input, one line each; an invalid one
// gets QED's failure score 0 and its reason.
func TestScoreVerbObjective(t *testing.T) {
	tk, err := task.Lookup(TaskName)
	if err != nil {
		t.Fatal(err)
	}
	qed := mustLookup(t, "qed")
	in := append(slices.Clone(sampleSmiles[:5]), "C1CC", "CC(=O)Oc1ccccc1C(=O)O")
	var out bytes.Buffer
	env := &task.Env{Opts: task.Values{optRDKitLog: false, optObjective: "qed"}, Stdout: &out, Stderr: &bytes.Buffer{}}
	err = tk.Score(env, in)
	if err == nil || !strings.Contains(err.Error(), "1 of 7 molecules failed") || !strings.Contains(err.Error(), "failure score 0") {
		t.Errorf("error %v, want 1 of 7 failed with failure score 0", err)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != len(in) {
		t.Fatalf("%d lines for %d inputs: %q", len(got), len(in), got)
	}
	for i, s := range in {
		fs := strings.Split(got[i], "\t")
		want, werr := qed.Score(s)
		switch {
		case fs[0] != s:
			t.Errorf("line %d: %q, want it to start with %q", i+1, got[i], s)
		case werr != nil && (len(fs) != 3 || fs[1] != "0"):
			t.Errorf("line %d: %q, want the failure score 0 and a reason", i+1, got[i])
		case werr == nil && (len(fs) != 2 || fs[1] != strconv.FormatFloat(want, 'g', -1, 64)):
			t.Errorf("line %d: %q, want QED %v", i+1, got[i], want)
		}
	}
	env.Opts[optObjective] = "nope"
	if err := tk.Score(env, in); err == nil || !strings.Contains(err.Error(), "unknown objective") {
		t.Errorf("score under an unknown objective: %v", err)
	}
}

// writeDataFile writes a molecules.npz whose training split is smiles with
// the given scores.
func writeDataFile(t *testing.T, smiles []string, scores []float64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), DataFileName)
	n := len(smiles)
	must(t, numpy.WriteNPZ(path, []numpy.Array{
		{Name: "smiles", Shape: []int{n}, Data: smiles},
		{Name: "canonical", Shape: []int{n}, Data: smiles},
		{Name: "score", Shape: []int{n}, Data: scores},
		{Name: "split", Shape: []int{n}, Data: make([]int64, n)},
		{Name: "ok", Shape: []int{n}, Data: slices.Repeat([]bool{true}, n)},
	}))
	return path
}

// TestDatasetObjective: under plogp the data set keeps the file's scores;
// under another objective its scores are computed (equal to the objective's)
// and cached next to the data set, read back on the next call, and computed
// without a cache under --cache-dir none.
func TestDatasetObjective(t *testing.T) {
	b := &binding{}
	b.bindVocab(mustSampleVocab(t))
	smiles := sampleSmiles[:8]
	fileScores := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	path := writeDataFile(t, smiles, fileScores)
	env := testEnv(t, false, task.Values{optMolecules: path})
	got, y, source, err := b.dataset(env)
	if err != nil || !slices.Equal(got, smiles) || !slices.Equal(y, fileScores) || strings.Contains(source, "scored by") {
		t.Fatalf("plogp: %v %v %q %v, want the file's scores", got, y, source, err)
	}
	for _, name := range []string{"qed", "osimertinib_mpo"} {
		o := mustLookup(t, name)
		want := make([]float64, len(smiles))
		for i, s := range smiles {
			if want[i], err = o.Score(s); err != nil {
				t.Fatal(err)
			}
		}
		for _, cache := range []string{"", "", "none"} {
			env := testEnv(t, false, task.Values{optMolecules: path, optObjective: name, optCacheDir: cache, optWorkers: 2})
			got, y, source, err := b.dataset(env)
			if err != nil || !slices.Equal(got, smiles) || !slices.Equal(y, want) || !strings.HasSuffix(source, "scored by "+name) {
				t.Errorf("%s, --cache-dir %q: %v %v %q %v; want scores %v", name, cache, got, y, source, err, want)
			}
		}
		shards, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "molecules.scores", name+"-*", "shard-00000.npz"))
		if len(shards) != 1 {
			t.Errorf("%s: score cache shards next to the data set: %v", name, shards)
		}
	}
}

func mustSampleVocab(t *testing.T) Vocab {
	t.Helper()
	v, err := sampleVocab()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCachedScoresResume: a scoring in shards resumes from the finished
// shards; a missing shard is scored again, a corrupt one or one of other
// molecules is rebuilt with a note; a molecule that cannot be scored has
// the failure score and is counted.
func TestCachedScoresResume(t *testing.T) {
	obj, err := ParseObjective("qed")
	if err != nil {
		t.Fatal(err)
	}
	smiles := append(slices.Clone(sampleSmiles[:6]), "C1CC")
	var log bytes.Buffer
	o := ScoreCacheOptions{Dir: t.TempDir(), DataDigest: "abc", ShardSize: 3, Workers: 2, Log: &log}
	first, failed, err := CachedScores(o, obj, smiles)
	if err != nil || failed != 1 || first[6] != 0 {
		t.Fatalf("scores %v, %d failed, %v; want the last one failed with 0", first, failed, err)
	}
	dir := ScoreCacheDir(o.Dir, o.DataDigest, obj, 3)
	shards, _ := filepath.Glob(filepath.Join(dir, "shard-*.npz"))
	if len(shards) != 3 {
		t.Fatalf("shards %v, want 3", shards)
	}
	// All shards there: read back, nothing to make.
	log.Reset()
	again, _, err := CachedScores(o, obj, smiles)
	if err != nil || !slices.Equal(again, first) || log.Len() != 0 {
		t.Errorf("read back %v %v, log %q", again, err, log.String())
	}
	must(t, os.Remove(shards[1]))
	must(t, os.WriteFile(shards[2], []byte("not a shard"), 0o644))
	log.Reset()
	again, failed, err = CachedScores(o, obj, smiles)
	if err != nil || !slices.Equal(again, first) || failed != 1 || !strings.Contains(log.String(), "rebuilding") ||
		!strings.Contains(log.String(), "2 of 3 shards") {
		t.Errorf("after removing and corrupting shards: %v %d %v, log %q", again, failed, err, log.String())
	}
	// Other molecules under the same key (a data set changed in place).
	other := slices.Clone(smiles)
	other[0] = "CCO"
	log.Reset()
	if _, _, err := CachedScores(o, obj, other); err != nil || !strings.Contains(log.String(), "other molecules") {
		t.Errorf("other molecules: %v, log %q", err, log.String())
	}
}

// TestCachedScoresCorruptShard overwrites one score inside a shard (its
// deflated score.npy, which still decompresses): the shard is named with
// its entry, rebuilt, and the scores are those computed, not the
// overwritten one.
func TestCachedScoresCorruptShard(t *testing.T) {
	obj, err := ParseObjective("qed")
	if err != nil {
		t.Fatal(err)
	}
	smiles := sampleSmiles[:6]
	var log bytes.Buffer
	o := ScoreCacheOptions{Dir: t.TempDir(), DataDigest: "abc", ShardSize: 3, Workers: 2, Log: &log}
	want, _, err := CachedScores(o, obj, smiles)
	if err != nil {
		t.Fatal(err)
	}
	shard := shardFile(ScoreCacheDir(o.Dir, o.DataDigest, obj, 3), 1, ".npz")
	b, err := os.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	// Rewritten deflated as stored blocks, the shard still reads back.
	b = ziptest.Deflate(t, b)
	must(t, os.WriteFile(shard, b, 0o644))
	log.Reset()
	if got, _, err := CachedScores(o, obj, smiles); err != nil || !slices.Equal(got, want) || log.Len() != 0 {
		t.Fatalf("shard rewritten: %v %v, log %q", got, err, log.String())
	}
	// Its second score: after the block's 5-byte header and the .npy header.
	scoresAt := 5 + npyHeaderLen(t, shard, "score.npy") + 8
	must(t, os.WriteFile(shard, ziptest.OverwriteAt(t, b, "score.npy", scoresAt, 8), 0o644))
	log.Reset()
	got, _, err := CachedScores(o, obj, smiles)
	note := "score cache: shard " + shard + `: entry "score.npy": CRC-32 mismatch`
	if err != nil || !slices.Equal(got, want) || !strings.Contains(log.String(), note) ||
		!strings.Contains(log.String(), "1 of 2 shards to make") {
		t.Errorf("corrupt shard: %v %v (want %v), log %q lacks %q", got, err, want, log.String(), note)
	}
	log.Reset()
	if got, _, err := CachedScores(o, obj, smiles); err != nil || !slices.Equal(got, want) || log.Len() != 0 {
		t.Errorf("after the rebuild: %v %v, log %q", got, err, log.String())
	}
}

// npyHeaderLen returns the length of the .npy preamble and header of an
// entry of the .npz file at path (the header's length follows the version:
// 2 bytes in format 1, 4 in formats 2 and 3).
func npyHeaderLen(t *testing.T, path, entry string) int {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	rc, err := zr.Open(entry)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var pre [12]byte
	if _, err := io.ReadFull(rc, pre[:]); err != nil {
		t.Fatalf("%s: %s: %v", path, entry, err)
	}
	if pre[6] == 1 {
		return 10 + int(binary.LittleEndian.Uint16(pre[8:]))
	}
	return 12 + int(binary.LittleEndian.Uint32(pre[8:]))
}

// TestInitialMolecules: optimize --initial N draws N distinct molecules of
// the training split with the seed (the same ones again for the same seed,
// others for another), featurised and scored by the objective (the file's
// scores for plogp); the task says they are oracle calls; more than the
// split holds is refused.
func TestInitialMolecules(t *testing.T) {
	b := &binding{}
	b.bindVocab(mustSampleVocab(t))
	smiles := sampleSmiles[:20]
	fileScores := make([]float64, len(smiles))
	for i := range fileScores {
		fileScores[i] = float64(i)
	}
	path := writeDataFile(t, smiles, fileScores)
	draw := func(name string, seed uint64, n int) ([]string, []float64, string, error) {
		env := testEnv(t, false, task.Values{optMolecules: path, optObjective: name, optInitial: n})
		env.Seed = seed
		if !TaskSpec().InitialCalls(env) {
			t.Error("--initial: the task does not count the data set as oracle calls")
		}
		return b.dataset(env)
	}
	a, ya, source, err := draw("qed", 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	qed := mustLookup(t, "qed")
	seen := map[string]bool{}
	for i, s := range a {
		if want, _ := qed.Score(s); ya[i] != want || seen[s] || !slices.Contains(smiles, s) {
			t.Errorf("initial molecule %d %s: score %v, want QED %v, distinct, from the split", i, s, ya[i], want)
		}
		seen[s] = true
	}
	if len(a) != 5 || !strings.Contains(source, "5 drawn at random with the seed, scored by qed") {
		t.Errorf("%d molecules, source %q", len(a), source)
	}
	if b, _, _, _ := draw("qed", 3, 5); !slices.Equal(a, b) {
		t.Errorf("seed 3 twice: %v and %v", a, b)
	}
	if c, _, _, _ := draw("qed", 4, 5); slices.Equal(a, c) {
		t.Errorf("seeds 3 and 4 drew the same molecules %v", a)
	}
	p, yp, _, err := draw("plogp", 3, 5)
	if err != nil || !slices.Equal(p, a) {
		t.Fatalf("plogp: %v %v, want the same draw %v", p, err, a)
	}
	for i, s := range p {
		if yp[i] != fileScores[slices.Index(smiles, s)] {
			t.Errorf("plogp: %s scored %v, want the file's", s, yp[i])
		}
	}
	if cached := len(b.cached); cached != 5 {
		t.Errorf("%d featurised molecules kept, want the 5 drawn", cached)
	}
	if _, _, _, err := draw("qed", 1, 21); err == nil || !strings.Contains(err.Error(), "--initial 21") {
		t.Errorf("more initial molecules than the split holds: %v", err)
	}
	// The synthetic sample works too.
	env := testEnv(t, true, task.Values{optObjective: "qed", optInitial: 4})
	if s, _, _, err := b.dataset(env); err != nil || len(s) != 4 {
		t.Errorf("synthetic: %v %v", s, err)
	}
}
