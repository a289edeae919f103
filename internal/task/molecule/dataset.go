package molecule

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/task"
)

// dataset returns the training split of `data molecule`'s file (molecules
// every stage handled), or with --synthetic-data and no file the built-in
// sample, labelled by --objective: penalised logP from the file's scores
// (the sample's scored here), another objective's scores computed once and
// cached (objectiveScores). With --initial N (optimize), only N molecules
// drawn with the seed and scored with the objective (initialMolecules).
func (b *binding) dataset(env *task.Env) ([]string, []float64, string, error) {
	obj, err := ParseObjective(env.Opts.String(optObjective))
	if err != nil {
		return nil, nil, "", err
	}
	path := env.Opts.String(optMolecules)
	if path == "" {
		if dir, err := FindDataDir(env.DataDir); err == nil {
			path = filepath.Join(dir, DataFileName)
		}
	}
	if path != "" {
		split, err := readTrainSplit(path)
		if err == nil || !errors.Is(err, os.ErrNotExist) || !env.Synthetic {
			smiles, scores := split.smiles, split.scores
			fileScores := env.Opts.Bool(task.DataScoresOption)
			switch {
			case errors.Is(err, os.ErrNotExist):
				return nil, nil, "", fmt.Errorf("%w (write it with `data molecule --out DIR` and give --%s DIR/%s)", err, optMolecules, DataFileName)
			case err != nil:
				return nil, nil, "", err
			case env.Opts.Int(optInitial) > 0 && !fileScores:
				return b.initialMolecules(env, obj, smiles, scores, fmt.Sprintf("%s, training split of %d", path, len(smiles)))
			}
			if err := b.keys.take(env.Context(), smiles, split.canonical, env.Opts.Int(optWorkers), env.Stderr); err != nil {
				return nil, nil, "", err
			}
			switch {
			case fileScores:
				if scores, err = readUserScores(path); err != nil {
					return nil, nil, "", err
				}
			case obj.f != nil:
				if scores, err = objectiveScores(env, obj, path, smiles); err != nil {
					return nil, nil, "", err
				}
			}
			if smiles, scores, err = b.useCache(env, path, smiles, scores, split.clusters); err != nil {
				return nil, nil, "", err
			}
			source := fmt.Sprintf("%s, training split of %d", path, len(smiles))
			if fileScores {
				return smiles, scores, source + ", the file's own scores", nil
			}
			return smiles, scores, source + scoredBy(obj), nil
		}
	} else if !env.Synthetic {
		return nil, nil, "", fmt.Errorf("molecule data set: give --%s (a file of `data molecule`) or --data-dir", optMolecules)
	}
	if env.Opts.Bool(task.DataScoresOption) {
		return nil, nil, "", fmt.Errorf("--%s: the built-in sample has no scores of yours (import your library with data molecule --%s FILE)",
			task.DataScoresOption, optSmiles)
	}
	source := fmt.Sprintf("synthetic: %d built-in ZINC molecules", len(sampleSmiles))
	scores := make([]float64, len(sampleSmiles))
	for i, s := range sampleSmiles {
		scores[i], _ = Score(s) // FailureScore on error
	}
	if env.Opts.Int(optInitial) > 0 {
		return b.initialMolecules(env, obj, slices.Clone(sampleSmiles), scores, source)
	}
	if obj.f != nil {
		scores = scoreAll(env.Context(), obj, sampleSmiles, env.Opts.Int(optWorkers), nil)
	}
	return slices.Clone(sampleSmiles), scores, source + scoredBy(obj), nil
}

// scoredBy is what a data set's source adds for an objective other than
// penalised logP, whose sources stay as they were before --objective.
func scoredBy(obj Objective) string {
	if obj.f == nil {
		return ""
	}
	return ", scored by " + obj.Name()
}

