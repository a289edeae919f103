package molecule

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// Vocab is a JT-VAE cluster vocabulary: kekulé cluster SMILES, one per line.
type Vocab []string

// ReadVocab reads a vocabulary file (one SMILES per line; blank lines ignored).
func ReadVocab(path string) (Vocab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	defer f.Close()
	var v Vocab
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if fs := strings.Fields(s); len(fs) != 1 {
			return nil, fmt.Errorf("vocabulary %s: line %d: want one SMILES, got %q", path, line, s)
		}
		if prev, dup := seen[s]; dup {
			return nil, fmt.Errorf("vocabulary %s: line %d: %q repeats line %d", path, line, s, prev)
		}
		seen[s] = line
		v = append(v, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", path, err)
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("vocabulary %s: empty", path)
	}
	return v, nil
}

// WriteVocab writes v sorted, one SMILES per line, atomically.
func WriteVocab(path string, v Vocab) error {
	s := slices.Clone(v)
	slices.Sort(s)
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, strings.Join(s, "\n")+"\n")
		return err
	})
}

// VocabDiff compares the clusters of ours with the vocabulary v as
// featurisation labels them (the same SMILES, else the same canonical
// SMILES): onlyOurs are the clusters v cannot label, onlyV the entries of v
// no cluster of ours is labelled with, each sorted. Two spellings of one
// ring (a kekulé SMILES against the one another RDKit wrote) are the same
// entry, as they are to the featuriser.
func VocabDiff(ours, v Vocab) (onlyOurs, onlyV []string) {
	f := NewFeaturiser(v)
	labelled := make([]bool, len(v))
	for _, c := range ours {
		if i, err := f.label(c); err == nil {
			labelled[i] = true
		} else {
			onlyOurs = append(onlyOurs, c)
		}
	}
	for i, s := range v {
		if !labelled[i] {
			onlyV = append(onlyV, s)
		}
	}
	slices.Sort(onlyOurs)
	slices.Sort(onlyV)
	return onlyOurs, onlyV
}
