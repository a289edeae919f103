package molecule

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// writeZinc makes a tiny data directory in the layout of shared/data/zinc.
func writeZinc(t *testing.T, all, valid, test, vocab []string) string {
	t.Helper()
	dir := t.TempDir()
	z := filepath.Join(dir, "zinc")
	if err := os.MkdirAll(z, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(z, "zinc250k.smi.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write([]byte(strings.Join(all, "\n") + "\n"))
	zw.Close()
	f.Close()
	for name, lines := range map[string][]string{"jtvae_valid.txt": valid, "jtvae_test.txt": test, "jtvae_vocab.txt": vocab} {
		if err := os.WriteFile(filepath.Join(z, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBuild(t *testing.T) {
	for _, candidates := range []bool{true, false} {
		testBuild(t, candidates)
	}
}

func testBuild(t *testing.T, candidates bool) {
	all := []string{"CCO", "c1ccccc1O", "C1CC", "c1cc2ccc3cccc4ccc(c1)c2c34", "CC(=O)[O-]", "CCN"}
	dir := writeZinc(t, all, []string{"CC(=O)[O-]"}, []string{"CCN"}, []string{"CC", "CO", "c1ccccc1", "CN"})
	out := filepath.Join(t.TempDir(), "data")
	rep, err := Build(BuildOptions{DataDir: dir, OutDir: out, Workers: 2, Candidates: candidates})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total != 6 || rep.Train != 4 || rep.Valid != 1 || rep.Test != 1 {
		t.Errorf("counts %+v", rep)
	}
	// C1CC does not parse; pyrene decomposes but its fragments cannot be
	// recovered (a kekulé fragment) under RDKit 2022.09, with or without
	// the candidates: the featurisation would fail there, so the data set
	// leaves it out from the start (featurisation on demand relies on it).
	var failed []string
	for _, f := range rep.Failures {
		failed = append(failed, f.Smiles+":"+f.Stage)
	}
	if want := []string{"C1CC:parse", "c1cc2ccc3cccc4ccc(c1)c2c34:recover"}; !slices.Equal(failed, want) {
		t.Errorf("candidates %v: failures %v, want %v", candidates, failed, want)
	}
	split, err := readTrainSplit(filepath.Join(out, DataFileName))
	smiles, clusters := split.smiles, split.clusters
	if err != nil || slices.Contains(smiles, all[3]) || len(clusters) != len(smiles) {
		t.Errorf("training split %v, clusters %v, %v: want pyrene left out and clusters for on-demand featurisation", smiles, clusters, err)
	}
	if want := []string{"C", "C1=CC=CC=C1", "CC", "CO"}; !slices.Equal(rep.Vocab, want) { // pyrene decomposes (a singleton in three rings) before it fails
		t.Errorf("vocabulary %v", rep.Vocab)
	}
	// The shipped vocabulary spells benzene aromatic, ours kekulé: one
	// entry to the featuriser, so neither list has it.
	if !slices.Equal(rep.OnlyShipped, []string{"CN"}) || !slices.Equal(rep.OnlyOurs, []string{"C"}) {
		t.Errorf("only shipped %v, only ours %v: want [CN] and [C]", rep.OnlyShipped, rep.OnlyOurs)
	}
	arrs, err := numpy.ReadNPZ(filepath.Join(out, DataFileName))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]numpy.Array{}
	for _, a := range arrs {
		byName[a.Name] = a
	}
	scores := byName["score"].Data.([]float64)
	if scores[2] != FailureScore || scores[0] == FailureScore {
		t.Errorf("scores %v", scores)
	}
	if got := byName["split"].Data.([]int64); !slices.Equal(got, []int64{0, 0, 0, 0, 1, 2}) {
		t.Errorf("splits %v", got)
	}
	report, err := os.ReadFile(filepath.Join(out, ReportFileName))
	if err != nil || !strings.Contains(string(report), "failure\t2\ttrain\tparse\tC1CC") {
		t.Errorf("report:\n%s", report)
	}
	v, err := ReadVocab(filepath.Join(out, VocabFileName))
	if err != nil || !slices.Equal(v, rep.Vocab) {
		t.Errorf("vocab.txt %v, %v", v, err)
	}
}

func TestBuildLimit(t *testing.T) {
	dir := writeZinc(t, []string{"CO", "CCO", "CCC", "CCN", "CCCl"}, []string{"CCC"}, []string{"CO"}, []string{"CC"})
	out := t.TempDir()
	rep, err := Build(BuildOptions{DataDir: dir, OutDir: out, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total != 2 || rep.Train != 2 || rep.Valid != 0 || rep.Test != 0 {
		t.Errorf("first 2 training molecules: counts %+v, want 2 (train 2)", rep)
	}
	arrs, err := numpy.ReadNPZ(filepath.Join(out, DataFileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arrs {
		if a.Name == "smiles" && !slices.Equal(a.Data.([]string), []string{"CCO", "CCN"}) {
			t.Errorf("smiles %v, want [CCO CCN]", a.Data)
		}
	}
}

func TestBuildUserVocab(t *testing.T) {
	dir2 := writeZinc(t, []string{"CCO", "CCCl", "CCC"}, []string{"CCC"}, []string{"CCO"}, []string{"CC"})
	user := filepath.Join(t.TempDir(), "v.txt")
	os.WriteFile(user, []byte("CC\nCO\n"), 0o644)
	out := t.TempDir()
	rep, err := Build(BuildOptions{DataDir: dir2, OutDir: out, Vocab: user})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.MissingFromUser, []string{"CCl"}) || rep.MoleculesMissingUser != 1 {
		t.Errorf("missing %v in %d molecules", rep.MissingFromUser, rep.MoleculesMissingUser)
	}
	if v, _ := ReadVocab(filepath.Join(out, VocabFileName)); !slices.Equal(v, Vocab{"CC", "CO"}) {
		t.Errorf("vocab.txt %v, want the user's", v)
	}
}

func TestBadInputs(t *testing.T) {
	if _, err := Build(BuildOptions{DataDir: t.TempDir(), OutDir: t.TempDir()}); err == nil {
		t.Error("built from an empty directory")
	}
	dir := writeZinc(t, []string{"CCO"}, []string{"CCN"}, []string{"CCO"}, []string{"CC"})
	if _, err := Build(BuildOptions{DataDir: dir, OutDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "CCN") {
		t.Errorf("a split molecule missing from ZINC: %v", err)
	}
	p := filepath.Join(t.TempDir(), "v.txt")
	for _, bad := range []string{"", "CC CO\n", "CC\nCC\n"} {
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := ReadVocab(p); err == nil {
			t.Errorf("vocabulary %q accepted", bad)
		}
	}
	if v, err := Score("C1CC"); err == nil || v != FailureScore {
		t.Errorf("Score(C1CC) = %v, %v", v, err)
	}
	if _, err := Score(""); err == nil {
		t.Error("scored an empty SMILES")
	}
}

func TestTreeJSON(t *testing.T) {
	tr, err := Tree("CC(=O)Oc1ccccc1C(=O)O", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Clusters) != 10 || len(tr.Edges) != 9 || tr.Clusters[7].Label != "C1=CC=CC=C1" || len(tr.Candidates) != 10 {
		t.Errorf("tree %+v", tr)
	}
	trees, errs := Trees([]string{"CCO", "C1CC"}, false, 2, nil)
	if trees[0] == nil || errs[0] != nil || errs[1] == nil {
		t.Errorf("Trees: %v %v", trees, errs)
	}
}

// TestTrainSplitWithoutRecoverCheck: a data file made before data molecule
// checked recovery keeps clusters but not RecoveredArray; its clusters are
// not used (nil), so that optimize featurises it whole rather than meet a
// molecule that fails recovery in the middle of a run.
func TestTrainSplitWithoutRecoverCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), DataFileName)
	arrays := []numpy.Array{
		{Name: "smiles", Shape: []int{2}, Data: []string{"CCO", "CCN"}},
		{Name: "score", Shape: []int{2}, Data: []float64{1, 2}},
		{Name: "split", Shape: []int{2}, Data: []int64{0, 0}},
		{Name: "ok", Shape: []int{2}, Data: []bool{true, true}},
		{Name: ClusterArray, Shape: []int{2}, Data: []string{"CC CO", "CC CN"}},
	}
	if err := numpy.WriteNPZ(path, arrays); err != nil {
		t.Fatal(err)
	}
	if split, err := readTrainSplit(path); err != nil || split.clusters != nil {
		t.Errorf("without %s: clusters %v, %v; want none", RecoveredArray, split.clusters, err)
	}
	arrays = append(arrays, numpy.Array{Name: RecoveredArray, Shape: []int{}, Data: []bool{true}})
	if err := numpy.WriteNPZ(path, arrays); err != nil {
		t.Fatal(err)
	}
	if split, err := readTrainSplit(path); err != nil || len(split.clusters) != 2 {
		t.Errorf("with %s: clusters %v, %v; want two", RecoveredArray, split.clusters, err)
	}
}
