package manual

import (
	"bytes"
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
