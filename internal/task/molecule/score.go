package molecule

import (
	"errors"
	"fmt"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// FailureScore is the score of a molecule that cannot be scored (the authors'
// --invalid_score default; their GP also clips targets from below at it).
const FailureScore = -4.0

// The normalisation constants of penalised logP (means and standard deviations
// of the three terms over ZINC250K, as published).
const (
	logPMean, logPStd   = 2.45777691, 1.43341767
	saMean, saStd       = 3.05352042, 0.83460587
	cycleMean, cycleStd = 0.04861121, 0.28746695
)

// Terms are the three parts of penalised logP.
type Terms struct {
	LogP, SA, Cycle float64
}

// Penalized combines the terms.
func (t Terms) Penalized() float64 {
	return (t.LogP-logPMean)/logPStd + (-t.SA+saMean)/saStd + (-t.Cycle+cycleMean)/cycleStd
}

// Score is penalised logP of a SMILES string, parsed as given.
func Score(smiles string) (float64, error) {
	t, err := ScoreTerms(smiles)
	if err != nil {
		return FailureScore, err
	}
	return t.Penalized(), nil
}

// ScoreTerms parses smiles and returns the terms of its penalised logP.
func ScoreTerms(smiles string) (Terms, error) {
	fs, err := DefaultFragmentScores()
	if err != nil {
		return Terms{}, err
	}
	if smiles == "" {
		return Terms{}, errors.New("empty SMILES")
	}
	m, err := chem.Smiles(smiles)
	if err != nil {
		return Terms{}, err
	}
	defer m.Close()
	return fs.Terms(m)
}

// Terms returns the terms of penalised logP of a sanitised molecule (in the
// Python's order: the SA score perceives stereo on m).
func (fs FragmentScores) Terms(m *chem.Mol) (Terms, error) {
	if m.NumAtoms() == 0 {
		return Terms{}, errors.New("molecule has no atoms")
	}
	logp, err := m.CrippenLogP()
	if err != nil {
		return Terms{}, err
	}
	sa, err := fs.SAScore(m)
	if err != nil {
		return Terms{}, err
	}
	cycle, err := CycleTerm(m)
	if err != nil {
		return Terms{}, err
	}
	return Terms{LogP: logp, SA: sa, Cycle: cycle}, nil
}

// CycleTerm is max(0, L - 6) for the longest cycle L of networkx's fundamental
// cycle basis of the atom graph.
func CycleTerm(m *chem.Mol) (float64, error) {
	adj, err := m.Neighbours()
	if err != nil {
		return 0, fmt.Errorf("cycle term: %w", err)
	}
	longest := 0
	for _, c := range chem.CycleBasis(adj) {
		longest = max(longest, len(c))
	}
	return float64(max(0, longest-6)), nil
}

// Standardize returns the canonical SMILES without stereo of a sanitised
// parse of smiles (the authors' standardize_smiles).
func Standardize(smiles string) (string, error) {
	if smiles == "" {
		return "", errors.New("empty SMILES")
	}
	m, err := chem.Smiles(smiles)
	if err != nil {
		return "", err
	}
	defer m.Close()
	if err := m.Sanitize(); err != nil {
		return "", err
	}
	return m.SmilesWith(chem.SmilesOptions{Canonical: true})
}
