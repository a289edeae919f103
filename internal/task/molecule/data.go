package molecule

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/datadir"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// The ZINC250K files under the data directory (shared/data/README.md).
const (
	ZincFile       = "zinc/zinc250k.smi.gz"
	ValidFile      = "zinc/jtvae_valid.txt"
	TestFile       = "zinc/jtvae_test.txt"
	ShippedVocab   = "zinc/jtvae_vocab.txt"
	DataFileName   = "molecules.npz"
	VocabFileName  = "vocab.txt"
	ReportFileName = "report.txt"
	splitTrain     = 0
	splitValid     = 1
	splitTest      = 2
)

var splitNames = []string{"train", "valid", "test"}

// BuildOptions configure Build.
type BuildOptions struct {
	DataDir string // holds zinc/
	OutDir  string
	// Vocab, when set, is the user's vocabulary file: it is copied to
	// OutDir/vocab.txt and the report lists training clusters missing from it.
	Vocab string
	// Candidates also enumerates every node's attachment candidates (slow).
	Candidates bool
	// Workers is the number of goroutines (0: all CPUs).
	Workers int
	// Limit, when positive, keeps only the first Limit molecules of the
	// training split (in ZINC250K's order; the validation and test splits
	// are left out): a data set for runs at a smaller scale.
	Limit int
	// Progress, when set, is called with the molecules done so far.
	Progress func(done, total int)
	// Ctx, when set, stops the build between molecules (on SIGTERM, say):
	// nothing is written then, and the build returns an error.
	Ctx context.Context
}

// Failure is a molecule that could not be handled, with the stage that failed.
type Failure struct {
	Index  int
	Split  string
	Stage  string // size (over a limit of limits.go), parse, score, decompose, assemble
	Smiles string
	Reason string
}

// BuildReport summarises a data-set build.
type BuildReport struct {
	Total, Train, Valid, Test int
	Failures                  []Failure
	Vocab                     Vocab    // built from the training split with the linked RDKit
	OnlyOurs, OnlyShipped     []string // vocabulary differences from the shipped one
	MissingFromUser           []string // training clusters the user's vocabulary cannot label
	MoleculesMissingUser      int      // training molecules using one of them
}

// result is one molecule's outcome.
type result struct {
	canonical string
	score     float64
	clusters  []string
	fail      *Failure
}

// Build makes the ZINC250K data set: every molecule's canonical SMILES,
// penalised logP and split (train = all minus the JT-VAE validation and test
// splits), its junction tree, the vocabulary of the training split, and a
// report of what RDKit could not handle.
func Build(o BuildOptions) (*BuildReport, error) {
	smiles, split, err := readSplits(o.DataDir)
	if err != nil {
		return nil, err
	}
	if o.Limit > 0 {
		smiles, split = firstTraining(smiles, split, o.Limit)
	}
	if _, err := DefaultFragmentScores(); err != nil {
		return nil, err
	}
	var user Vocab
	if o.Vocab != "" {
		if user, err = ReadVocab(o.Vocab); err != nil {
			return nil, err
		}
	}
	res, err := processIn(o.OutDir, smiles, split, o)
	if err != nil {
		return nil, err
	}
	rep := summarise(smiles, split, res)
	if err := writeData(filepath.Join(o.OutDir, DataFileName), smiles, split, res); err != nil {
		return nil, err
	}
	if err := rep.vocabularies(o, res, split, user); err != nil {
		return nil, err
	}
	return rep, rep.write(filepath.Join(o.OutDir, ReportFileName))
}

// processIn makes dir (so that a directory that cannot be made fails before
// the work) and runs processAll; when that is interrupted, it removes dir
// again if it made it and it is still empty.
func processIn(dir string, smiles []string, split []int, o BuildOptions) ([]result, error) {
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res, err := processAll(smiles, split, o)
	if err != nil {
		if errors.Is(statErr, fs.ErrNotExist) {
			os.Remove(dir) // fails, as it should, when anything is in it
		}
		return nil, fmt.Errorf("data set %s: %w", dir, err)
	}
	return res, nil
}

// firstTraining returns the first n molecules of the training split.
func firstTraining(smiles []string, split []int, n int) ([]string, []int) {
	var keep []string
	for i, s := range smiles {
		if len(keep) == n {
			break
		}
		if split[i] == splitTrain {
			keep = append(keep, s)
		}
	}
	return keep, make([]int, len(keep))
}

