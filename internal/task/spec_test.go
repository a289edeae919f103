package task

import (
	"math"
	"testing"
)

// TestScoredTitle: a run's best object is titled with its query number, an
// object an ask hands out with its id ("id N", not "query N"), and one
// without a predicted score (the start) with its id alone.
func TestScoredTitle(t *testing.T) {
	for _, c := range []struct {
		s    Scored[string]
		want string
	}{
		{Scored[string]{Score: 1.23456, Query: 12}, "1.235 (query 12)"},
		{Scored[string]{Score: -0.5, ID: 7}, "-0.500 (id 7)"},
		{Scored[string]{Score: math.NaN(), ID: 3}, "id 3"},
	} {
		if got := c.s.Title("%.3f"); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}
