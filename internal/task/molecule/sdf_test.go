package molecule

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/manual"
)

// sdfRecord is one record of an SD file: its title, its molfile's atom
// and bond counts, and its data fields.
type sdfRecord struct {
	title        string
	atoms, bonds int
	fields       map[string]string
}

// readSDF splits an SD file into records ($$$$ lines), reading each one's
// V2000 counts line and its data fields (> <name>, value lines up to a
// blank one).
func readSDF(t *testing.T, text string) []sdfRecord {
	t.Helper()
	if !strings.HasSuffix(text, "$$$$\n") {
		t.Fatalf("the file does not end with a record's $$$$:\n%s", text)
	}
	var recs []sdfRecord
	for _, rec := range strings.SplitAfter(text, "$$$$\n") {
		if rec == "" {
			continue
		}
		lines := strings.Split(rec, "\n")
		end := 0
		for end < len(lines) && lines[end] != "M  END" {
			end++
		}
		if len(lines) < 5 || end == len(lines) || !strings.HasSuffix(lines[3], "V2000") {
			t.Fatalf("record without a V2000 molfile:\n%s", rec)
		}
		na, _ := strconv.Atoi(strings.TrimSpace(lines[3][0:3]))
		nb, _ := strconv.Atoi(strings.TrimSpace(lines[3][3:6]))
		r := sdfRecord{title: lines[0], atoms: na, bonds: nb, fields: map[string]string{}}
		for i := end + 1; i < len(lines); i++ {
			name, ok := strings.CutPrefix(lines[i], "> <")
			if !ok {
				continue
			}
			name = strings.TrimSuffix(name, ">")
			var v []string
			for i++; i < len(lines) && lines[i] != ""; i++ {
				v = append(v, lines[i])
			}
			r.fields[name] = strings.Join(v, "\n")
		}
		recs = append(recs, r)
	}
	return recs
}

// TestHandoutSDF: ask's SDF holds one record per row of its CSV, in
// order, titled with the id, with the molecule of the row's SMILES (its
// atoms and bonds) and the row's cells as data fields (smiles for the
// object column; none for an empty cell); an unparsable SMILES fails
// naming the id, and leaves no file.
func TestHandoutSDF(t *testing.T) {
	m, sd, acq := -1.25, 0.5, 0.0312
	handed := []manual.Proposal{
		{ID: 2, Key: "CCO", Object: "CCO"},
		{ID: 7, Key: "c1ccccc1C(=O)N", Object: "c1ccccc1C(=O)N", Mean: &m, SD: &sd, Acq: &acq},
	}
	base := filepath.Join(t.TempDir(), "batch")
	path, err := writeHandoutSDF(base, handed)
	if err != nil || path != base+".sdf" {
		t.Fatalf("wrote %q, %v; want %s.sdf", path, err, base)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := readSDF(t, string(text))
	var b bytes.Buffer
	if err := manual.WriteAsk(&b, handed); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rows)-1 {
		t.Fatalf("%d records for %d rows of the CSV:\n%s", len(recs), len(rows)-1, text)
	}
	for i, r := range recs {
		row := rows[i+1]
		want := map[string]string{}
		for j, name := range rows[0] {
			if name == "object" {
				name = "smiles"
			}
			if row[j] != "" {
				want[name] = row[j]
			}
		}
		if r.title != "id "+row[0] || len(r.fields) != len(want) {
			t.Errorf("record %d: title %q, fields %v; want id %s, %v", i+1, r.title, r.fields, row[0], want)
		}
		for name, v := range want {
			if r.fields[name] != v {
				t.Errorf("record %d: field %s is %q, want the CSV's %q", i+1, name, r.fields[name], v)
			}
		}
		mol, err := chem.Smiles(row[1])
		if err != nil {
			t.Fatal(err)
		}
		if r.atoms != mol.NumAtoms() || r.bonds != mol.NumBonds() {
			t.Errorf("record %d: %d atoms and %d bonds, want %s's %d and %d", i+1, r.atoms, r.bonds, row[1], mol.NumAtoms(), mol.NumBonds())
		}
		mol.Close()
	}

	bad := filepath.Join(t.TempDir(), "bad")
	_, err = writeHandoutSDF(bad, append(handed, manual.Proposal{ID: 9, Object: "C1CC"}))
	if err == nil || !strings.Contains(err.Error(), "id 9: SMILES \"C1CC\"") || !strings.Contains(err.Error(), "bad.sdf") {
		t.Errorf("an unparsable SMILES: %v, want an error naming the file, the id and the SMILES", err)
	}
	if _, err := os.Stat(bad + ".sdf"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed SDF left a file: %v", err)
	}
}