// readSplits reads ZINC250K and labels each molecule with its split.
func readSplits(dir string) ([]string, []int, error) {
	all, err := readSmilesFile(filepath.Join(dir, ZincFile))
	if err != nil {
		return nil, nil, err
	}
	split := make([]int, len(all))
	index := make(map[string]int, len(all))
	for i, s := range all {
		index[s] = i
	}
	for k, name := range []string{ValidFile, TestFile} {
		part, err := readSmilesFile(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		for line, s := range part {
			i, ok := index[s]
			if !ok {
				return nil, nil, fmt.Errorf("%s: molecule %d (%s) is not in %s", name, line+1, s, ZincFile)
			}
			split[i] = k + 1
		}
	}
	return all, split, nil
}

// readSmilesFile reads the first field of each non-empty line (gzip'd when the
// name ends in .gz).
func readSmilesFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = zr
	}
	out, err := readSmilesLines(r, path)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no molecules", path)
	}
	return out, nil
}

// processAll handles every molecule on o.Workers goroutines, one molecule
// per task, reporting progress every 500 molecules and at the end. When
// o.Ctx is done it stops starting molecules and returns an error once the
// running ones are done.
func processAll(smiles []string, split []int, o BuildOptions) ([]result, error) {
	res := make([]result, len(smiles))
	k := 0
	err := parallel(o.Ctx, len(smiles), o.Workers, func(int) {
		if k++; o.Progress != nil && (k%500 == 0 || k == len(smiles)) {
			o.Progress(k, len(smiles))
		}
	}, func(i int) {
		res[i] = processOne(i, smiles[i], splitNames[split[i]], o.Candidates)
	})
	if err != nil {
		return nil, fmt.Errorf("interrupted after %d of %d molecules; nothing written (run again): %w", k, len(smiles), err)
	}
	return res, nil
}

