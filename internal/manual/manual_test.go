package manual

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
)

// TestParseTell: the header may carry a byte-order mark, other columns
// and any case; blank lines are skipped; a repeated id with the same
// result counts once.
func TestParseTell(t *testing.T) {
	text := "\ufeffID,Object,Score,Error\n3,\"x, y\",1.5,\n\n1,c1ccccc1,,no crystals\n3,\"x, y\",1.5,\n"
	rows, err := ParseTell("f.csv", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].ID != 3 || *rows[0].Score != 1.5 || rows[0].Line != 2 || rows[1].Error != "no crystals" || rows[1].Line != 4 {
		t.Fatalf("rows %+v", rows)
	}
	for text, want := range map[string]string{
		"":                     "f.csv: empty",
		"id,score\n":           "no results",
		"id,score\n1,1e999\n":  `score "1e999" is not a finite number`,
		"id,score\n0,1\n":      `f.csv:2: id "0"`,
		"id,id,score\n1,1,1\n": "two columns id",
		"id,score\n1,\"2\n":    "f.csv:",
	} {
		if _, err := ParseTell("f.csv", strings.NewReader(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// TestAskTellFiles: ask's CSV with a score column added is a tell file, and
// a tell refused keeps told.json as it was.
func TestAskTellFiles(t *testing.T) {
	m, sd := 1.25, 0.5
	var b bytes.Buffer
	if err := WriteAsk(&b, []Proposal{{ID: 4, Object: "x * sin( x )", Mean: &m, SD: &sd, Acq: &sd}, {ID: 5, Object: "C(=O)O"}}); err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(b.String(), "acq\n", "acq,score\n", 1)
	text = strings.Replace(text, "0.5\n", "0.5,2\n", 1)
	text = strings.Replace(text, "C(=O)O,,,\n", "C(=O)O,,,,3\n", 1)
	rows, err := ParseTell("ask.csv", strings.NewReader(text))
	if err != nil || len(rows) != 2 || *rows[0].Score != 2 || *rows[1].Score != 3 {
		t.Fatalf("%q: %+v, %v", text, rows, err)
	}
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.State.Start = []string{"a", "b", "c"}
	s.Bind(bo.JournalView{Queries: []bo.Query{{Index: 0, Valid: true}, {Index: 1, Valid: true, Known: true}, {Index: 2, Valid: true}}})
	if id, ok := s.QueryID(2); !ok || id != 5 {
		t.Errorf("query 2 has id %d (%v), want 5 (the known object of query 1 has none)", id, ok)
	}
	if id, ok := s.IDOf(bo.QueryTag(0)); !ok || id != 4 {
		t.Errorf("tag of query 0: id %d (%v), want 4", id, ok)
	}
	if _, ok := s.IDOf(bo.QueryTag(1)); ok || s.Known(6) || !s.Known(2) {
		t.Error("ids: a known object's query or id 6 is known, or start id 2 is not")
	}
	if n, err := s.Tell("ask.csv", rows, s.Known, 1); err != nil || n != 2 {
		t.Fatalf("tell: %d, %v", n, err)
	}
	before, err := os.ReadFile(filepath.Join(dir, ToldFile))
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := ParseTell("b.csv", strings.NewReader("id,score\n1,7\n5,3.5\n"))
	if _, err := s.Tell("b.csv", bad, s.Known, 2); err == nil || !strings.Contains(err.Error(), "b.csv:3: id 5 was told score 3 before, now score 3.5") {
		t.Errorf("a changed result: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, ToldFile))
	if !bytes.Equal(before, after) || len(s.Told) != 2 {
		t.Error("a refused tell changed the store")
	}
	again, err := Open(dir)
	if err != nil || len(again.Told) != 2 || *again.Told[5].Score != 3 {
		t.Errorf("reopened: %+v, %v", again.Told, err)
	}
}

// setUp writes what optimize --objective manual leaves in dir before the
// first ask: the kept flags and the store with a start of three objects.
func setUp(t *testing.T, dir string, flags map[string]string) {
	t.Helper()
	flags["objective"] = Objective
	if err := bo.WriteFlags(dir, flags); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.State.Start = []string{"a", "b", "c"}
	if err := s.SaveState(); err != nil {
		t.Fatal(err)
	}
}

// TestStatusSetUp: while the start is measured (no config.json yet),
// status names the run and takes its direction from the set-up's kept
// flags: the best of the start's results told is the highest when the run
// maximises, the lowest when --minimize was given.
func TestStatusSetUp(t *testing.T) {
	for _, dir := range []string{"maximize", "minimize"} {
		run := t.TempDir()
		setUp(t, run, map[string]string{"task": "molecule", "strategy": "bo", "elbo": "t", "seed": "7", "budget": "9", dir: "true"})
		s, err := Open(run)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := ParseTell("t.csv", strings.NewReader("id,score\n1,2\n2,5\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Tell("t.csv", rows, s.Known, 1); err != nil {
			t.Fatal(err)
		}
		r, err := Status(run)
		if err != nil {
			t.Fatal(err)
		}
		if r.Task != "molecule" || r.Strategy != "bo" || r.ELBO != "t" || r.Seed != "7" || r.Budget != 9 {
			t.Errorf("--%s: task %q, strategy %q, elbo %q, seed %q, budget %d; want the kept flags'", dir, r.Task, r.Strategy,
				r.ELBO, r.Seed, r.Budget)
		}
		want := map[string]int{"maximize": 2, "minimize": 1}[dir]
		if r.Maximize != (dir == "maximize") || r.BestID != want || len(r.Pending) != 3 {
			t.Errorf("--%s: maximize %v, best id %d, %d pending; want best id %d and the start's 3 pending", dir, r.Maximize,
				r.BestID, len(r.Pending), want)
		}
	}
}

// TestStatusCommitted: a committed run's journal is journal.jsonl.gz;
// status reads it as journal.jsonl: the start is done, the query evaluated
// is journaled and the pending one is pending, under the same ids.
func TestStatusCommitted(t *testing.T) {
	run := t.TempDir()
	setUp(t, run, map[string]string{"budget": "4"})
	m := 1.5
	round := bo.Round{Start: 0, Pending: []int{0, 1}, Queries: []bo.Query{
		{Index: 0, Object: "p", Valid: true}, {Index: 1, Round: 0, Object: "q", Valid: true, Mean: &m, SD: &m}}}
	var text bytes.Buffer
	enc := json.NewEncoder(&text)
	for _, rec := range []any{map[string]any{"round": round}, map[string]any{"eval": bo.Eval{Index: 0, Score: 3}}} {
		if err := enc.Encode(rec); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string) {
		t.Helper()
		r, err := Status(run)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if r.Journaled != 1 || len(r.Pending) != 1 || r.Pending[0].ID != 5 || r.Pending[0].Object != "q" {
			t.Errorf("%s: %d journaled, pending %+v; want 1 journaled and id 5 (q) pending", what, r.Journaled, r.Pending)
		}
	}
	plain := filepath.Join(run, bo.JournalFile)
	if err := os.WriteFile(plain, text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	check(bo.JournalFile)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(text.Bytes()); err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain+".gz", gz.Bytes(), 0o644); err != nil || os.Remove(plain) != nil {
		t.Fatal(err)
	}
	check(bo.JournalFile + ".gz")
	gz.Reset()
	zw = gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte("{\"round\": 3}\n")); err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"not gzip": []byte("not gzip"), "a bad line": gz.Bytes()} {
		if err := os.WriteFile(plain+".gz", b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Status(run); err == nil || !strings.Contains(err.Error(), plain+".gz") || strings.Contains(err.Error(), "tlbo-journal-") {
			t.Errorf("journal.jsonl.gz with %s: %v, want an error naming it", what, err)
		}
	}
}
