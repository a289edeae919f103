package models

import (
	"strings"
	"testing"
)

// TestCost: a run's cost is the base it resumed from plus its own wall and
// CPU time since StartCost, one run more; without StartCost it is zero.
func TestCost(t *testing.T) {
	var tr Trainer[Dense]
	if c := tr.Cost(); c != (Cost{}) || tr.costState() != nil {
		t.Errorf("cost before StartCost: %+v, state %v", c, tr.costState())
	}
	cpu := 100.0
	clock := func() float64 { cpu += 1.5; return cpu }
	tr.StartCost(Cost{WallSeconds: 10, CPUSeconds: 5, Runs: 2, Partial: true}, clock)
	c := tr.Cost()
	if c.Runs != 3 || c.CPUSeconds != 6.5 || !(c.WallSeconds > 10) || !c.Partial {
		t.Errorf("cost %+v; want 3 runs, 5 + 1.5 CPU seconds, more than 10 wall seconds, partial", c)
	}
	if s := c.String(); !strings.Contains(s, "over 3 runs") || !strings.Contains(s, "earlier runs not measured") {
		t.Errorf("String() = %q", s)
	}
	tr.StartCost(Cost{}, nil)
	if c := tr.Cost(); c.Runs != 1 || c.CPUSeconds != 0 {
		t.Errorf("cost without a CPU clock: %+v", c)
	}
}
