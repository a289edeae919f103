package bo_test

import (
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// TestProgressReportsFitFromScratch: a run reports StageFit, with the GP's
// points, before each model version's first GP fit (the fit from scratch,
// the long one) and before no other, under the authors' schedule (a warm
// refit at every query) and under auto (fits kept between).
func TestProgressReportsFitFromScratch(t *testing.T) {
	for _, refit := range []string{"every", "auto"} {
		t.Run(refit, func(t *testing.T) {
			cfg := toyConfig()
			var err error
			if cfg.GPRefit, err = bo.ParseGPRefit(refit); err != nil {
				t.Fatal(err)
			}
			p, data := newToy(t)
			var stages []bo.Progress
			opts := bo.Options{Dir: t.TempDir(), Progress: func(p bo.Progress) { stages = append(stages, p) }}
			res, err := bo.Run[[]float64](cfg, p.Task(), p.Model(), data, opts)
			if err != nil {
				t.Fatal(err)
			}
			fits := map[int]int{}
			for i, s := range stages {
				if s.Stage != bo.StageFit {
					continue
				}
				fits[s.Version]++
				if s.Points < cfg.NBest {
					t.Errorf("fit of version %d reports %d points, want at least %d", s.Version, s.Points, cfg.NBest)
				}
				// The version's encoding came just before (its first query's fit).
				if i == 0 || stages[i-1].Stage != bo.StageEncode || stages[i-1].Version != s.Version {
					t.Errorf("fit of version %d not right after its encoding: %+v", s.Version, stages[max(0, i-1)])
				}
			}
			if len(fits) != len(res.Versions) {
				t.Errorf("fits from scratch reported for versions %v, want one for each of %d", fits, len(res.Versions))
			}
			for v, n := range fits {
				if n != 1 {
					t.Errorf("version %d: %d fits from scratch reported, want 1", v, n)
				}
			}
		})
	}
}
