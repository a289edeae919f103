package molecule

import "testing"

// BenchmarkFeaturise featurises the 32 built-in molecules (tree, graph and
// assembly candidates) per iteration.
func BenchmarkFeaturise(b *testing.B) {
	vocab, err := ReadVocab(testVocab(b))
	if err != nil {
		b.Fatal(err)
	}
	fz := NewFeaturiser(vocab)
	for b.Loop() {
		for _, s := range sampleSmiles {
			if _, err := fz.Featurise(s); err != nil {
				b.Fatal(err)
			}
		}
	}
}
