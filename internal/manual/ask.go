package manual

import (
	"encoding/csv"
	"io"
	"strconv"
)

// Proposal is an object handed out to be measured: a row of ask's CSV.
type Proposal struct {
	ID int
	// Key is the object's key in the run; Object its text form for a
	// person (a SMILES, an expression, a design's .npy path).
	Key, Object string
	// Mean and SD are the GP's predicted score and its standard
	// deviation, Acq the acquisition value (nil for the labelled start and
	// random points).
	Mean, SD, Acq *float64
}

// AskHeader is the header row of ask's CSV.
var AskHeader = []string{"id", "object", "mean", "sd", "acq"}

// WriteAsk writes proposals as ask's CSV: AskHeader, then one row each.
// A tell file may be this file with a column score (and error) added.
func WriteAsk(w io.Writer, ps []Proposal) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(AskHeader); err != nil {
		return err
	}
	for _, p := range ps {
		if err := cw.Write(p.Row()); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Row is the proposal's cells under AskHeader, as ask writes them (a
// number absent is empty); a task's own file of the hand-out (the
// molecule task's SDF) gives the same values.
func (p Proposal) Row() []string {
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', 6, 64)
	}
	return []string{strconv.Itoa(p.ID), p.Object, num(p.Mean), num(p.SD), num(p.Acq)}
}

// Hand records the ids handed out at time now (StateFile, atomically).
func (s *Store) Hand(ids []int, now float64) error {
	for _, id := range ids {
		if _, ok := s.State.Handed[id]; !ok {
			s.State.Handed[id] = now
		}
	}
	return s.SaveState()
}
