package molecule

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// BenchmarkOnDemandRetrain measures what featurisation on demand costs the
// first retraining and encoding of a molecule run, and what the prefetch
// gains: the shipped network (pretrained/molecule-t.pt) is retrained for 10
// steps at batch 128 on 4,000 molecules of ZINC's validation split, then
// encodes 1,024 others, all featurised on demand from an empty cache;
// once as the release before (Spec.Prefetch and Spec.MaterialiseEncoder
// nil: each mini-batch featurised when drawn, each GP point featurised
// whole) and once with both (the next mini-batches featurised while a step
// runs, the GP points' trees and graphs alone). It reports wall and CPU seconds of each stage and those
// spent in Materialise (featurising; with the prefetch, waiting for it,
// while the CPU figure counts the background's work too).
//
//	go test -run '^$' -bench OnDemandRetrain -benchtime 1x ./internal/task/molecule/
func BenchmarkOnDemandRetrain(b *testing.B) {
	const n, steps, batch, encode = 4000, 10, 128, 1024
	ckpt, err := filepath.Abs(filepath.Join("..", "..", "..", "pretrained", "molecule-t.pt"))
	if err == nil {
		_, err = os.Stat(ckpt)
	}
	if err != nil {
		b.Skipf("no shipped network: %v", err)
	}
	dir := validDataSet(b, n+encode)
	elbo, err := models.ParseELBO("t")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, ahead := range []bool{false, true} {
			bd := &binding{}
			spec := bd.spec()
			if !ahead {
				spec.Prefetch, spec.MaterialiseEncoder = nil, nil
			}
			var inMaterialise, cpuMaterialise time.Duration
			mat := spec.Materialise
			spec.Materialise = func(ex []jtvae.Example) ([]jtvae.Example, error) {
				start, cpu := time.Now(), cpuTime()
				defer func() { inMaterialise, cpuMaterialise = inMaterialise+time.Since(start), cpuMaterialise+cpuTime()-cpu }()
				return mat(ex)
			}
			d := task.Define(spec)
			env := testEnv(b, false, task.Values{optMolecules: filepath.Join(dir, DataFileName), optCacheDir: b.TempDir(),
				optFeaturise: FeaturiseOnDemand, optWorkers: 2})
			m, err := d.OpenModel(env, task.ModelRequest{Path: ckpt, ELBO: elbo, LR: 1e-3, BatchSize: batch, GradClip: 20})
			if err != nil {
				b.Fatal(err)
			}
			objs, scores, _, err := bd.dataset(env)
			if err != nil {
				b.Fatal(err)
			}
			train, rest := objs[:min(n, len(objs))], objs[min(n, len(objs)):]
			w0, c0 := time.Now(), cpuTime()
			if _, err := m.Retrain(bo.RetrainRequest[string]{Objects: train, Scores: scores[:len(train)],
				Epochs: float64(steps*batch) / float64(len(train)), Seed: 1}); err != nil {
				b.Fatal(err)
			}
			w1, c1, matRetrain, cpuRetrain := time.Now(), cpuTime(), inMaterialise, cpuMaterialise
			if _, err := m.Encode(rest); err != nil {
				b.Fatal(err)
			}
			w2, c2 := time.Now(), cpuTime()
			made, _ := bd.onDemand().stats()
			b.Logf("prefetch and encoder-only %v: retrain %d steps wall %.1fs cpu %.1fs (in Materialise wall %.1fs cpu %.1fs); "+
				"encode %d wall %.1fs cpu %.1fs (in Materialise wall %.1fs cpu %.1fs); %d molecules made",
				ahead, steps, w1.Sub(w0).Seconds(), (c1 - c0).Seconds(), matRetrain.Seconds(), cpuRetrain.Seconds(),
				len(rest), w2.Sub(w1).Seconds(), (c2 - c1).Seconds(), (inMaterialise - matRetrain).Seconds(),
				(cpuMaterialise - cpuRetrain).Seconds(), made)
			m.Close()
		}
	}
}

// cpuTime is the CPU time (user and system) of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
