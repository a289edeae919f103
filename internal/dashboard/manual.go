package dashboard

import (
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/manual"
)

// manualFiles are the files of a manual run (--objective manual) that the
// dashboard reads besides a run's own, through manual.Status: the kept
// flags that mark it, its store and the labelled start's oracle calls.
var manualFiles = []string{bo.FlagsFile, manual.StateFile, manual.ToldFile, bo.InitialFile}

// Asks is what the page shows of a manual run: the objects handed out (or
// proposed and not handed out yet) whose results are not told, as
// `tlbo-native status` reads them (manual.Status).
type Asks struct {
	Pending []Ask `json:"pending"`
	// Told counts the results told that the next ask journals.
	Told int `json:"told"`
	// Error says why the run's store could not be read.
	Error string `json:"error,omitempty"`
}

// Ask is an object awaiting its measurement.
type Ask struct {
	ID     int    `json:"id"`
	Object string `json:"object"`
	// Age is the time since it was handed out, in seconds (null: not yet;
	// the next ask hands it out first).
	Age num `json:"age_s"`
	// Mean and SD are the GP's prediction as ask wrote it (null for the
	// labelled start).
	Mean num `json:"mean"`
	SD   num `json:"sd"`
}

// isManualSetUp reports whether dir holds a manual run whose start is
// being measured: optimize --objective manual wrote its kept flags and its
// store; its configuration and journal come with the first proposals.
func isManualSetUp(dir string) bool {
	for _, name := range []string{bo.FlagsFile, manual.StateFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	ok, err := manual.IsManual(dir)
	return err == nil && ok
}

// readManual reads where the manual run in dir stands; nil for another run.
func readManual(dir string) (*manual.Report, error) {
	if ok, err := manual.IsManual(dir); err != nil || !ok {
		return nil, err
	}
	r, err := manual.Status(dir)
	return &r, err
}

// asks returns the run's pending asks at time now (nil for a run that is
// not manual).
func (r *Run) asks(now time.Time) *Asks {
	switch {
	case r.manualErr != nil:
		return &Asks{Error: r.manualErr.Error()}
	case r.manual == nil:
		return nil
	}
	a := &Asks{Pending: []Ask{}}
	for _, p := range r.manual.Pending {
		if p.Told {
			a.Told++
			continue
		}
		ask := Ask{ID: p.ID, Object: p.Object, Age: num(math.NaN()), Mean: optional(p.Mean), SD: optional(p.SD)}
		if !p.Handed.IsZero() {
			ask.Age = num(max(now.Sub(p.Handed).Seconds(), 0))
		}
		a.Pending = append(a.Pending, ask)
	}
	return a
}

// optional is v's value, null when nil.
func optional(v *float64) num {
	if v == nil {
		return num(math.NaN())
	}
	return num(*v)
}
