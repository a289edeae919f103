package bo_test

import (
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/task/toy"
)

// toyConfig is a small, fast configuration for the toy problem.
func toyConfig() bo.Config {
	c := bo.DefaultConfig()
	c.Budget = 30
	c.RetrainEvery = 10
	c.NBest, c.NRand = 40, 40
	c.Inducing = 30
	c.RawSamples, c.Restarts = 256, 3
	c.Seed = 7
	c.Extra = map[string]string{"task": "toy"}
	return c
}

func newToy(t *testing.T) (*toy.Problem, bo.Data[[]float64]) {
	t.Helper()
	p, err := toy.New(3, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p, p.Data(200, 2)
}

func TestToyImproves(t *testing.T) {
	p, data := newToy(t)
	res, err := bo.Run(toyConfig(), p.Task(), p.Model(), data, bo.Options{Dir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("initial best %.4f, best %.4f (%s)", res.InitialBest, res.Best, res.BestObject)
	for _, q := range res.Queries {
		t.Logf("%d v%d score %.4f valid %v pert %d acq %.3g ei %.3g fit %.3fs acq %.3fs", q.Index, q.Version, q.Score, q.Valid, q.Perturbations, q.Acq, q.EI, q.Timing.GPFit, q.Timing.Acq)
	}
	if !(res.Best < res.InitialBest) {
		t.Errorf("best %.4f does not improve on the start %.4f", res.Best, res.InitialBest)
	}
}
