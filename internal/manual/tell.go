package manual

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Row is a result of a tell file with the line it is on.
type Row struct {
	Told
	Line int
}

// ParseTell reads a tell file (CSV): a header row naming a column id and
// a column score, error or both (other columns, such as those ask writes,
// are ignored), then one row per result, giving a finite score or a
// non-empty error. An id may repeat with the same result. Any other row
// refuses the file, with its name, the line and why.
func ParseTell(name string, r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty: want a header row with the columns id and score and/or error", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := col[h]; dup && (h == "id" || h == "score" || h == "error") {
			return nil, fmt.Errorf("%s:1: two columns %s", name, h)
		}
		col[h] = i
	}
	_, hasScore := col["score"]
	_, hasError := col["error"]
	if _, ok := col["id"]; !ok || (!hasScore && !hasError) {
		return nil, fmt.Errorf("%s:1: the header row %q needs a column id and a column score, error or both", name, strings.Join(header, ","))
	}
	cell := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	var rows []Row
	byID := map[int]Row{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		t, err := parseRow(cell(rec, "id"), cell(rec, "score"), cell(rec, "error"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if prev, ok := byID[t.ID]; ok {
			if !prev.same(t) {
				return nil, fmt.Errorf("%s:%d: id %d has %s here and %s on line %d", name, line, t.ID, t, prev.Told, prev.Line)
			}
			continue
		}
		byID[t.ID] = Row{t, line}
		rows = append(rows, Row{t, line})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no results below the header row", name)
	}
	return rows, nil
}

// parseRow reads one result.
func parseRow(id, score, msg string) (Told, error) {
	n, err := strconv.Atoi(id)
	if err != nil || n < 1 {
		return Told{}, fmt.Errorf("id %q: want a whole number of at least 1 (the id ask gave)", id)
	}
	t := Told{ID: n}
	switch {
	case score != "" && msg != "":
		return t, fmt.Errorf("id %d has a score (%s) and an error (%s): give one", n, score, msg)
	case score != "":
		s, err := strconv.ParseFloat(score, 64)
		if err != nil || math.IsNaN(s) || math.IsInf(s, 0) {
			return t, fmt.Errorf("id %d: score %q is not a finite number (a failed measurement goes in the error column, "+
				"with its reason)", n, score)
		}
		t.Score = &s
	case msg != "":
		t.Error = msg
	default:
		return t, fmt.Errorf("id %d has neither a score nor an error (leave its row out while it is not measured)", n)
	}
	return t, nil
}

// Tell records the results rows of the tell file name (ParseTell). Every id must be one the run proposed (known); an id told
// before must have the same result (a no-op), another is refused naming
// it. Nothing is recorded unless the whole file is good; then ToldFile is
// rewritten atomically. It returns the number of new results.
func (s *Store) Tell(name string, rows []Row, known func(id int) bool, now float64) (int, error) {
	var added []Told
	for _, t := range rows {
		switch prev, told := s.Told[t.ID]; {
		case !known(t.ID):
			return 0, fmt.Errorf("%s:%d: unknown id %d: no proposal of this run has it (status lists the pending ones)", name, t.Line, t.ID)
		case told && !prev.same(t.Told):
			return 0, fmt.Errorf("%s:%d: id %d was told %s before, now %s: a result cannot change", name, t.Line, t.ID, prev, t.Told)
		case !told:
			t.At = now
			added = append(added, t.Told)
		}
	}
	if len(added) == 0 {
		return 0, nil
	}
	for _, t := range added {
		s.Told[t.ID] = t
	}
	if err := s.saveTold(); err != nil {
		for _, t := range added {
			delete(s.Told, t.ID)
		}
		return 0, err
	}
	return len(added), nil
}
