package molecule

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// keysDataFile writes a data file of 40 ZINC validation molecules (some
// with stereo, whose keys drop it) and returns its path.
func keysDataFile(t *testing.T) string {
	t.Helper()
	return filepath.Join(validDataSet(t, 40), DataFileName)
}

// rewriteCanonical writes a copy of the data file at path with its
// canonical array changed by edit (nil: left out) and returns its path.
func rewriteCanonical(t *testing.T, path string, edit func([]string) []string) string {
	t.Helper()
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []numpy.Array
	for _, a := range arrays {
		if a.Name == canonicalArray {
			if edit == nil {
				continue
			}
			a.Data = edit(slices.Clone(a.Data.([]string)))
		}
		out = append(out, a)
	}
	p := filepath.Join(t.TempDir(), DataFileName)
	if err := numpy.WriteNPZ(p, out); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDataKeys: once the data set is read, the binding's objective keys
// every data-set molecule from its memo, and each key is the one made
// afresh (Standardize); molecules outside the data set are keyed as
// before. A data file whose canonical SMILES disagree with this build's,
// or that has none, gets its keys made here, with a note for the former.
func TestDataKeys(t *testing.T) {
	path := keysDataFile(t)
	split, err := readTrainSplit(path)
	if err != nil || len(split.canonical) != len(split.smiles) {
		t.Fatalf("data file: %d canonical SMILES for %d molecules, %v", len(split.canonical), len(split.smiles), err)
	}
	stereo := slices.ContainsFunc(split.smiles, func(s string) bool { return strings.Contains(s, "@") })
	if !stereo {
		t.Fatal("no molecule with stereo: the keys would be their SMILES")
	}
	wrong := func(c []string) []string {
		for i := range c {
			c[i] = "C" + c[i]
		}
		return c
	}
	for _, tc := range []struct {
		name, path, note string
	}{
		{"the file's", path, ""},
		{"disagreeing", rewriteCanonical(t, path, wrong), "canonical SMILES of molecule 1"},
		{"none in the file", rewriteCanonical(t, path, nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := newTask()
			env := testEnv(t, false, task.Values{optMolecules: tc.path, optCacheDir: "none", optWorkers: 2})
			obj, err := b.objective(env)
			if err != nil {
				t.Fatal(err)
			}
			smiles, _, _, err := b.dataset(env)
			if err != nil {
				t.Fatal(err)
			}
			log := env.Stderr.(*bytes.Buffer).String()
			if tc.note != "" && !strings.Contains(log, tc.note) {
				t.Errorf("no note of the disagreement (%q) in %q", tc.note, log)
			}
			for _, s := range smiles {
				k, ok := b.keys.get(s)
				if want := standardKey(s); !ok || k != want || obj.Key(s) != want {
					t.Errorf("%s: memo %q %v, objective %q; want %q", s, k, ok, obj.Key(s), want)
				}
			}
			for s, want := range map[string]string{"OCC": "CCO", "not a smiles": "not a smiles"} {
				if got := obj.Key(s); got != want {
					t.Errorf("key of %q outside the data set: %q, want %q", s, got, want)
				}
			}
		})
	}
}

// TestKeyMemoFill: fill makes the keys of the molecules it does not hold,
// each once, keeping those it holds.
func TestKeyMemoFill(t *testing.T) {
	var m keyMemo
	if _, ok := m.get("CCO"); ok {
		t.Fatal("an empty memo holds a key")
	}
	m.add([]string{"OCC"}, []string{"kept"})
	if err := m.fill(nil, []string{"OCC", "C(O)C", "C(O)C", "not a smiles"}, 2, nil); err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]string{"OCC": "kept", "C(O)C": "CCO", "not a smiles": "not a smiles"} {
		if got, ok := m.get(s); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", s, got, ok, want)
		}
	}
	var none *keyMemo
	if _, ok := none.get("CCO"); ok {
		t.Error("a nil memo holds a key")
	}
}
