package bo

import (
	"fmt"
	"math"
	"path/filepath"
)

// Utilisation describes how busy a run's evaluation workers were, from the
// journal's evaluation records (RepeatsSkip).
type Utilisation struct {
	// Evaluations counts the timed evaluations.
	Evaluations int
	// Busy is the evaluations' summed wall time, Span the time from the
	// first evaluation's start to the last one's end (seconds).
	Busy, Span float64
	// Fraction is Busy / (workers · Span).
	Fraction float64
}

// ReadUtilisation reads the busy fraction of workers evaluation workers
// over the run in dir.
func ReadUtilisation(dir string, workers int) (Utilisation, error) {
	if workers < 1 {
		return Utilisation{}, fmt.Errorf("bo: utilisation of %d workers", workers)
	}
	recs, _, _, err := readJournal(filepath.Join(dir, JournalFile))
	if err != nil {
		return Utilisation{}, err
	}
	var u Utilisation
	first, last := math.Inf(1), math.Inf(-1)
	for _, rec := range recs {
		e := rec.Eval
		if e == nil || e.At == 0 {
			continue
		}
		u.Evaluations++
		u.Busy += e.Seconds
		first, last = math.Min(first, e.At-e.Seconds), math.Max(last, e.At)
	}
	if u.Evaluations == 0 {
		return u, fmt.Errorf("bo: %s has no timed evaluations", dir)
	}
	u.Span = last - first
	if u.Span > 0 {
		u.Fraction = u.Busy / (float64(workers) * u.Span)
	}
	return u, nil
}
