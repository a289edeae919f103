package bo

import (
	"errors"
	"fmt"
	"io/fs"
)

// JournalView is what a run's journal holds, read without running the
// loop (a view of a run waiting for results, such as status).
type JournalView struct {
	// Queries are the journaled queries in order; a pending one has no
	// score yet.
	Queries []Query
	// Pending marks the indices of the queries journaled without their
	// evaluation.
	Pending map[int]bool
	// Versions counts the model versions (the current one is Versions-1).
	Versions int
}

// ReadJournalView reads the journal of the run in dir, or a committed run's
// journal.jsonl.gz when journal.jsonl is not there (ReadJournalFile); a torn
// last line is left out, as a resume does, and no journal at all is an
// empty view (a run not started).
func ReadJournalView(dir string) (JournalView, error) {
	path, b, err := ReadJournalFile(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b = nil
	case err != nil:
		return JournalView{}, fmt.Errorf("read journal %s: %w", path, err)
	}
	recs, _, _, err := parseJournal(path, b)
	if err != nil {
		return JournalView{}, err
	}
	v := JournalView{Pending: map[int]bool{}}
	for _, rec := range recs {
		switch {
		case rec.Version != nil:
			v.Versions++
		case rec.Query != nil:
			v.Queries = append(v.Queries, *rec.Query)
		case rec.Round != nil:
			v.Queries = append(v.Queries, rec.Round.Queries...)
			for _, i := range rec.Round.Pending {
				v.Pending[i] = true
			}
		case rec.Eval != nil:
			e := rec.Eval
			if !v.Pending[e.Index] {
				return JournalView{}, fmt.Errorf("journal %s: evaluation of query %d, which is not pending", path, e.Index)
			}
			delete(v.Pending, e.Index)
			v.Queries[e.Index].Score, v.Queries[e.Index].Failure = e.Score, e.Failure
		}
	}
	return v, nil
}
