package molecule

import (
	"fmt"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// The size limits of a molecule, checked before any costly work on it (the
// data set's import, molecule tree, featurisation). RDKit cannot be stopped
// inside a call, and its sanitisation, canonical SMILES and stereo perception
// cost about the cube of the atoms (the import's stages take 0.06 CPU seconds
// for a chain of 200 carbons, 0.3 for 400, 2.1 for 800, 18 for 1,600), so the
// limits are what bounds the time of one molecule, and so how soon a
// batch stops on SIGTERM. They are sizes, not a clock, so a molecule is
// accepted or refused alike on every machine.
const (
	// MaxHeavyAtoms bounds the atoms other than hydrogen, and the hydrogens
	// with an isotope (which sanitisation keeps as atoms, where it folds
	// plain ones into their neighbours): five times ZINC250K's largest
	// molecule (38 heavy atoms of its 249,455 molecules), beyond any tree
	// JT-VAE's decoder builds (MAX_DECODE_LEN's 100 steps make at most 51
	// nodes), and far from the 1,000 nodes whose numbers RDKit's atom map
	// numbers cannot hold. The costliest molecule of 200 atoms we found (a
	// fused grid of 4-rings) takes 0.1 CPU seconds to import and 3 to
	// enumerate its attachment candidates.
	MaxHeavyAtoms = 200
	// MaxSmilesLength bounds the SMILES before it is parsed: 20 characters
	// a heavy atom, more than a SMILES of MaxHeavyAtoms needs when it writes
	// every atom in brackets with isotope, charge, stereo and a ring bond
	// ("[13CH2+]%12" is 11); ZINC250K's longest is 109.
	MaxSmilesLength = 20 * MaxHeavyAtoms
)

// quote quotes a SMILES for a message, cut to its first 200 characters: a
// refused one may be thousands long.
func quote(smiles string) string {
	if len(smiles) > 200 {
		return fmt.Sprintf("%q... (%d characters)", smiles[:200], len(smiles))
	}
	return fmt.Sprintf("%q", smiles)
}

// cut is quote without the quotes.
func cut(smiles string) string {
	if len(smiles) > 200 {
		return fmt.Sprintf("%s... (%d characters)", smiles[:200], len(smiles))
	}
	return smiles
}

// checkSize refuses a SMILES longer than MaxSmilesLength, then parses it
// without sanitisation (linear in its length) and refuses more than
// MaxHeavyAtoms heavy atoms and isotope-labelled hydrogens. A SMILES that
// does not parse is left to the stage that parses it, which says why.
func checkSize(smiles string) error {
	if len(smiles) > MaxSmilesLength {
		return fmt.Errorf("SMILES of %d characters, more than the %d allowed (a molecule of at most %d heavy atoms)",
			len(smiles), MaxSmilesLength, MaxHeavyAtoms)
	}
	m, err := chem.FromSmiles(smiles, false)
	if err != nil {
		return nil
	}
	defer m.Close()
	atoms, err := m.Atoms()
	if err != nil {
		return err
	}
	heavy, labelled := 0, 0
	for _, a := range atoms {
		switch {
		case a.AtomicNum != 1:
			heavy++
		case a.Isotope != 0:
			labelled++
		}
	}
	switch {
	case heavy > MaxHeavyAtoms:
		return fmt.Errorf("%d heavy atoms, more than the %d allowed", heavy, MaxHeavyAtoms)
	case heavy+labelled > MaxHeavyAtoms:
		return fmt.Errorf("%d heavy atoms and %d isotope-labelled hydrogens, more than the %d atoms allowed", heavy, labelled, MaxHeavyAtoms)
	}
	return nil
}
