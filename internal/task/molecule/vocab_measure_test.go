package molecule

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// TestVocabCoverage counts how many of the first $TLBO_VOCAB_COVERAGE
// molecules of the ZINC split have every junction-tree cluster in the
// shipped vocabulary, by kekulé SMILES alone and as NewFeaturiser labels
// them (kekulé, else canonical SMILES), and which clusters are missing. Skipped unless
// the variable is set:
//
//	TLBO_VOCAB_COVERAGE=10000 nice go test ./internal/task/molecule -run TestVocabCoverage -v
func TestVocabCoverage(t *testing.T) {
	v, smiles := measureMolecules(t, "TLBO_VOCAB_COVERAGE", "measure the vocabulary's coverage of N molecules")
	exact := map[string]bool{}
	for _, s := range v {
		exact[s] = true
	}
	f := NewFeaturiser(v)
	var exactOK, aliasOK, decompose int
	missing := map[string]int{}
	for _, s := range smiles {
		tr, err := chem.Decompose(s)
		if err != nil {
			decompose++
			continue
		}
		inExact, inAliased := true, true
		for _, nd := range tr.Nodes {
			inExact = inExact && exact[nd.Smiles]
			if _, err := f.label(nd.Smiles); err != nil {
				inAliased = false
				missing[nd.Smiles]++
			}
		}
		tr.Close()
		if inExact {
			exactOK++
		}
		if inAliased {
			aliasOK++
		}
	}
	t.Logf("%d molecules: %d fail to decompose; all clusters in the vocabulary: %d by kekulé SMILES, %d by kekulé or canonical SMILES",
		len(smiles), decompose, exactOK, aliasOK)
	var worst []string
	for s, k := range missing {
		worst = append(worst, s+" "+strconv.Itoa(k))
	}
	t.Logf("clusters still outside the vocabulary (%d): %s", len(missing), strings.Join(worst, ", "))
}
