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

// TestAssemblyScorers: the scorers of trees encoded together give each
// tree's scores as its own scorer does; a tree that is not a decoded tree
// gets an error of its own and leaves the others be.
func TestAssemblyScorers(t *testing.T) {
	f := readFixture(t, fixtureDir+"parity.npz")
	ex := f.examples(t)
	m := parityModel(t, f, true, 20)
	lat, lt, lg := m.cfg.Latent, m.cfg.LatentTree, m.cfg.LatentGraph()
	z := make([]float32, len(ex)*lat)
	for i := range z {
		z[i] = float32(math.Sin(float64(i)))
	}
	var trees []Tree
	var zg []float32
	for i, e := range ex {
		trees = append(trees, e.Tree)
		zg = append(zg, z[i*lat+lt:(i+1)*lat]...)
	}
	bad := Tree{Labels: []int64{0, 1}, Neighbors: [][]int32{{1}, {1}}}
	trees = append(trees, bad)
	zg = append(zg, make([]float32, lg)...)
	g, err := m.NewAssemblyScorers(trees, zg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Scorer(len(ex)); err == nil {
		t.Error("a tree with a node its own neighbour has a scorer")
	}
	if _, err := m.NewAssemblyScorers(trees, zg[:len(zg)-1]); err == nil {
		t.Error("scorers made with a latent value missing")
	}
	for i, e := range ex {
		one, err := m.NewAssemblyScorer(e.Tree, z[i*lat+lt:(i+1)*lat])
		if err != nil {
			t.Fatal(err)
		}
		batched, err := g.Scorer(i)
		if err != nil {
			t.Fatal(err)
		}
		for _, grp := range e.Assembly {
			want, err := one.Score(grp.Candidates)
			if err != nil {
				t.Fatal(err)
			}
			got, err := batched.Score(grp.Candidates)
			if err != nil {
				t.Fatal(err)
			}
			if err := closeTo(got, want, 1e-6); err != nil {
				t.Errorf("tree %d: batched scores: %v", i, err)
			}
		}
		one.Close()
	}
	// Scoring again leaves the group's scope as it was: a call's
	// intermediates, computed from the group's tables, go with the call
	// (they once joined the tables' scope and piled up there until the
	// decoding ended: 200 MB over 100 molecules).
	held := g.sc.Len()
	for i, e := range ex {
		s, err := g.Scorer(i)
		if err != nil {
			t.Fatal(err)
		}
		for _, grp := range e.Assembly {
			if _, err := s.Score(grp.Candidates); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := g.sc.Len(); got != held {
		t.Errorf("scoring again left %d tensors in the scorers' scope, %d before", got, held)
	}
}
