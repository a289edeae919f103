package jtvae

import (
	"math"
	"slices"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

// TestAssemblyScorer: scoring each training group's candidates one tree at a
// time, as decoding does, gives the authors' assembly loss.
func TestAssemblyScorer(t *testing.T) {
	f := readFixture(t, fixtureDir+"parity.npz")
	ex := f.examples(t)
	m := parityModel(t, f, true, 20)
	sc := torch.NewScope()
	defer sc.Close()
	b := collateFixture(t, m, sc, ex)
	var z []float32
	torch.NoGrad(func() {
		mu, logStd := m.EncodeParams(b)
		eps := sc.Own(torch.FromFloat32(f.float32s(t, "eps"), int64(len(ex)), int64(m.LatentDim())))
		var err error
		if z, err = mu.Add(logStd.Exp().Mul(eps)).Float32s(); err != nil {
			t.Fatal(err)
		}
	})
	lat, lt := m.cfg.Latent, m.cfg.LatentTree
	loss := 0.0
	for i, e := range ex {
		s, err := m.NewAssemblyScorer(e.Tree, z[i*lat+lt:(i+1)*lat])
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range e.Assembly {
			scores, err := s.Score(g.Candidates)
			if err != nil {
				t.Fatal(err)
			}
			top := slices.Max(scores)
			sum := 0.0
			for _, v := range scores {
				sum += math.Exp(v - top)
			}
			loss += top + math.Log(sum) - scores[g.Label]
		}
		s.Close()
	}
	loss /= float64(len(ex))
	if err := closeTo([]float64{loss}, []float64{f.scalar(t, "compat_assm")}, 1e-4); err != nil {
		t.Errorf("assembly loss from the scorer: %v", err)
	}
}
