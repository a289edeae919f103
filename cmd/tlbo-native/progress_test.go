package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/models"
)

// TestProgressResumedEpoch: an epoch resumed within itself reports its
// first step as step 401 of 568; the bar starts there (it used to wait for
// step 1 and fail on a missing bar) and says where it resumed.
func TestProgressResumedEpoch(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, tty: true, logEvery: time.Minute}
	for i := 401; i <= 568; i++ {
		p.Step(3, 10, i, 568, models.Losses{Total: 2, Rec: 1})
	}
	p.Epoch(models.EpochReport{Epoch: 3, Train: models.Losses{Total: 2}}, 10)
	for _, want := range []string{"epoch 3/10", "resumed at step 400", "568/568"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("terminal output lacks %q:\n%s", want, out.String())
		}
	}
	// the next epoch starts its own bar from step 1
	out.Reset()
	p.Step(4, 10, 1, 568, models.Losses{Total: 1})
	if s := out.String(); strings.Contains(s, "resumed") || !strings.Contains(s, "epoch 4/10") {
		t.Errorf("next epoch's bar: %q", s)
	}
}

// TestProgressWithoutTerminal: without a terminal, a line with the running
// means and the time per step every logEvery (here every step), no bar,
// and the epoch's line.
func TestProgressWithoutTerminal(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out, logEvery: time.Nanosecond}
	for i := 1; i <= 3; i++ {
		time.Sleep(time.Millisecond)
		p.Step(1, 2, i, 4, models.Losses{Total: float64(i), Rec: float64(i)})
	}
	p.Epoch(models.EpochReport{Epoch: 1, Train: models.Losses{Total: 2}}, 2)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 3 step lines and the epoch's:\n%s", len(lines), out.String())
	}
	if !strings.Contains(lines[2], "step 3/4") || !strings.Contains(lines[2], "s/step, left: epoch ") ||
		!strings.Contains(lines[2], ", training ") || strings.Contains(out.String(), "\r") {
		t.Errorf("step line %q", lines[2])
	}
	if !strings.HasPrefix(lines[3], "epoch 1/2 ") {
		t.Errorf("epoch line %q", lines[3])
	}
	out.Reset()
	for i := 5; i <= 10; i++ {
		p.Count("molecules", i, 10)
	}
	if s := out.String(); !strings.Contains(s, "molecules 10/10") || strings.Contains(s, "\r") {
		t.Errorf("count lines: %q", s)
	}
}

// TestStepsLeft: the time left is the time per step times the steps left,
// rounded to seconds under an hour and to minutes above.
func TestStepsLeft(t *testing.T) {
	for _, c := range []struct {
		perStep float64
		steps   int
		want    string
	}{
		{0.5, 7, "4s"}, {0.49, 125000, "17h1m0s"}, {2, 0, "0s"},
	} {
		if got := stepsLeft(c.perStep, c.steps).String(); got != c.want {
			t.Errorf("stepsLeft(%v, %d) = %s, want %s", c.perStep, c.steps, got, c.want)
		}
	}
}
