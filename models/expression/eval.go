package expression

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Rules reads the rule sequences of n one-hot matrices x (n x T x P,
// row-major), taking the largest entry of each row and dropping the padding
// production.
func (m *Model) Rules(x []float32) ([][]int, error) {
	p := m.cfg.Grammar.numProductions()
	size := m.cfg.MaxLen * p
	if len(x) == 0 || len(x)%size != 0 {
		return nil, fmt.Errorf("grammar VAE: %d values are not whole %dx%d one-hot matrices", len(x), m.cfg.MaxLen, p)
	}
	pad := m.cfg.Grammar.PaddingProduction()
	out := make([][]int, len(x)/size)
	for i := range out {
		var rules []int
		for t := range m.cfg.MaxLen {
			row := x[i*size+t*p : i*size+(t+1)*p]
			if r := argmax(row); r != pad {
				rules = append(rules, r)
			}
		}
		out[i] = rules
	}
	return out, nil
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// ReconstructionAccuracy returns the share of the n one-hot matrices x whose
// encoder mean decodes (see Decode: attempts samples, or greedily when 0) to
// exactly their rule sequence.
func (m *Model) ReconstructionAccuracy(x []float32, attempts int, rng *rand.Rand) (float64, error) {
	want, err := m.Rules(x)
	if err != nil {
		return 0, err
	}
	means, err := m.EncodeMeans(x)
	if err != nil {
		return 0, err
	}
	got, err := m.Decode(means, attempts, rng)
	if err != nil {
		return 0, err
	}
	hits := 0
	for i := range got {
		if got[i] != nil && slices.Equal(got[i], want[i]) {
			hits++
		}
	}
	return float64(hits) / float64(len(got)), nil
}

// PriorValidity decodes n points drawn from the prior N(0, I) (see Decode)
// and returns the share of complete derivations and the number of distinct
// ones among them.
func (m *Model) PriorValidity(n, attempts int, rng *rand.Rand) (valid float64, distinct int, err error) {
	if n < 1 || rng == nil {
		return 0, 0, fmt.Errorf("grammar VAE prior validity: %d samples (rng %v): want n >= 1 and an rng", n, rng != nil)
	}
	z := make([]float64, n*m.cfg.Latent)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	rules, err := m.Decode(z, attempts, rng)
	if err != nil {
		return 0, 0, err
	}
	seen := map[string]bool{}
	ok := 0
	for _, r := range rules {
		if r != nil {
			ok++
			seen[fmt.Sprint(r)] = true
		}
	}
	return float64(ok) / float64(n), len(seen), nil
}
