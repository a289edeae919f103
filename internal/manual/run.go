package manual

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// TellFile records the results of the tell file path in the manual run in
// dir, under the run directory's lock (an ask or another tell running on
// it makes it fail at once, bo.ErrRunDirInUse): all of them, or none when
// any row is refused. It returns how many results are new and how many
// were told before (no-ops).
func TellFile(dir, path string) (added, again int, err error) {
	if ok, err := IsManual(dir); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%s holds no run set up with --objective %s", dir, Objective)
		}
		return 0, 0, err
	}
	lock, err := bo.LockDir(dir)
	if err != nil {
		return 0, 0, err
	}
	defer lock.Unlock()
	s, err := Open(dir)
	if err != nil {
		return 0, 0, err
	}
	v, err := bo.ReadJournalView(dir)
	if err != nil {
		return 0, 0, err
	}
	s.Bind(v)
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	rows, err := ParseTell(path, f)
	if err != nil {
		return 0, 0, err
	}
	if added, err = s.Tell(path, rows, s.Known, float64(time.Now().UnixNano())/1e9); err != nil {
		return 0, 0, err
	}
	return added, len(rows) - added, nil
}

// Pending is an id waiting for its result.
type Pending struct {
	ID     int
	Object string
	// Handed is when it was handed out (zero: not yet; the next ask
	// hands it out first).
	Handed time.Time
	// Told says its result is told and waits to be journaled.
	Told bool
	// Mean and SD are the GP's predicted score and its standard deviation
	// at the proposal, as ask wrote them (nil for the start).
	Mean, SD *float64
}

// Report is where a manual run stands (status).
type Report struct {
	// Pending are the ids proposed (or of the start) whose results are not
	// journaled, in id order.
	Pending []Pending
	// Journaled counts the evaluations in the journal, Told those told in
	// all (the next ask journals the others).
	Journaled, Told int
	// Budget is the run's budget of evaluations after the start.
	Budget int
	// Best is the best score told or journaled, BestID its id (0: the
	// labelled data's, --data-scores) and BestObject its object; NaN
	// while none succeeded.
	Best       float64
	BestID     int
	BestObject string
	// Task, Strategy, ELBO and Seed name the run, and Maximize is its
	// direction: config.json's fields once the first ask wrote it, else
	// the set-up's kept flags (runFields).
	Task, Strategy, ELBO, Seed string
	Maximize                   bool
	// Version is the current model version (-1 before the first).
	Version int
}

// Status reads where the manual run in dir stands, without the lock (it
// only reads; a torn journal line is left out).
func Status(dir string) (Report, error) {
	r := Report{Best: math.NaN(), Version: -1}
	if ok, err := IsManual(dir); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("%s holds no run set up with --objective %s", dir, Objective)
		}
		return r, err
	}
	s, err := Open(dir)
	if err != nil {
		return r, err
	}
	v, err := bo.ReadJournalView(dir)
	if err != nil {
		return r, err
	}
	fields, err := runFields(dir)
	if err != nil {
		return r, err
	}
	s.Bind(v)
	r.Version, r.Told = v.Versions-1, len(s.Told)
	r.Task, r.Strategy, r.ELBO, r.Seed = fields["task"], fields["strategy"], fields["elbo"], fields["seed"]
	r.Budget, _ = strconv.Atoi(fields["budget"])
	r.Maximize = fields["maximize"] == "true"
	better := func(x float64) bool {
		return math.IsNaN(r.Best) || (r.Maximize && x > r.Best) || (!r.Maximize && x < r.Best)
	}
	if c, err := bo.ReadCurve(dir); err == nil && len(s.State.Start) == 0 && !math.IsNaN(c.Best[0]) {
		r.Best = c.Best[0] // the labelled data's best (--data-scores)
	}
	for id, t := range s.Told {
		if t.Score != nil && better(*t.Score) {
			r.Best, r.BestID = *t.Score, id
		}
	}
	pend := func(id int, key string, mean, sd *float64) {
		p := Pending{ID: id, Object: key, Mean: mean, SD: sd}
		if at, ok := s.State.Handed[id]; ok {
			p.Handed = time.Unix(0, int64(at*1e9))
		}
		_, p.Told = s.Told[id]
		r.Pending = append(r.Pending, p)
	}
	startDone := v.Versions > 0 || len(v.Queries) > 0
	for i, k := range s.State.Start {
		if i+1 == r.BestID {
			r.BestObject = k
		}
		if !startDone {
			pend(i+1, k, nil, nil)
		}
	}
	for i, q := range v.Queries {
		id, ok := s.QueryID(i)
		if !ok {
			continue // a known object or an invalid decode: not measured
		}
		if id == r.BestID {
			r.BestObject = q.Object
		}
		if v.Pending[i] {
			pend(id, q.Object, q.Mean, q.SD)
		} else if q.Valid && !q.Known {
			r.Journaled++
		}
	}
	slices.SortFunc(r.Pending, func(a, b Pending) int { return a.ID - b.ID })
	return r, nil
}

// runFields returns the fields that name the run in dir: config.json's,
// which the first ask writes, else, while the start is measured, the kept
// flags of the set-up (optimize keeps the task, method, seed and budget
// there, defaults included, and the direction when given: --maximize or
// --minimize).
func runFields(dir string) (map[string]string, error) {
	fields, err := bo.ReadConfigFields(dir)
	if err == nil {
		m := make(map[string]string, len(fields))
		for _, f := range fields {
			m[f.Name] = f.Value
		}
		return m, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	flags, err := bo.ReadFlags(dir)
	if err != nil {
		return nil, err
	}
	if flags["minimize"] == "true" {
		flags["maximize"] = "false"
	}
	return flags, nil
}
