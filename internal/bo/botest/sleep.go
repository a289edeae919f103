package botest

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// SleepingTask is the toy objective with evaluations that take a time drawn
// uniformly from [Min, Max] by the object's key (so the same object always
// takes as long): an expensive black box, for measuring how busy the
// loop keeps its evaluation workers.
type SleepingTask struct {
	Task
	Min, Max time.Duration
}

// Score sleeps, then scores x.
func (s SleepingTask) Score(x []float64) (float64, error) {
	h := fnv.New64a()
	h.Write([]byte(s.Task.Key(x)))
	frac := float64(h.Sum64()>>11) / (1 << 53)
	time.Sleep(s.Min + time.Duration(frac*float64(s.Max-s.Min)))
	return s.Task.Score(x)
}

// UtilisationRun runs BO on a toy problem (latent dimension 3) with
// `workers` evaluation workers and rounds of as many proposals, for
// `evaluations` sleeping evaluations, asynchronously or round by round, in
// dir, and returns the workers' busy fraction from its journal.
func UtilisationRun(dir string, workers, evaluations int, min, max time.Duration, async bool) (bo.Utilisation, error) {
	p, err := New(3, 8, 1)
	if err != nil {
		return bo.Utilisation{}, err
	}
	cfg := bo.DefaultConfig()
	cfg.Budget, cfg.RetrainEvery = evaluations, evaluations
	cfg.RankK, cfg.InitialRetrainEpochs, cfg.RetrainEpochs = 1e-3, 1, 1
	cfg.NBest, cfg.NRand, cfg.Inducing = 40, 40, 30
	cfg.RawSamples, cfg.Restarts = 256, 3
	cfg.Q, cfg.Evaluators, cfg.Async = workers, workers, async
	cfg.Seed = 1
	task := SleepingTask{Task: p.Task(), Min: min, Max: max}
	res, err := bo.Run[[]float64](cfg, task, p.Model(), p.Data(200, 2), bo.Options{Dir: dir})
	if err != nil {
		return bo.Utilisation{}, err
	}
	if res.Evaluated != evaluations {
		return bo.Utilisation{}, fmt.Errorf("botest: %d of %d evaluations (%s)", res.Evaluated, evaluations, res.Exhausted)
	}
	return bo.ReadUtilisation(dir, workers)
}
