package expression

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// Keys of the data set's npz files.
const (
	// KeyData holds the N x MaxRules x NumProductions float32 one-hot matrices.
	KeyData = "data"
	// KeyScores holds the N float64 scores.
	KeyScores = "scores"
	// KeyExpr holds the N expressions as a numpy unicode array ('<U..').
	KeyExpr = "expr"
)

// OneHot returns the one-hot matrices of all expressions, N x MaxRules x NumProductions
// row-major.
func (d *Dataset) OneHot() ([]float32, error) {
	const size = MaxRules * NumProductions
	out := make([]float32, len(d.Exprs)*size)
	errs := make([]error, len(d.Exprs))
	parallelFor(len(d.Exprs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			rules, err := Parse(d.Exprs[i])
			if err == nil {
				_, err = OneHot(rules, out[i*size:(i+1)*size])
			}
			errs[i] = err
		}
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("data set entry %d: %w", i, err)
		}
	}
	return out, nil
}

// Select returns the data set restricted to the given indices, in their order.
func (d *Dataset) Select(idx []int) *Dataset {
	s := &Dataset{Target: d.Target, Source: d.Source, Exprs: make([]string, len(idx)), Scores: make([]float64, len(idx))}
	for i, j := range idx {
		s.Exprs[i], s.Scores[i] = d.Exprs[j], d.Scores[j]
	}
	return s
}

// WriteNPZ writes the data set to path atomically with the keys data (one-hot, float32
// N x 15 x 12), scores (float64) and expr (a numpy unicode array, which numpy.load reads
// without allow_pickle).
func WriteNPZ(path string, d *Dataset) error {
	if len(d.Scores) != len(d.Exprs) {
		return fmt.Errorf("write %s: %d scores for %d expressions", path, len(d.Scores), len(d.Exprs))
	}
	flat, err := d.OneHot()
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return numpy.WriteNPZ(path, []numpy.Array{
		{Name: KeyData, Shape: []int{len(d.Exprs), MaxRules, NumProductions}, Data: flat},
		{Name: KeyScores, Shape: []int{len(d.Scores)}, Data: d.Scores},
		{Name: KeyExpr, Shape: []int{len(d.Exprs)}, Data: d.Exprs},
	})
}

// ReadNPZ reads a data set written by WriteNPZ, checking shapes and that each one-hot
// matrix encodes its expression; it returns the data set and its one-hot matrices.
func ReadNPZ(path string) (*Dataset, []float32, error) {
	arrays, err := numpy.ReadNPZ(path)
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]numpy.Array{}
	for _, a := range arrays {
		byName[a.Name] = a
	}
	for _, k := range []string{KeyData, KeyScores, KeyExpr} {
		if _, ok := byName[k]; !ok {
			return nil, nil, fmt.Errorf("%s: missing key %q", path, k)
		}
	}
	data, scores, exprs := byName[KeyData], byName[KeyScores], byName[KeyExpr]
	onehot, ok := data.Data.([]float32)
	if s := data.Shape; !ok || len(s) != 3 || s[1] != MaxRules || s[2] != NumProductions {
		return nil, nil, fmt.Errorf("%s: %s is %T of shape %v, want float32 (N, %d, %d)", path, KeyData, data.Data, s, MaxRules, NumProductions)
	}
	d := &Dataset{Source: "file " + filepath.Clean(path)}
	if d.Scores, ok = scores.Data.([]float64); !ok {
		return nil, nil, fmt.Errorf("%s: %s is %T, want float64", path, KeyScores, scores.Data)
	}
	if d.Exprs, ok = exprs.Data.([]string); !ok {
		return nil, nil, fmt.Errorf("%s: %s is %T, want strings", path, KeyExpr, exprs.Data)
	}
	n := data.Shape[0]
	if len(d.Scores) != n || len(d.Exprs) != n {
		return nil, nil, fmt.Errorf("%s: %d one-hot matrices, %d scores, %d expressions", path, n, len(d.Scores), len(d.Exprs))
	}
	if err := checkOneHot(d.Exprs, onehot); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, onehot, nil
}

// checkOneHot verifies that each one-hot matrix is the encoding of its expression.
func checkOneHot(exprs []string, onehot []float32) error {
	const size = MaxRules * NumProductions
	for i, e := range exprs {
		rules, err := RulesFromOneHot(onehot[i*size : (i+1)*size])
		if err != nil {
			return fmt.Errorf("%s entry %d: %w", KeyData, i, err)
		}
		want, err := Parse(e)
		if err != nil {
			return fmt.Errorf("%s entry %d: %w", KeyExpr, i, err)
		}
		if !slices.Equal(rules, want) {
			return fmt.Errorf("entry %d: one-hot matrix does not encode %q", i, e)
		}
	}
	return nil
}

// WriteDataNPZ writes the full data set to dir/expression_full.npz and its training
// subset (see Subset, seeded) to dir/expression_subset.npz, creating dir, and returns
// the two paths.
func WriteDataNPZ(dir string, d *Dataset, seed uint32) (full, subset string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	full = filepath.Join(dir, "expression_full.npz")
	subset = filepath.Join(dir, "expression_subset.npz")
	if err := WriteNPZ(full, d); err != nil {
		return "", "", err
	}
	if err := WriteNPZ(subset, d.Select(Subset(d.Scores, seed))); err != nil {
		return "", "", err
	}
	return full, subset, nil
}
