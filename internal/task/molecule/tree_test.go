package molecule

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/cliutil"
)

// TestMoleculeTree checks that `molecule tree` prints one JSON object per
// input in input order: a tree, or {"smiles", "error"} for an empty line,
// garbage and a ZINC molecule whose cluster fragment RDKit cannot kekulize;
// and that it fails after printing everything.
func TestMoleculeTree(t *testing.T) {
	chem.SetLogging(false)
	in, err := cliutil.InputLines(strings.NewReader("CCO\n\n  C1CC  \nCOc1cccc(CN2CCc3nnc(CCc4ccccc4)n3CC2)c1\nc1ccccc1O"), "test")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"CCO", "", "C1CC", "COc1cccc(CN2CCc3nnc(CCc4ccccc4)n3CC2)c1", "c1ccccc1O"}; strings.Join(in, "|") != strings.Join(want, "|") {
		t.Fatalf("input lines %q, want %q", in, want)
	}
	var out bytes.Buffer
	err = writeTrees(context.Background(), &out, in, false, 2)
	if err == nil || !strings.Contains(err.Error(), "3 of 5 molecules failed") {
		t.Errorf("error %v, want 3 of 5 failed", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(in) {
		t.Fatalf("%d lines for %d inputs:\n%s", len(lines), len(in), out.String())
	}
	for i, reason := range []string{"", "empty line", "C1CC", "kekulize", ""} {
		var got struct {
			Smiles   string            `json:"smiles"`
			Error    string            `json:"error"`
			Clusters []json.RawMessage `json:"clusters"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, lines[i])
		}
		if got.Smiles != in[i] {
			t.Errorf("line %d: smiles %q, want %q (input order)", i+1, got.Smiles, in[i])
		}
		if reason == "" && (got.Error != "" || len(got.Clusters) == 0) {
			t.Errorf("line %d: %s, want a tree", i+1, lines[i])
		}
		if reason != "" && !strings.Contains(got.Error, reason) {
			t.Errorf("line %d: %s, want an error naming %q", i+1, lines[i], reason)
		}
	}

	out.Reset()
	if err := writeTrees(context.Background(), &out, []string{"CCO", "c1ccccc1"}, false, 1); err != nil || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("two good molecules: %v, %q", err, out.String())
	}
}
