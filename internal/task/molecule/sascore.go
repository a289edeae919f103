package molecule

import (
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// FragmentScoresPath is where Debian's rdkit-data installs the SA score's fragment table.
const FragmentScoresPath = "/usr/share/RDKit/Contrib/SA_Score/fpscores.pkl.gz"

// FragmentScores maps Morgan environment ids to their SA fragment contribution.
type FragmentScores map[uint32]float64

// ReadFragmentScores reads the gzip'd pickle of the SA score: a list of
// [score, id, id, ...] lists; a later list overrides an earlier one for the same id.
func ReadFragmentScores(path string) (FragmentScores, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("SA fragment scores: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("SA fragment scores %s: %w", path, err)
	}
	u := pickle.NewUnpickler(zr)
	v, err := u.Load()
	if err != nil {
		return nil, fmt.Errorf("SA fragment scores %s: %w", path, err)
	}
	rows, ok := v.(*types.List)
	if !ok {
		return nil, fmt.Errorf("SA fragment scores %s: top level is %T, want a list", path, v)
	}
	out := FragmentScores{}
	for i := 0; i < rows.Len(); i++ {
		if err := out.addRow(rows.Get(i)); err != nil {
			return nil, fmt.Errorf("SA fragment scores %s: row %d: %w", path, i, err)
		}
	}
	return out, nil
}

func (fs FragmentScores) addRow(v any) error {
	row, ok := v.(*types.List)
	if !ok || row.Len() < 1 {
		return fmt.Errorf("not a non-empty list (%T)", v)
	}
	score, err := number(row.Get(0))
	if err != nil {
		return fmt.Errorf("score: %w", err)
	}
	for j := 1; j < row.Len(); j++ {
		id, err := number(row.Get(j))
		if err != nil || id < 0 || id > math.MaxUint32 || id != math.Trunc(id) {
			return fmt.Errorf("fragment id %d: not a uint32 (%v)", j, row.Get(j))
		}
		fs[uint32(id)] = score
	}
	return nil
}

func number(v any) (float64, error) {
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("not a number (%T)", v)
}

var (
	defaultScoresOnce sync.Once
	defaultScores     FragmentScores
	defaultScoresErr  error
)

// FragmentScoresEnv names the environment variable that gives another copy of
// the fragment table, for a machine without Debian's rdkit-data (a GPU machine
// that runs a carried binary, say).
const FragmentScoresEnv = "TLBO_SA_FRAGMENTS"

// DefaultFragmentScores reads the fragment table once: $TLBO_SA_FRAGMENTS when
// set, else FragmentScoresPath.
func DefaultFragmentScores() (FragmentScores, error) {
	defaultScoresOnce.Do(func() { defaultScores, defaultScoresErr = readDefaultFragmentScores() })
	return defaultScores, defaultScoresErr
}

func readDefaultFragmentScores() (FragmentScores, error) {
	if p := os.Getenv(FragmentScoresEnv); p != "" {
		fs, err := ReadFragmentScores(p)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", FragmentScoresEnv, err)
		}
		return fs, nil
	}
	fs, err := ReadFragmentScores(FragmentScoresPath)
	if err != nil {
		return nil, fmt.Errorf("%w (Debian's rdkit-data installs it; $%s names another copy)", err, FragmentScoresEnv)
	}
	return fs, nil
}

// SAScore is RDKit Contrib's sascorer.calculateScore: fragment score, complexity
// penalties (size, stereo centres incl. unassigned, spiro, bridgehead, macrocycles)
// and the fingerprint-density correction, mapped to [1, 10]. It runs RDKit's
// stereo perception on m (as the Python does).
func (fs FragmentScores) SAScore(m *chem.Mol) (float64, error) {
	ids, counts, err := m.MorganCounts(2)
	if err != nil {
		return 0, err
	}
	score1, nf := 0.0, 0
	for i, id := range ids {
		nf += counts[i]
		s, ok := fs[id]
		if !ok {
			s = -4
		}
		score1 += s * float64(counts[i])
	}
	if nf == 0 {
		return 0, fmt.Errorf("SA score: empty fingerprint")
	}
	score1 /= float64(nf)
	score2, err := complexityPenalty(m)
	if err != nil {
		return 0, err
	}
	nAtoms := m.NumAtoms()
	score3 := 0.0
	if nAtoms > len(ids) {
		score3 = math.Log(float64(nAtoms)/float64(len(ids))) * .5
	}
	return scaleSA(score1 + score2 + score3), nil
}

// complexityPenalty is score2 of sascorer.py (0 minus the penalties).
func complexityPenalty(m *chem.Mol) (float64, error) {
	nAtoms := float64(m.NumAtoms())
	nChiral, err := m.AssignStereo(false, true, true)
	if err != nil {
		return 0, err
	}
	rings, err := m.AtomRings()
	if err != nil {
		return 0, err
	}
	nSpiro, nBridge, err := m.SpiroBridgehead()
	if err != nil {
		return 0, err
	}
	macro := 0.0
	for _, r := range rings {
		if len(r) > 8 {
			macro = math.Log10(2)
			break
		}
	}
	size := math.Pow(nAtoms, 1.005) - nAtoms
	return 0 - size - math.Log10(float64(nChiral)+1) - math.Log10(float64(nSpiro)+1) -
		math.Log10(float64(nBridge)+1) - macro, nil
}

// scaleSA maps the raw score to sascorer.py's 1..10 scale.
func scaleSA(raw float64) float64 {
	const lo, hi = -4.0, 2.5
	s := 11. - (raw-lo+1)/(hi-lo)*9.
	if s > 8. {
		s = 8. + math.Log(s+1.-9.)
	}
	if s > 10. {
		return 10.0
	}
	if s < 1. {
		return 1.0
	}
	return s
}
