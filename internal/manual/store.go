// Package manual is the store of a run whose evaluations people make (a
// synthesis and an assay): optimize --objective manual sets the run up, ask
// hands out proposals to measure, tell records their results, status shows
// where the run stands. The run directory stays the run's single store: the
// journal holds the proposals (bo journals them as pending, bo.ErrDeferred)
// and their evaluations once journaled; this package keeps beside it what
// only a person's loop has: the labelled start to measure (--initial N),
// when each proposal was handed out, and the results told but not yet
// journaled (the next ask journals them).
//
// Ids: the start's objects are 1..N in the order of the draw, then query i
// of the journal (0-based) is N+i+1; without a start to measure, query i
// is i+1. Every file is rewritten whole through a temporary file, fsync
// and a rename, so that a kill leaves it as before or after.
package manual

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// Files of a manual run in its run directory.
const (
	// StateFile holds the start's objects and when each id was handed out.
	StateFile = "manual.json"
	// ToldFile holds every result told, by id.
	ToldFile = "told.json"
)

// Objective is the --objective value of a run whose evaluations people make.
const Objective = "manual"

// startPrefix starts the tag of a start object's evaluation.
const startPrefix = "start-"

// State is StateFile: the start to measure and the hand-outs.
type State struct {
	Format string `json:"format"`
	// Start are the keys of the labelled start's objects (--initial N),
	// ids 1..N, in the draw's order.
	Start []string `json:"start,omitempty"`
	// Handed are the ids handed out by ask, with the time (Unix seconds).
	Handed map[int]float64 `json:"handed,omitempty"`
}

// Told is a result told for an id: a score, or an error (the evaluation
// failed: the failure score, with the error as its reason).
type Told struct {
	ID    int      `json:"id"`
	Score *float64 `json:"score,omitempty"`
	Error string   `json:"error,omitempty"`
	// At is when it was told (Unix seconds).
	At float64 `json:"t"`
}

// same reports whether two results tell the same.
func (t Told) same(u Told) bool {
	if (t.Score == nil) != (u.Score == nil) {
		return false
	}
	return t.Error == u.Error && (t.Score == nil || *t.Score == *u.Score)
}

// String is the result as a person wrote it.
func (t Told) String() string {
	if t.Score != nil {
		return "score " + strconv.FormatFloat(*t.Score, 'g', -1, 64)
	}
	return fmt.Sprintf("error %q", t.Error)
}

// Store is a manual run's store in its run directory.
type Store struct {
	Dir   string
	State State
	// Told are the results told, by id.
	Told map[int]Told
	// ids and queries map the journal's query indices to their ids and
	// back (Bind).
	ids, queries map[int]int
}

const stateFormat = "tlbo-native manual run"

// Open reads the store of the run in dir (empty when its files are not
// there yet).
func Open(dir string) (*Store, error) {
	s := &Store{Dir: dir, State: State{Format: stateFormat, Handed: map[int]float64{}}, Told: map[int]Told{}}
	if err := readJSON(filepath.Join(dir, StateFile), &s.State); err != nil {
		return nil, err
	}
	if s.State.Handed == nil {
		s.State.Handed = map[int]float64{}
	}
	var told []Told
	if err := readJSON(filepath.Join(dir, ToldFile), &told); err != nil {
		return nil, err
	}
	for _, t := range told {
		s.Told[t.ID] = t
	}
	return s, nil
}

// IsManual reports whether the run in dir was set up with the manual
// objective: its kept flags say so.
func IsManual(dir string) (bool, error) {
	flags, err := bo.ReadFlags(dir)
	if err != nil {
		return false, err
	}
	return flags["objective"] == Objective, nil
}

// readJSON decodes the JSON file path into v; a missing file leaves v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// writeJSON writes v to path atomically: a temporary file, fsync, a rename,
// and an fsync of the directory, so that the rename is on disk too.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// WriteAtomic writes through fill into path atomically and durably (a
// temporary file beside it, fsync, rename, fsync of the directory).
func WriteAtomic(path string, fill func(io.Writer) error) error {
	err := numpy.AtomicWriteFile(path, func(w io.Writer) error {
		if err := fill(w); err != nil {
			return err
		}
		killPoint(filepath.Base(path) + "-written")
		return nil
	})
	if err != nil {
		return err
	}
	defer killPoint(filepath.Base(path) + "-renamed")
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", filepath.Dir(path), err)
	}
	return nil
}

// KillEnv names the environment variable of the kill tests: a process
// whose KillEnv is NAME-written or NAME-renamed kills itself with SIGKILL
// once the file NAME it writes atomically is written and not yet renamed
// into place, or just after the rename. Unset, nothing happens.
const KillEnv = "TLBO_TEST_KILL_AT"

// killAt is KillEnv's value, read once.
var killAt = os.Getenv(KillEnv)

// killPoint kills the process (SIGKILL) when name is killAt.
func killPoint(name string) {
	if killAt != "" && name == killAt {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}

// SaveState writes StateFile.
func (s *Store) SaveState() error {
	return writeJSON(filepath.Join(s.Dir, StateFile), s.State)
}

// saveTold writes ToldFile.
func (s *Store) saveTold() error {
	told := make([]Told, 0, len(s.Told))
	for _, id := range slices.Sorted(mapsKeys(s.Told)) {
		told = append(told, s.Told[id])
	}
	return writeJSON(filepath.Join(s.Dir, ToldFile), told)
}

// mapsKeys returns the keys of m.
func mapsKeys[V any](m map[int]V) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// StartID returns the id of the start object whose key is key.
func (s *Store) StartID(key string) (int, bool) {
	i := slices.Index(s.State.Start, key)
	return i + 1, i >= 0
}

// Bind numbers the journal's queries that the objective evaluates (a
// valid decode of an object not known: the proposals people measure), in
// journal order after the start's ids; known objects and invalid decodes,
// which the loop journals too, get no id. The ids of a journal never
// change as it grows.
func (s *Store) Bind(v bo.JournalView) {
	s.ids, s.queries = map[int]int{}, map[int]int{}
	id := len(s.State.Start)
	for i, q := range v.Queries {
		if q.Valid && !q.Known {
			id++
			s.ids[i], s.queries[id] = id, i
		}
	}
}

// QueryID returns the id of the journal's query index (Bind), and whether
// it has one.
func (s *Store) QueryID(index int) (int, bool) {
	id, ok := s.ids[index]
	return id, ok
}

// Known reports whether id is the start's or a journaled query's (Bind).
func (s *Store) Known(id int) bool {
	_, ok := s.queries[id]
	return ok || (id >= 1 && id <= len(s.State.Start))
}

// IDOf returns the id of an evaluation's tag: a start object's, or a
// journaled query's (Bind); a query journaled since has none yet.
func (s *Store) IDOf(tag string) (int, bool) {
	if n, ok := strings.CutPrefix(tag, startPrefix); ok {
		id, err := strconv.Atoi(n)
		return id, err == nil && id >= 1 && id <= len(s.State.Start)
	}
	n, ok := strings.CutPrefix(tag, "query-")
	i, err := strconv.Atoi(n)
	if !ok || err != nil || bo.QueryTag(i) != tag {
		return 0, false
	}
	id, ok := s.ids[i]
	return id, ok
}

// Result returns the result told for id's evaluation: its score, or the
// error whose text is the failure's reason; ok is false while none is told.
func (s *Store) Result(id int) (score float64, failure error, ok bool) {
	t, ok := s.Told[id]
	switch {
	case !ok:
		return 0, nil, false
	case t.Score != nil:
		return *t.Score, nil, true
	}
	return math.NaN(), errors.New(t.Error), true
}