// parallel runs f(0..n-1) on workers goroutines (0: all CPUs), one index per
// task, and calls done(i) on the calling goroutine as each index finishes.
// Once ctx is done no index starts; when some index was left out, parallel
// returns ctx's cause (the signal, for signal.NotifyContext) after the
// running ones finish: a molecule inside RDKit cannot be stopped, and the
// size limits (limits.go) bound how long that takes.
func parallel(ctx context.Context, n, workers int, done func(i int), f func(i int)) error {
	ctx = orBackground(ctx)
	jobs := make(chan int) // unbuffered: nothing queued runs after ctx is done
	w := workerCount(workers, n)
	finished := make(chan int, w)
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if ctx.Err() == nil {
					f(i)
					finished <- i
				}
			}
		}()
	}
	go func() {
		defer func() {
			close(jobs)
			wg.Wait()
			close(finished)
		}()
		for i := 0; i < n; i++ {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	k := 0
	for i := range finished {
		k++
		if done != nil {
			done(i)
		}
	}
	if k < n {
		return context.Cause(ctx)
	}
	return nil
}

// processOne canonicalises, scores and decomposes one molecule, and
// recovers its clusters' fragments: the featurisation's steps that can
// fail, but for the assembly (candidates), so that which molecules the
// data set holds does not wait for their featurisation (lazy.go).
func processOne(i int, smiles, split string, candidates bool) (r result) {
	fail := func(stage string, err error) result {
		r.fail = &Failure{Index: i, Split: split, Stage: stage, Smiles: smiles, Reason: err.Error()}
		return r
	}
	if err := checkSize(smiles); err != nil {
		return fail("size", err)
	}
	var err error
	if r.canonical, err = Standardize(smiles); err != nil {
		return fail("parse", err)
	}
	if r.score, err = Score(r.canonical); err != nil {
		return fail("score", err)
	}
	t, err := chem.Decompose(smiles)
	if err != nil {
		return fail("decompose", err)
	}
	defer t.Close()
	r.clusters = t.Vocabulary()
	// Featurise recovers every node's fragment as the decoder's assembly
	// needs it, and some molecules fail there (RDKit cannot kekulize a
	// fragment of a fused ring system): the 14 decomposed ZINC250K
	// training molecules that the full featurisation leaves out all fail
	// at this step (and one of the test split).
	if err := t.Recover(); err != nil {
		return fail("recover", err)
	}
	if candidates {
		if err := t.Assemble(); err != nil {
			return fail("assemble", err)
		}
	}
	return r
}

func summarise(smiles []string, split []int, res []result) *BuildReport {
	rep := &BuildReport{Total: len(smiles)}
	for i, s := range split {
		switch s {
		case splitTrain:
			rep.Train++
		case splitValid:
			rep.Valid++
		default:
			rep.Test++
		}
		if res[i].fail != nil {
			rep.Failures = append(rep.Failures, *res[i].fail)
		}
	}
	return rep
}

// ClusterArray is the molecules.npz array of each molecule's junction-tree
// clusters (their kekulé SMILES, space-separated; "" where decomposition
// failed): with it, optimize tells which molecules a vocabulary labels
// without featurising them (featurisation on demand).
const ClusterArray = "clusters"

// canonicalArray is the molecules.npz array of each molecule's canonical
// SMILES without stereo (Standardize; "" where it failed): the molecules'
// keys (keys.go).
const canonicalArray = "canonical"

// RecoveredArray is the molecules.npz scalar (true) that says data molecule
// recovered every decomposed molecule's fragments, so that its ok array
// already leaves out the molecules whose recovery fails: files without it
// (made by an earlier release) are featurised whole before a run.
const RecoveredArray = "recover_checked"

// writeData writes the data set: SMILES as in ZINC, canonical SMILES without
// stereo, penalised logP (FailureScore where it failed), split (0 train, 1
// valid, 2 test), whether every stage succeeded and the clusters.
func writeData(path string, smiles []string, split []int, res []result, extra ...numpy.Array) error {
	n := len(smiles)
	canon, score, sp, ok := make([]string, n), make([]float64, n), make([]int64, n), make([]bool, n)
	clusters := make([]string, n)
	for i, r := range res {
		canon[i], sp[i], ok[i] = r.canonical, int64(split[i]), r.fail == nil
		clusters[i] = strings.Join(r.clusters, " ")
		score[i] = r.score
		if r.canonical == "" || (r.fail != nil && r.fail.Stage == "score") {
			score[i] = FailureScore
		}
	}
	return numpy.WriteNPZ(path, append([]numpy.Array{
		{Name: "smiles", Shape: []int{n}, Data: smiles},
		{Name: canonicalArray, Shape: []int{n}, Data: canon},
		{Name: "score", Shape: []int{n}, Data: score},
		{Name: "split", Shape: []int{n}, Data: sp},
		{Name: "ok", Shape: []int{n}, Data: ok},
		{Name: ClusterArray, Shape: []int{n}, Data: clusters},
		{Name: RecoveredArray, Shape: []int{}, Data: []bool{true}},
	}, extra...))
}

// vocabularies builds the training vocabulary, compares it with the shipped
// one and the user's, and writes OutDir/vocab.txt.
func (rep *BuildReport) vocabularies(o BuildOptions, res []result, split []int, user Vocab) error {
	set := map[string]bool{}
	for i, r := range res {
		if split[i] == splitTrain {
			for _, c := range r.clusters {
				set[c] = true
			}
		}
	}
	for c := range set {
		rep.Vocab = append(rep.Vocab, c)
	}
	slices.Sort(rep.Vocab)
	if shipped, err := ReadVocab(filepath.Join(o.DataDir, ShippedVocab)); err == nil {
		rep.OnlyOurs, rep.OnlyShipped = VocabDiff(rep.Vocab, shipped)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	out := filepath.Join(o.OutDir, VocabFileName)
	if user == nil {
		return WriteVocab(out, rep.Vocab)
	}
	rep.MissingFromUser, _ = VocabDiff(rep.Vocab, user)
	missing := map[string]bool{}
	for _, c := range rep.MissingFromUser {
		missing[c] = true
	}
	for i, r := range res {
		if split[i] == splitTrain && slices.ContainsFunc(r.clusters, func(c string) bool { return missing[c] }) {
			rep.MoleculesMissingUser++
		}
	}
	return WriteVocab(out, user)
}

// write writes the human-readable report.
func (rep *BuildReport) write(path string) error {
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		fmt.Fprintf(bw, "molecules %d (train %d, valid %d, test %d)\n", rep.Total, rep.Train, rep.Valid, rep.Test)
		stages := map[string]int{}
		for _, f := range rep.Failures {
			stages[f.Stage]++
		}
		fmt.Fprintf(bw, "failed %d (size %d, parse %d, score %d, decompose %d, assemble %d)\n", len(rep.Failures),
			stages["size"], stages["parse"], stages["score"], stages["decompose"], stages["assemble"])
		fmt.Fprintf(bw, "vocabulary %d clusters; not in the shipped vocabulary %d; shipped but not made here %d\n",
			len(rep.Vocab), len(rep.OnlyOurs), len(rep.OnlyShipped))
		writeList(bw, "only in ours", rep.OnlyOurs)
		writeList(bw, "only in the shipped one", rep.OnlyShipped)
		if rep.MissingFromUser != nil {
			fmt.Fprintf(bw, "training clusters missing from the given vocabulary: %d (in %d training molecules)\n",
				len(rep.MissingFromUser), rep.MoleculesMissingUser)
			writeList(bw, "missing", rep.MissingFromUser)
		}
		for _, f := range rep.Failures {
			fmt.Fprintf(bw, "failure\t%d\t%s\t%s\t%s\t%s\n", f.Index, f.Split, f.Stage, f.Smiles, oneLine(f.Reason))
		}
		return bw.Flush()
	})
}

// oneLine keeps a reason on its report line: tabs and line breaks become blanks.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

func writeList(w io.Writer, title string, xs []string) {
	for _, x := range xs {
		fmt.Fprintf(w, "%s\t%s\n", title, x)
	}
}

// FindDataDir returns the data directory: dir when set, else $TLBO_DATA,
// else the first shared/data in the working directory or above it that
// holds ZincFile (task.FindDataDir).
func FindDataDir(dir string) (string, error) { return datadir.FindDir(dir, ZincFile) }
