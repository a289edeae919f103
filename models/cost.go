package models

import (
	"fmt"
	"time"
)

// Cost is what a training has spent to reach a state, summed over the
// processes that ran it (a training killed and resumed several times): the
// wall time and the process CPU time (user and system) from each start to
// its last save, and the number of such runs.
type Cost struct {
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	Runs        int     `json:"runs"`
	// Partial says that runs before these were not measured: the training
	// resumed a checkpoint written before Cost was kept.
	Partial bool `json:"partial,omitempty"`
}

// String says the cost for a person: hours of CPU and wall time.
func (c Cost) String() string {
	s := fmt.Sprintf("%.2f CPU-hours, %.2f wall-hours over %d runs", c.CPUSeconds/3600, c.WallSeconds/3600, c.Runs)
	if c.Partial {
		s += " (and earlier runs not measured)"
	}
	return s
}

// costClock measures a run's share of a training's Cost: what earlier
// runs spent (base, from the checkpoint it resumed) plus the time since
// this run started.
type costClock struct {
	base     Cost
	cpu      func() float64 // process CPU seconds so far; nil: not measured
	start    time.Time
	cpuStart float64
}

// StartCost starts counting this run's time on top of base (the resumed
// checkpoint's Cost, or zero for a new training); cpu returns the process's
// CPU seconds so far (nil: the CPU time is not counted). Checkpoints then
// record the total (TrainingState.Cost).
func (t *Trainer[E]) StartCost(base Cost, cpu func() float64) {
	c := &costClock{base: base, cpu: cpu, start: time.Now()}
	if cpu != nil {
		c.cpuStart = cpu()
	}
	t.cost = c
}

// Cost returns what the training has spent so far, this run included; the
// zero Cost when StartCost was not called.
func (t *Trainer[E]) Cost() Cost {
	c := t.cost
	if c == nil {
		return Cost{}
	}
	out := c.base
	out.Runs++
	out.WallSeconds += time.Since(c.start).Seconds()
	if c.cpu != nil {
		out.CPUSeconds += c.cpu() - c.cpuStart
	}
	return out
}
