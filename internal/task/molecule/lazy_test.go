package molecule

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
)

// validDataSet writes the data set of the first n molecules of ZINC's
// validation split into a new temporary directory and returns it; the test
// is skipped without the split.
func validDataSet(t testing.TB, n int) string {
	t.Helper()
	valid, err := ReadSmiles(filepath.Join(filepath.Dir(filepath.Dir(testVocab(t))), ValidFile))
	if err != nil {
		t.Skipf("no ZINC validation split: %v", err)
	}
	dir := t.TempDir()
	lib := &Library{Smiles: valid[:n]}
	for i := range lib.Smiles {
		lib.Lines = append(lib.Lines, i+1)
	}
	if _, err := ImportSmiles(BuildOptions{OutDir: dir, Workers: 2}, lib); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOnDemandSameQueries makes a data set of 200 ZINC molecules and a tiny
// JT-VAE over its vocabulary less one cluster (so that some molecules are
// refused), then runs the same optimisation twice from an empty cache: with
// featurisation on demand and with the whole split featurised first. The
// queries must be the same, and the on-demand run must have made fewer
// molecules than the data set holds, kept in part files of the cache.
func TestOnDemandSameQueries(t *testing.T) {
	defer func(d time.Duration) { flushAfter = d }(flushAfter)
	flushAfter = 0 // every molecule made reaches its part file at once
	dir := validDataSet(t, 200)
	data := filepath.Join(dir, DataFileName)
	vocab, err := ReadVocab(filepath.Join(dir, VocabFileName))
	if err != nil {
		t.Fatal(err)
	}
	split, err := readTrainSplit(data)
	clusters := split.clusters
	if err != nil || clusters == nil {
		t.Fatalf("data file without clusters: %v", err)
	}
	// Leave out a cluster that some molecules (not all) use.
	drop := ""
	for _, c := range vocab {
		n := 0
		for _, cs := range clusters {
			if slices.Contains(strings.Fields(cs), c) {
				n++
			}
		}
		if n >= 2 && n <= 10 {
			drop = c
			break
		}
	}
	if drop == "" {
		t.Fatal("no cluster used by 2-10 molecules")
	}
	small := filepath.Join(dir, "small-vocab.txt")
	if err := WriteVocab(small, slices.DeleteFunc(slices.Clone(vocab), func(c string) bool { return c == drop })); err != nil {
		t.Fatal(err)
	}
	ckpt := tinyNetwork(t, small, data)

	b, tk := newTask()
	run := func(mode string) (*bo.Result, string, string) {
		cache := filepath.Join(t.TempDir(), "cache")
		env := testEnv(t, false, task.Values{optMolecules: data, optCacheDir: cache, optFeaturise: mode, optWorkers: 2})
		cfg := Defaults.Config()
		cfg.Budget, cfg.RetrainEvery, cfg.NBest, cfg.NRand, cfg.Inducing = 4, 2, 20, 30, 10
		cfg.RawSamples, cfg.Restarts, cfg.Seed = 32, 4, 3
		cfg.InitialRetrainEpochs, cfg.RetrainEpochs = 0.5, 0.5
		elbo, _ := models.ParseELBO("lbo")
		runDir := filepath.Join(t.TempDir(), "run")
		res, err := tk.Optimize(env, task.OptimizeRequest{
			Model:   task.ModelRequest{Path: ckpt, ELBO: elbo, LR: 1e-3, BatchSize: 16, GradClip: 20},
			Config:  cfg,
			Options: bo.Options{Dir: runDir},
		})
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, env.Stderr.(*bytes.Buffer))
		}
		return res, cache, runDir
	}
	lazyRes, lazyCache, lazyDir := run(FeaturiseOnDemand)
	lazy := b.onDemand()
	if lazy == nil {
		t.Fatal("the on-demand run bound no lazy cache")
	}
	made, shards := lazy.stats()
	t.Logf("on demand: %d of %d molecules made, in %d shards", made, len(lazy.smiles), shards)
	if made == 0 || made >= len(lazy.smiles) {
		t.Errorf("on demand: %d of %d molecules made, want some but not all", made, len(lazy.smiles))
	}
	featurised := featurisationCPU(t, lazyDir)
	if !(featurised > 0) || featurised > lazy.CPUSeconds() {
		t.Errorf("on demand: the journal reports %v CPU s of featurisation, the cache measured %v", featurised, lazy.CPUSeconds())
	}
	fullRes, _, fullDir := run(FeaturiseFull)
	if s := featurisationCPU(t, fullDir); s != 0 {
		t.Errorf("after the full featurisation the journal reports %v CPU s of featurisation on demand", s)
	}

	if len(lazyRes.Queries) != len(fullRes.Queries) || len(lazyRes.Queries) == 0 {
		t.Fatalf("%d queries on demand, %d after the full featurisation", len(lazyRes.Queries), len(fullRes.Queries))
	}
	for i, q := range lazyRes.Queries {
		f := fullRes.Queries[i]
		if q.Object != f.Object || q.Score != f.Score && !(math.IsNaN(q.Score) && math.IsNaN(f.Score)) {
			t.Errorf("query %d: %q %v on demand, %q %v after the full featurisation", i, q.Object, q.Score, f.Object, f.Score)
		}
	}
	for i, v := range lazyRes.Versions {
		if w := fullRes.Versions[i]; v.Points != w.Points || v.Excluded != w.Excluded {
			t.Errorf("version %d: %d points, %d excluded on demand; %d, %d after the full featurisation", i, v.Points, v.Excluded, w.Points, w.Excluded)
		}
	}
	parts, _ := filepath.Glob(filepath.Join(lazyCache, "*", "shard-*.part.gob"))
	if len(parts) == 0 {
		t.Errorf("the on-demand run left no part file in %s", lazyCache)
	}
}

