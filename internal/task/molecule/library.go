package molecule

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// UserScoreArray is the array of molecules.npz that holds the scores of a
// library imported with its score column (ImportSmiles): the user's, which
// optimize --data-scores takes as a program objective's. The "score" array
// stays penalised logP, as for ZINC.
const UserScoreArray = "user_score"

// Library is a user's library of molecules (data molecule --smiles FILE).
type Library struct {
	Smiles []string
	// Scores are the file's score column, nil when it has none.
	Scores []float64
	// Lines are the 1-based line numbers of the molecules in the file.
	Lines []int
}

// ReadLibrary reads a library file: one molecule per non-blank line, its
// SMILES and optionally a score, separated by blanks or tabs; either every
// line has a score or none has. A line with more fields, a score that is
// not a finite number, or a score on some lines only is an error naming
// the file and the line.
func ReadLibrary(path string) (*Library, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", optSmiles, err)
	}
	defer f.Close()
	lib, err := readLibrary(f, path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", optSmiles, err)
	}
	return lib, nil
}

func readLibrary(r io.Reader, name string) (*Library, error) {
	lib := &Library{}
	scored, firstScored := false, 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		if len(fs) > 2 {
			return nil, fmt.Errorf("%s:%d: %d fields, want a SMILES and optionally a score (a SMILES has no blanks)", name, line, len(fs))
		}
		if len(lib.Smiles) == 0 {
			scored, firstScored = len(fs) == 2, line
		}
		switch {
		case scored && len(fs) == 1:
			return nil, fmt.Errorf("%s:%d: no score, but line %d has one (give every line a score or none)", name, line, firstScored)
		case !scored && len(fs) == 2:
			return nil, fmt.Errorf("%s:%d: a score, but line %d has none (give every line a score or none)", name, line, firstScored)
		}
		if scored {
			v, err := strconv.ParseFloat(fs[1], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s:%d: score %q is not a finite number", name, line, fs[1])
			}
			lib.Scores = append(lib.Scores, v)
		}
		lib.Smiles, lib.Lines = append(lib.Smiles, fs[0]), append(lib.Lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(lib.Smiles) == 0 {
		return nil, fmt.Errorf("%s: no molecules", name)
	}
	return lib, nil
}

// ImportSmiles makes a data set of a user's library (ReadLibrary) in
// o.OutDir as Build does for ZINC: molecules.npz (every molecule in the
// training split, penalised logP as "score", the file's scores as
// UserScoreArray), vocab.txt of its clusters and report.txt. Molecules
// RDKit or the junction tree cannot handle are kept out of training (as
// ZINC's) and reported with their lines.
func ImportSmiles(o BuildOptions, lib *Library) (*BuildReport, error) {
	if _, err := DefaultFragmentScores(); err != nil {
		return nil, err
	}
	var user Vocab
	if o.Vocab != "" {
		var err error
		if user, err = ReadVocab(o.Vocab); err != nil {
			return nil, err
		}
	}
	split := make([]int, len(lib.Smiles))
	res, err := processIn(o.OutDir, lib.Smiles, split, o)
	if err != nil {
		return nil, err
	}
	rep := summarise(lib.Smiles, split, res)
	for i := range rep.Failures {
		rep.Failures[i].Index = lib.Lines[rep.Failures[i].Index]
	}
	var extra []numpy.Array
	if lib.Scores != nil {
		extra = append(extra, numpy.Array{Name: UserScoreArray, Shape: []int{len(lib.Scores)}, Data: lib.Scores})
	}
	if err := writeData(filepath.Join(o.OutDir, DataFileName), lib.Smiles, split, res, extra...); err != nil {
		return nil, err
	}
	if err := rep.vocabularies(o, res, split, user); err != nil {
		return nil, err
	}
	return rep, rep.write(filepath.Join(o.OutDir, ReportFileName))
}

// importSmiles runs ImportSmiles on --smiles into dir.
func importSmiles(env *task.Env, dir string) error {
	if env.Opts.Int(optLimit) > 0 {
		return fmt.Errorf("--%s is for ZINC250K; cut your --%s file instead", optLimit, optSmiles)
	}
	path := env.Opts.String(optSmiles)
	lib, err := ReadLibrary(path)
	if err != nil {
		return err
	}
	o := BuildOptions{OutDir: dir, Vocab: env.Opts.String(optVocab), Candidates: env.Opts.Bool(optCands), Workers: env.Opts.Int(optWorkers),
		Ctx: env.Ctx}
	if data, err := FindDataDir(env.DataDir); err == nil {
		o.DataDir = data // the shipped vocabulary, compared in the report
	}
	if env.Progress != nil {
		o.Progress = func(done, total int) { env.Progress.Count("molecules", done, total) }
	}
	rep, err := ImportSmiles(o, lib)
	if err != nil {
		return err
	}
	if len(rep.Failures) == len(lib.Smiles) {
		f := rep.Failures[0]
		return fmt.Errorf("--%s: none of the %d molecules of %s can be used (line %d, %s: %s: %s)", optSmiles, len(lib.Smiles), path,
			f.Index, cut(f.Smiles), f.Stage, f.Reason)
	}
	scores := "no score column"
	if lib.Scores != nil {
		scores = "their scores in " + UserScoreArray + " (optimize --" + task.DataScoresOption + ")"
	}
	fmt.Fprintf(env.Stdout, "molecules %d from %s, %s; failed %d; vocabulary %d; see %s\n", len(lib.Smiles), path, scores,
		len(rep.Failures), len(rep.Vocab), filepath.Join(dir, ReportFileName))
	if len(rep.Failures) > 0 {
		f := rep.Failures[0]
		fmt.Fprintf(env.Stderr, "%s:%d: %s: %s: %s (kept out of training; %d such, report.txt lists them with their lines)\n",
			path, f.Index, cut(f.Smiles), f.Stage, f.Reason, len(rep.Failures))
	}
	return nil
}

// readUserScores returns the UserScoreArray of a molecules.npz for the
// molecules readTrainSplit returns, in its order.
func readUserScores(path string) ([]float64, error) {
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	f := map[string]any{}
	for _, a := range arrays {
		f[a.Name] = a.Data
	}
	user, ok := f[UserScoreArray].([]float64)
	if !ok {
		return nil, fmt.Errorf("--%s: %s has no scores of yours (import your library with its score column: data molecule --%s FILE)",
			task.DataScoresOption, path, optSmiles)
	}
	split, _ := f["split"].([]int64)
	good, _ := f["ok"].([]bool)
	if len(split) != len(user) || len(good) != len(user) {
		return nil, errors.New(path + ": arrays of different lengths")
	}
	var y []float64
	for i := range user {
		if split[i] == splitTrain && good[i] {
			y = append(y, user[i])
		}
	}
	return y, nil
}
