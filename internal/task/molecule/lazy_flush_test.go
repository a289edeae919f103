package molecule

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// madeLine is the note of a cache opened for featurisation on demand.
var madeLine = regexp.MustCompile(`featurisation cache .*: (\d+) of \d+ training molecules made`)

// madeAtOpen returns the molecules the run whose notes are log found made
// in the cache when it opened it.
func madeAtOpen(t *testing.T, log string) int {
	t.Helper()
	m := madeLine.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no note of the cache in %q", log)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestFlushAtEnd: with the periodic flush out of reach, the molecules a run
// featurised on demand are in the cache once it has ended, when it ends
// normally and when it is stopped (as by SIGINT: its context ends) after
// its retraining or during it, so that a resumed run finds them made. A
// run killed outright (kill -9) still loses those made since the last
// periodic flush.
func TestFlushAtEnd(t *testing.T) {
	defer func(n int, d time.Duration) { flushEvery, flushAfter = n, d }(flushEvery, flushAfter)
	flushEvery, flushAfter = 1<<30, time.Hour
	dir := validDataSet(t, 120)
	data := filepath.Join(dir, DataFileName)
	ckpt := tinyNetwork(t, filepath.Join(dir, VocabFileName), data)
	cfg := Defaults.Config()
	cfg.Budget, cfg.RetrainEvery, cfg.NBest, cfg.NRand, cfg.Inducing = 1, 50, 20, 30, 10
	cfg.RawSamples, cfg.Restarts, cfg.Seed = 32, 4, 3
	cfg.InitialRetrainEpochs = 0.5
	elbo, _ := models.ParseELBO("lbo")
	// optimize runs in run, with a cache of its own unless given one; stop
	// ends the run at the encoding of the GP's points ("encode") or after
	// the retraining's first mini-batch ("retrain").
	optimize := func(cache, run string, resume bool, stop string) (*binding, *task.Env, *bo.Result, error) {
		b := &binding{}
		spec := b.spec()
		env := testEnv(t, false, task.Values{optMolecules: data, optCacheDir: cache, optFeaturise: FeaturiseOnDemand, optWorkers: 2})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		env.Ctx = ctx
		opts := bo.Options{Dir: run, Resume: resume}
		switch stop {
		case "encode":
			opts.Progress = func(p bo.Progress) {
				if p.Stage == bo.StageEncode {
					cancel()
				}
			}
		case "retrain":
			mat := spec.Materialise
			spec.Materialise = func(ex []jtvae.Example) ([]jtvae.Example, error) {
				defer cancel()
				return mat(ex)
			}
		}
		res, err := task.Define(spec).Optimize(env, task.OptimizeRequest{
			Model:   task.ModelRequest{Path: ckpt, ELBO: elbo, LR: 1e-3, BatchSize: 16, GradClip: 20},
			Config:  cfg,
			Options: opts,
		})
		return b, env, res, err
	}
	madeBy := func(b *binding) int {
		lazy := b.onDemand()
		if lazy == nil {
			t.Fatal("the run bound no cache on demand")
		}
		n, _ := lazy.stats()
		if n == 0 {
			t.Fatal("the run made no molecule on demand")
		}
		return n
	}

	t.Run("end", func(t *testing.T) {
		cache := t.TempDir()
		b, env, _, err := optimize(cache, filepath.Join(t.TempDir(), "run"), false, "")
		if err != nil {
			t.Fatalf("%v\n%s", err, env.Stderr.(*bytes.Buffer))
		}
		made := madeBy(b)
		_, env, _, err = optimize(cache, filepath.Join(t.TempDir(), "run"), false, "encode")
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the second run, stopped: %v", err)
		}
		if got := madeAtOpen(t, env.Stderr.(*bytes.Buffer).String()); got != made {
			t.Errorf("the next run found %d molecules made, the first made %d", got, made)
		}
	})
	// A stop during the retraining ends it at the next mini-batch: the
	// version is not made.
	for _, stop := range []string{"encode", "retrain"} {
		t.Run("stop at "+stop, func(t *testing.T) {
			cache, run := t.TempDir(), filepath.Join(t.TempDir(), "run")
			b, env, res, err := optimize(cache, run, false, stop)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("stopped run: %v\n%s", err, env.Stderr.(*bytes.Buffer))
			}
			if versions := len(res.Versions); stop == "retrain" && versions != 0 {
				t.Errorf("stopped in the retraining, the run made %d versions", versions)
			}
			made := madeBy(b)
			_, env, _, err = optimize(cache, run, true, "")
			if err != nil {
				t.Fatalf("resumed run: %v\n%s", err, env.Stderr.(*bytes.Buffer))
			}
			if got := madeAtOpen(t, env.Stderr.(*bytes.Buffer).String()); got != made {
				t.Errorf("the resumed run found %d molecules made, the stopped run made %d", got, made)
			}
		})
	}
}
