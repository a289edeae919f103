package chem

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// treeRecord is one molecule of testdata/chem/tree_fixtures.json.gz, written by
// make_tree_fixtures.py from the authors' JT-VAE code.
type treeRecord struct {
	Smiles   string   `json:"smiles"`
	Error    string   `json:"error"`
	Clusters [][]int  `json:"clusters"`
	Edges    [][2]int `json:"edges"`
	Nodes    []struct {
		Cluster int      `json:"cluster"`
		Smiles  string   `json:"smiles"`
		Label   string   `json:"label"`
		Cands   []string `json:"cands"`
	} `json:"nodes"`
}

func readTreeFixtures(t testing.TB, name string) []treeRecord {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "chem", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []treeRecord
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var r treeRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TreeDiff compares our decomposition of r.Smiles with the reference and
// returns what differs ("" when nothing does); the tree is compared only when
// it is unique.
func treeDiff(r treeRecord, candidates bool) (kind, detail string) {
	if r.Error != "" {
		if err := decomposeAll(r.Smiles); err == nil {
			return "error", "reference failed (" + r.Error + "), ours did not"
		}
		return "", ""
	}
	tr, err := Decompose(r.Smiles)
	if err != nil {
		return "error", err.Error()
	}
	defer tr.Close()
	if !slices.EqualFunc(tr.Clusters, r.Clusters, slices.Equal[[]int]) {
		return "clusters", jsonString(tr.Clusters) + " want " + jsonString(r.Clusters)
	}
	if tr.Unique && !slices.Equal(tr.Edges, r.Edges) {
		return "edges", jsonString(tr.Edges) + " want " + jsonString(r.Edges)
	}
	if !slices.Equal(tr.Edges, r.Edges) {
		return "", "" // another of equal maximum spanning trees: labels and candidates differ legitimately
	}
	for i, n := range tr.Nodes {
		if n.Cluster != r.Nodes[i].Cluster || n.Smiles != r.Nodes[i].Smiles {
			return "nodes", jsonString(n.Smiles) + " want " + jsonString(r.Nodes[i].Smiles)
		}
	}
	if err := tr.Recover(); err != nil {
		return "error", err.Error()
	}
	for i, n := range tr.Nodes {
		if n.Label != r.Nodes[i].Label {
			return "labels", n.Label + " want " + r.Nodes[i].Label
		}
	}
	if !candidates {
		return "", ""
	}
	if err := tr.Assemble(); err != nil {
		return "error", err.Error()
	}
	for i, n := range tr.Nodes {
		want := r.Nodes[i].Cands
		if !slices.Equal(n.Cands, want) {
			return "cands", jsonString(n.Cands) + " want " + jsonString(want)
		}
	}
	return "", ""
}

// decomposeAll decomposes, recovers and assembles smiles, returning the first error.
func decomposeAll(smiles string) error {
	tr, err := Decompose(smiles)
	if err != nil {
		return err
	}
	defer tr.Close()
	if err := tr.Recover(); err != nil {
		return err
	}
	return tr.Assemble()
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTreeFixtures: clusters identical on every molecule, trees wherever the
// maximum spanning tree is unique, labels on every molecule whose tree
// matches, and candidate lists (same order) on every fourth one, or on all
// with TLBO_CHEM_FULL=1 (about a minute of CPU).
func TestTreeFixtures(t *testing.T) {
	full := os.Getenv("TLBO_CHEM_FULL") == "1"
	recs := readTreeFixtures(t, "tree_fixtures.json.gz")
	if len(recs) < 1000 {
		t.Errorf("only %d fixture molecules", len(recs))
	}
	bad := 0
	for i, r := range recs {
		if kind, detail := treeDiff(r, full || i%4 == 0); kind != "" {
			t.Errorf("%s: %s differ: %s", r.Smiles, kind, detail)
			if bad++; bad > 10 {
				t.Fatal("too many differences")
			}
		}
	}
}

func TestPySetOrder(t *testing.T) {
	// From CPython 3.11: list(set(xs)).
	cases := []struct{ in, want []int }{
		{[]int{72, 8, 32, 15, 63}, []int{32, 72, 8, 15, 63}},
		{[]int{57, 60, 48, 26, 12, 62, 3, 49, 55, 77, 0, 57, 34, 29, 75, 13, 40, 3, 2, 3, 69, 1, 48, 27, 54},
			[]int{0, 1, 2, 3, 12, 13, 26, 27, 29, 34, 40, 48, 49, 54, 55, 57, 60, 62, 69, 75, 77}},
		{[]int{36, 75, 63, 64, 50, 75, 4, 61, 31, 51}, []int{64, 36, 4, 75, 50, 51, 31, 61, 63}},
		{[]int{22, 46, 70, 47, 11, 56, 65, 13, 20, 66, 50, 47, 62, 3}, []int{65, 66, 3, 70, 11, 13, 46, 47, 50, 20, 22, 56, 62}},
	}
	for _, c := range cases {
		if got := pySetOrder(c.in); !slices.Equal(got, c.want) {
			t.Errorf("pySetOrder(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
