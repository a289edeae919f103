package molecule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// TestReadLibrary: a library file's lines, blank or tab separated, with or
// without scores; a bad line is an error naming the file, the line and
// what is wrong.
func TestReadLibrary(t *testing.T) {
	lib, err := readLibrary(strings.NewReader("CCO\t0.5\n\n  c1ccccc1   -1e-3\nC#N 2\n"), "lib.smi")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(lib.Smiles, " ") != "CCO c1ccccc1 C#N" || len(lib.Scores) != 3 || lib.Scores[1] != -1e-3 || lib.Lines[2] != 4 {
		t.Errorf("read %+v", lib)
	}
	if lib, err := readLibrary(strings.NewReader("CCO\nC#N\n"), "lib.smi"); err != nil || lib.Scores != nil {
		t.Errorf("a library without scores: %+v, %v", lib, err)
	}
	for _, c := range []struct{ text, want string }{
		{"CCO 1\nCCN\n", "lib.smi:2: no score"},
		{"CCO\nCCN 1\n", "lib.smi:2: a score"},
		{"CCO one\n", `lib.smi:1: score "one" is not a finite number`},
		{"CCO NaN\n", `lib.smi:1: score "NaN"`},
		{"CCO 1 2\n", "lib.smi:1: 3 fields"},
		{"\n\n", "lib.smi: no molecules"},
	} {
		if _, err := readLibrary(strings.NewReader(c.text), "lib.smi"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// TestImportSmiles: data molecule --smiles makes a data set of a user's
// library whose scores optimize --data-scores reads back (in the training
// split's order, the unusable molecules left out), while "score" stays
// penalised logP; a molecule RDKit rejects is reported with its line.
func TestImportSmiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "lib.smi")
	text := "CCO 0.25\nnot-a-smiles 9\n" + sampleSmiles[0] + " 0.75\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "data")
	var stdout, stderr strings.Builder
	env := &task.Env{Opts: task.Values{optSmiles: src}, Stdout: &stdout, Stderr: &stderr}
	if err := buildData(env, out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), src+":2: not-a-smiles") {
		t.Errorf("stderr %q: want the unusable molecule named with its line", stderr.String())
	}
	path := filepath.Join(out, DataFileName)
	split, err := readTrainSplit(path)
	if err != nil {
		t.Fatal(err)
	}
	smiles, scores := split.smiles, split.scores
	user, err := readUserScores(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(smiles) != 2 || len(user) != 2 || user[0] != 0.25 || user[1] != 0.75 || scores[0] == 0.25 {
		t.Errorf("training split %v, scores %v, the user's %v", smiles, scores, user)
	}
	if _, err := os.Stat(filepath.Join(out, VocabFileName)); err != nil {
		t.Error(err)
	}
	// A data set without the user's scores: --data-scores says how to get them.
	zinc := filepath.Join(dir, "zinc.npz")
	if err := numpy.WriteNPZ(zinc, []numpy.Array{{Name: "split", Shape: []int{1}, Data: []int64{0}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := readUserScores(zinc); err == nil || !strings.Contains(err.Error(), "--smiles") {
		t.Errorf("a data set without the user's scores: %v", err)
	}
}