// trainSplit is the training split of a molecules.npz of Build.
type trainSplit struct {
	smiles []string
	scores []float64
	// clusters is nil when the file has no ClusterArray, or no
	// RecoveredArray (its ok array may then hold molecules that only a
	// featurisation finds wanting).
	clusters []string
	// canonical holds each molecule's canonical SMILES without stereo
	// (Standardize, made by Build), nil when the file has none.
	canonical []string
}

// readTrainSplit reads the training split's SMILES, scores, clusters and
// canonical SMILES from a molecules.npz of Build.
func readTrainSplit(path string) (trainSplit, error) {
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return trainSplit{}, err
	}
	f := map[string]any{}
	for _, a := range arrays {
		f[a.Name] = a.Data
	}
	smiles, ok1 := f["smiles"].([]string)
	score, ok2 := f["score"].([]float64)
	split, ok3 := f["split"].([]int64)
	good, ok4 := f["ok"].([]bool)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return trainSplit{}, fmt.Errorf("%s: want arrays smiles (str), score (float64), split (int64), ok (bool)", path)
	}
	n := len(smiles)
	if len(score) != n || len(split) != n || len(good) != n {
		return trainSplit{}, fmt.Errorf("%s: arrays of %d, %d, %d, %d entries", path, n, len(score), len(split), len(good))
	}
	clusters, hasClusters := f[ClusterArray].([]string)
	if _, there := f[ClusterArray]; there && (!hasClusters || len(clusters) != n) {
		return trainSplit{}, fmt.Errorf("%s: array %s: want %d strings", path, ClusterArray, n)
	}
	if _, checked := f[RecoveredArray]; !checked {
		hasClusters = false
	}
	canonical, hasCanonical := f[canonicalArray].([]string)
	if _, there := f[canonicalArray]; there && (!hasCanonical || len(canonical) != n) {
		return trainSplit{}, fmt.Errorf("%s: array %s: want %d strings", path, canonicalArray, n)
	}
	var t trainSplit
	for i := range smiles {
		if split[i] == splitTrain && good[i] {
			t.smiles, t.scores = append(t.smiles, smiles[i]), append(t.scores, score[i])
			if hasClusters {
				t.clusters = append(t.clusters, clusters[i])
			}
			if hasCanonical {
				t.canonical = append(t.canonical, canonical[i])
			}
		}
	}
	if len(t.smiles) == 0 {
		return trainSplit{}, fmt.Errorf("%s: no usable training molecule", path)
	}
	return t, nil
}

// buildData runs Build into dir with the task's options (ImportSmiles
// with --smiles).
func buildData(env *task.Env, dir string) error {
	chem.SetLogging(env.Opts.Bool(optRDKitLog))
	if env.Opts.String(optSmiles) != "" {
		return importSmiles(env, dir)
	}
	data, err := FindDataDir(env.DataDir)
	if err != nil {
		return err
	}
	o := BuildOptions{DataDir: data, OutDir: dir, Vocab: env.Opts.String(optVocab), Candidates: env.Opts.Bool(optCands),
		Workers: env.Opts.Int(optWorkers), Limit: env.Opts.Int(optLimit), Ctx: env.Ctx}
	if env.Progress != nil {
		o.Progress = func(done, total int) { env.Progress.Count("molecules", done, total) }
	}
	rep, err := Build(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "molecules %d, failed %d, vocabulary %d (not in the shipped one %d, shipped but not made %d); see %s\n",
		rep.Total, len(rep.Failures), len(rep.Vocab), len(rep.OnlyOurs), len(rep.OnlyShipped), filepath.Join(dir, ReportFileName))
	return nil
}

// ReadSmiles reads a text file of molecules, the first field of each
// non-blank line (so that "SMILES score" lines work too).
func ReadSmiles(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSmilesLines(f, path)
}

