package molecule

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// DiversityBits and DiversityRadius are the Morgan bit fingerprint of
// Diversity: RDKit's GetMorganFingerprintAsBitVect(mol, 2, nBits=2048).
const (
	DiversityBits   = 2048
	DiversityRadius = 2
)

// Diversity is the internal diversity of a set of molecules as TDC's
// evaluator computes it (tdc.Evaluator("diversity"), which the PMO benchmark
// reports for its top molecules): over the distinct SMILES strings, one
// minus the mean Tanimoto similarity of every distinct pair's Morgan bit
// fingerprints (radius 2, 2048 bits, no chirality). The bit fingerprint is
// the count fingerprint's environment ids folded modulo 2048, as RDKit's
// GetMorganFingerprintAsBitVect sets them (testdata/pmo checks it against
// RDKit's Python). Fewer than two distinct molecules, or one that cannot be
// parsed, is an error.
func Diversity(smiles []string) (float64, error) {
	uniq := slices.Clone(smiles)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	if len(uniq) < 2 {
		return 0, fmt.Errorf("diversity of %d distinct molecules: want at least 2", len(uniq))
	}
	fps := make([][DiversityBits / 64]uint64, len(uniq))
	for i, s := range uniq {
		fp, err := morganBits(s)
		if err != nil {
			return 0, fmt.Errorf("diversity: %q: %w", s, err)
		}
		fps[i] = fp
	}
	sum, pairs := 0.0, 0
	for i := range fps {
		for j := i + 1; j < len(fps); j++ {
			sum += tanimotoBits(&fps[i], &fps[j])
			pairs++
		}
	}
	return 1 - sum/float64(pairs), nil
}

// morganBits is RDKit's GetMorganFingerprintAsBitVect(mol, 2, nBits=2048).
func morganBits(smiles string) ([DiversityBits / 64]uint64, error) {
	var fp [DiversityBits / 64]uint64
	if smiles == "" {
		return fp, errors.New("empty SMILES")
	}
	m, err := chem.Smiles(smiles)
	if err != nil {
		return fp, err
	}
	defer m.Close()
	c, err := m.Morgan(DiversityRadius, chem.MorganOptions{})
	if err != nil {
		return fp, err
	}
	for _, id := range c.IDs {
		b := id % DiversityBits
		fp[b/64] |= 1 << (b % 64)
	}
	return fp, nil
}

// tanimotoBits is RDKit's TanimotoSimilarity of two bit vectors: common
// bits over bits set in either (1 when neither has any, as RDKit).
func tanimotoBits(a, b *[DiversityBits / 64]uint64) float64 {
	both, either := 0, 0
	for k := range a {
		both += bits.OnesCount64(a[k] & b[k])
		either += bits.OnesCount64(a[k] | b[k])
	}
	if either == 0 {
		return 1
	}
	return float64(both) / float64(either)
}
