package task

import (
	"math"
	"testing"

	"github.com/tlbo-native/tlbo-native/models"
)

// TestRetrainBeta: retraining takes the task's fixed KL weight when it has
// one, else the weight the network's training ended at (fast_molvae's
// annealing stopped after 65,200 steps: 0.026, not the schedule's final 1),
// else the final weight of the task's schedule.
func TestRetrainBeta(t *testing.T) {
	stopped := models.Header{Training: &models.TrainingState{Beta: models.LinearBeta(0, 1, 0.002, 2000, 39999), Step: 65200}}
	for _, c := range []struct {
		fixed float64
		h     models.Header
		want  float64
	}{
		{0, stopped, 0.026},
		{0, models.Header{}, 0.04},
		{1e-3, stopped, 1e-3},
		{1e-3, models.Header{}, 1e-3},
	} {
		d := &Defined[string, models.Dense]{s: Spec[string, models.Dense]{
			Defaults: Defaults{Beta: models.AnnealedBeta(1e-6, 0.04, 500), RetrainBeta: c.fixed}}}
		if got := d.retrainBeta(c.h); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("RetrainBeta %v, training %+v: %v, want %v", c.fixed, c.h.Training, got, c.want)
		}
	}
}