func readSmilesLines(r io.Reader, name string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 0 {
			out = append(out, fs[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

// sampleSmiles are 32 molecules of ZINC250K's JT-VAE test split (those of
// testdata/jtvae/bench32.npz): the data set of --synthetic-data.
var sampleSmiles = []string{
	"O=[N+]([O-])c1c(Nc2ccc(F)c(F)c2)ncnc1Oc1cccc2cccnc12",
	"Cc1ccc([C@@H](C)NC(=O)N[C@@H](CCO)c2cccs2)cc1",
	"CCN(CC)S(=O)(=O)c1ccc2nc(-c3ccncc3)cc(C(=O)[O-])c2c1",
	"CCCN(CC)c1cc[nH+]c(C(=O)[O-])c1",
	"Cc1ccccc1N1C(=O)C[C@H]([NH+](C2CCCCC2)C2CCCCC2)C1=O",
	"CS(=O)(=O)[C@H]1O[C@H]1c1ccc(Cl)cc1Cl",
	"C[C@H](CSc1ccc(C(=O)N(C)C)cn1)C(=O)[O-]",
	"CCOC(=O)[C@H]1C=C(C#N)O[C@@H](c2ccc(C)cc2)C1",
	"CCC[NH2+]C1CCC(O)(Cc2nc(C)cs2)CC1",
	"O=C1c2ccccc2N[C@H](CSC2=NC=NC3=NC=N[C@@H]32)N1c1ccc(Cl)cc1",
	"CCc1nc2ccccc2c(C(=O)NCc2ccc(OC)c(C(=O)OC)c2)c1C",
	"Cc1nnccc1C(=O)N[C@H](C)c1ccc(Cl)s1",
	"O=C(NCCCc1nc(-c2ccc(Br)o2)no1)C1CC1",
	"CCOc1cccc(NC(=O)CCc2ccc(N)cc2)c1",
	"COc1ccc(/C=C2/SC(=O)N(CC(=O)Nc3ccc(F)cc3)C2=O)cc1OC",
	"CC(C)N(C)C(=O)[C@H]1CSCN1C(=O)/C=C/SCc1ccco1",
	"CCC1(CC)[C@@H](NC(=O)Nc2ccc(C(=O)NC)cc2)[C@H](C)[C@@H]1OC",
	"N#Cc1ccnc(N2CCC([NH2+]C[C@@H]3CCCO3)CC2)c1",
	"O=C(Cn1nnn(-c2cccs2)c1=O)OC1CCCCC1",
	"COc1cccc(COc2ccc(OC)cc2CCl)c1",
	"CC[C@H](NC(=O)NCc1c(C)noc1C)c1ccc(OC)cc1",
	"COc1ccc(C(=O)/C=C(\\C)Nc2ccc(F)cc2F)cc1",
	"O=C(C=C1CCSCC1)N[C@@H]1CCC[C@H]1Cc1ccccc1",
	"Cc1cccc(C(=O)N[C@@H](C(=O)N2CCC[C@@H](C)C2)C(C)C)c1",
	"COC(=O)[C@@H](C)Sc1nnc(Nc2cccc(Br)c2)s1",
	"Cc1cnc(C(=O)Nc2ccc(N(C)C3CC[NH+](C)CC3)cc2)cn1",
	"CC(=O)Nc1nc2ccc(NC(=O)NCc3ccccc3)cc2s1",
	"C=CCN1C(=O)/C(=C/c2ccccc2F)S/C1=N\\S(=O)(=O)c1cccs1",
	"CC[C@H]1CC(=O)N(Cc2ccccc2C#CCCO)C1",
	"COc1ccc(F)cc1C(=O)Nc1nccs1",
	"CC[C@@H](CC(=O)NC1(C(=O)OC)CCSCC1)c1ccccc1",
	"Cc1ccc(C)c(-n2c(SCCCCCO)nc3ccccc3c2=O)c1",
}

// SampleSmiles returns the 32 built-in ZINC molecules (those of
// testdata/jtvae/bench32.npz, which the authors' step is timed on).
func SampleSmiles() []string { return slices.Clone(sampleSmiles) }
