package molecule

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/task"
)

// peg is polyethylene glycol, HO(CH2CH2O)nH: 3n + 1 heavy atoms in a
// chain, one junction-tree node per bond.
func peg(n int) string { return "O" + strings.Repeat("CCO", n) }

// TestCheckSize: the limits count heavy atoms and the hydrogens RDKit
// keeps as atoms (isotope-labelled ones; explicit plain ones aside) and
// characters, and say which limit and by how much.
func TestCheckSize(t *testing.T) {
	for _, c := range []struct {
		smiles, want string // want "": accepted
	}{
		{strings.Repeat("C", MaxHeavyAtoms), ""},
		{strings.Repeat("C([H])([H])", MaxHeavyAtoms), ""}, // 600 atoms, 200 of them heavy
		{strings.Repeat("C", MaxHeavyAtoms+1), fmt.Sprintf("%d heavy atoms, more than the %d allowed", MaxHeavyAtoms+1, MaxHeavyAtoms)},
		{peg(500), "1501 heavy atoms"},
		{strings.Repeat("C([2H])", 150), "150 heavy atoms and 150 isotope-labelled hydrogens, more than the 200 atoms allowed"},
		{strings.Repeat("C", 70000), fmt.Sprintf("SMILES of 70000 characters, more than the %d allowed", MaxSmilesLength)},
		{"not-a-smiles", ""}, // left to the parse, which says why
	} {
		err := checkSize(c.smiles)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", cut(c.smiles), err, c.want)
		}
	}
}

// TestHostileMoleculesRefused: molecule tree and featurisation refuse a
// molecule over a limit with the reason, one failure for that molecule.
// Its tree of 1,500 nodes once aborted the program (atom map numbers).
func TestHostileMoleculesRefused(t *testing.T) {
	if _, err := Tree(peg(500), false); err == nil || !strings.Contains(err.Error(), "1501 heavy atoms") {
		t.Errorf("tree of 1,501 heavy atoms: %v", err)
	}
	var out bytes.Buffer
	err := writeTrees(context.Background(), &out, []string{"CCO", strings.Repeat("C", 70000), "CCN"}, false, 2)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err == nil || len(lines) != 3 || !strings.Contains(lines[1], "SMILES of 70000 characters") || strings.Contains(lines[2], "error") {
		t.Errorf("molecule tree with a SMILES of 70,000 characters: %v\n%s", err, cut(out.String()))
	}
	f := NewFeaturiser(Vocab{"CC", "CO"})
	_, err = f.Featurise(peg(500))
	if err == nil || !strings.Contains(err.Error(), "1501 heavy atoms") || len(err.Error()) > 400 {
		t.Errorf("featurise 1,501 heavy atoms: %v, want the reason and the SMILES cut short", err)
	}
}

// TestImportHostileMolecules: a library with a molecule of 1,501 heavy
// atoms and a SMILES of 70,000 characters among good molecules imports the
// good ones (in the training split, with their scores) and reports each
// bad one, with its line and reason, in report.txt and on stderr.
func TestImportHostileMolecules(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "lib.smi")
	text := "CCO 1\n" + peg(500) + " 2\nCCN 3\n" + strings.Repeat("C", 70000) + " 4\nc1ccccc1O 5\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "data")
	var stdout, stderr strings.Builder
	env := &task.Env{Opts: task.Values{optSmiles: src}, Stdout: &stdout, Stderr: &stderr}
	if err := buildData(env, out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "failed 2") || !strings.Contains(stderr.String(), src+":2: OCCO") ||
		!strings.Contains(stderr.String(), "1501 heavy atoms") || len(stderr.String()) > 1000 {
		t.Errorf("stdout %q, stderr %q: want 2 failed, the first named with its line and reason, cut short", stdout.String(), cut(stderr.String()))
	}
	path := filepath.Join(out, DataFileName)
	split, err := readTrainSplit(path)
	if err != nil {
		t.Fatal(err)
	}
	smiles := split.smiles
	user, err := readUserScores(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(smiles, []string{"CCO", "CCN", "c1ccccc1O"}) || !slices.Equal(user, []float64{1, 3, 5}) {
		t.Errorf("training split %v, scores %v: want the three good molecules", smiles, user)
	}
	report, err := os.ReadFile(filepath.Join(out, ReportFileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"failed 2 (size 2, parse 0",
		"failure\t2\ttrain\tsize\t" + peg(500) + "\t1501 heavy atoms, more than the 200 allowed\n",
		"failure\t4\ttrain\tsize\t" + strings.Repeat("C", 70000) + "\tSMILES of 70000 characters"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.txt lacks %q:\n%s", cut(want), cut(string(report)))
		}
	}
}

// TestImportInterrupted: an import whose context is done (SIGTERM) stops
// between molecules, writes nothing and removes the directory it made.
func TestImportInterrupted(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "data")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ImportSmiles(BuildOptions{OutDir: out, Ctx: ctx}, &Library{Smiles: []string{"CCO", "CCN"}, Lines: []int{1, 2}})
	if err == nil || !strings.Contains(err.Error(), "interrupted after 0 of 2 molecules; nothing written") || !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted import: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the output directory: %v, want it removed", err)
	}
	// A directory that was there before stays.
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportSmiles(BuildOptions{OutDir: out, Ctx: ctx}, &Library{Smiles: []string{"CCO"}, Lines: []int{1}}); err == nil {
		t.Error("interrupted import into an existing directory: no error")
	}
	if fs, err := os.ReadDir(out); err != nil || len(fs) != 0 {
		t.Errorf("the existing directory: %v, %v; want it kept, empty", fs, err)
	}
}

// TestParallelStops: once the context is done no index starts; the ones
// running finish and are reported done; the error is the context's.
func TestParallelStops(t *testing.T) {
	const n, workers = 1000, 3
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	var done []int
	err := parallel(ctx, n, workers, func(i int) { done = append(done, i) }, func(i int) {
		if calls.Add(1) == 10 {
			cancel()
		}
	})
	// After the cancel each worker may finish the index it holds: at most
	// workers-1 besides the one that cancelled.
	if !errors.Is(err, context.Canceled) || len(done) != int(calls.Load()) || len(done) < 10 || len(done) > 10+workers-1 {
		t.Errorf("stopped after %d calls, %d done: %v", calls.Load(), len(done), err)
	}
	done = done[:0]
	if err := parallel(context.Background(), n, workers, func(i int) { done = append(done, i) }, func(int) {}); err != nil || len(done) != n {
		t.Errorf("uninterrupted: %d of %d done, %v", len(done), n, err)
	}
}

// TestTreesInterrupted: molecule tree stopped before the work writes the
// lines done (here the empty line before any molecule) and says so.
func TestTreesInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := writeTrees(ctx, &out, []string{"", "CCO", "CCN"}, false, 1)
	if err == nil || !strings.Contains(err.Error(), "interrupted: 1 of 3 lines written") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("interrupted molecule tree: %v, %q", err, out.String())
	}
}
