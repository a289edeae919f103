package jtvae

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

// TestRelabel: examples whose labels index another ordering of the network's
// vocabulary encode as those indexing the network's own; a cluster the
// network lacks is an error.
func TestRelabel(t *testing.T) {
	f := readFixture(t, fixtureDir+"parity.npz")
	ex := f.examples(t)
	m := parityModel(t, f, true, 20)
	for k := range m.cfg.VocabSize {
		m.cfg.Vocab = append(m.cfg.Vocab, fmt.Sprintf("c%d", k))
	}
	other := slices.Clone(m.cfg.Vocab)
	slices.Reverse(other)
	moved := make([]Example, len(ex))
	for i, e := range ex {
		moved[i] = e
		moved[i].Vocab = other
		moved[i].Tree.Labels = make([]int64, len(e.Tree.Labels))
		for k, w := range e.Tree.Labels {
			moved[i].Tree.Labels[k] = int64(m.cfg.VocabSize-1) - w
		}
	}
	means := func(ex []Example) []float64 {
		sc := torch.NewScope()
		defer sc.Close()
		var mu []float64
		torch.NoGrad(func() {
			v, _ := m.EncodeParams(collateFixture(t, m, sc, ex))
			mu = values(t, v)
		})
		return mu
	}
	if err := closeTo(means(moved), means(ex), 0); err != nil {
		t.Errorf("relabelled examples: %v", err)
	}
	if moved[0].Vocab[0] != other[0] {
		t.Error("Collate changed its input")
	}
	moved[0].Vocab = slices.Clone(other)
	moved[0].Vocab[moved[0].Tree.Labels[0]] = "not a cluster"
	sc := torch.NewScope()
	defer sc.Close()
	if _, err := m.Collate(sc, moved[:1]); err == nil {
		t.Error("a cluster outside the network's vocabulary: no error")
	}
}