// featurisationCPU returns the CPU seconds of featurisation on demand that
// the run's journal reports (bo.LoopCost's stage; 0 without it).
func featurisationCPU(t *testing.T, dir string) float64 {
	t.Helper()
	c, err := bo.ReadLoopCost(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Stages {
		if s.Stage == bo.StageCostFeaturise {
			return s.CPU
		}
	}
	return 0
}

// tinyNetwork pretrains a JT-VAE of hidden size 16 over the vocabulary file
// vocab on the data set for one epoch and returns its checkpoint.
func tinyNetwork(t *testing.T, vocab, data string) string {
	t.Helper()
	env := testEnv(t, false, task.Values{optHidden: 16, optVocab: vocab, optMolecules: data, optCacheDir: t.TempDir(),
		optFeaturise: FeaturiseFull, optWorkers: 2})
	elbo, err := models.ParseELBO("lbo")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tiny.pt")
	req := task.TrainRequest{
		Opts: models.TrainOptions{ELBO: elbo, Beta: models.FixedBeta(1e-3), LR: 1e-3, BatchSize: 32, GradClip: 20,
			Device: torch.CPU, Seed: 1},
		K: math.Inf(1), Epochs: 1, ValFraction: 0.1, LabelledFraction: 1, Out: out,
	}
	if err := lookup(t).Train(env, req); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRetrainPrefetchesItsBatches: a retraining featurising on demand hands
// the prefetch the mini-batches, in order, that it then materialises, and
// they are those of a retraining without the prefetch.
func TestRetrainPrefetchesItsBatches(t *testing.T) {
	dir := validDataSet(t, 120)
	data := filepath.Join(dir, DataFileName)
	ckpt := tinyNetwork(t, filepath.Join(dir, VocabFileName), data)
	names := func(ex []jtvae.Example) []string {
		s := make([]string, len(ex))
		for k, e := range ex {
			s[k] = e.Smiles
		}
		return s
	}
	retrain := func(ahead bool) (prefetched, materialised [][]string) {
		b := &binding{}
		spec := b.spec()
		if pre := spec.Prefetch; ahead {
			spec.Prefetch = func(batches [][]jtvae.Example) func() {
				for _, ex := range batches {
					prefetched = append(prefetched, names(ex))
				}
				return pre(batches)
			}
		} else {
			spec.Prefetch = nil
		}
		mat := spec.Materialise
		spec.Materialise = func(ex []jtvae.Example) ([]jtvae.Example, error) {
			materialised = append(materialised, names(ex))
			return mat(ex)
		}
		env := testEnv(t, false, task.Values{optMolecules: data, optCacheDir: t.TempDir(), optFeaturise: FeaturiseOnDemand, optWorkers: 2})
		elbo, _ := models.ParseELBO("lbo")
		m, err := task.Define(spec).OpenModel(env, task.ModelRequest{Path: ckpt, ELBO: elbo, LR: 1e-3, BatchSize: 16, GradClip: 20})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		objs, scores, _, err := b.dataset(env)
		if err != nil {
			t.Fatal(err)
		}
		weights := make([]float64, len(objs))
		for i := range weights {
			weights[i] = 1 / float64(1+i)
		}
		if _, err := m.Retrain(bo.RetrainRequest[string]{Objects: objs, Scores: scores, Weights: weights,
			Epochs: 4.5 / float64(len(objs)/16), Seed: 7}); err != nil { // 4 steps of 16
			t.Fatal(err)
		}
		return prefetched, materialised
	}
	prefetched, materialised := retrain(true)
	if len(materialised) != 4 || !reflect.DeepEqual(prefetched, materialised) {
		t.Errorf("prefetched %d batches %v, materialised %d %v", len(prefetched), prefetched, len(materialised), materialised)
	}
	if _, without := retrain(false); !reflect.DeepEqual(without, materialised) {
		t.Errorf("batches without the prefetch %v, with it %v", without, materialised)
	}
}
