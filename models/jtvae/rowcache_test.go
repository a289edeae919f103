package jtvae

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
)

// TestLabelTermsMatchSteps: the label terms that labelTerms computes once
// per label and gathers are bit for bit the ones the tree decoder's steps
// computed for their own distinct labels (gru.pass, and U_i's label half
// in stopScores), over a run of steps of one to forty labels with repeats,
// at the hidden size of the ZINC networks (the GEMM kernels differ by
// size), while computing far fewer rows.
func TestLabelTermsMatchSteps(t *testing.T) {
	if err := torch.SetNumThreads(1); err != nil {
		t.Fatal(err)
	}
	torch.ManualSeed(5)
	m, err := New(Config{VocabSize: 300, Hidden: 450, Latent: 56, LatentTree: 28, DepthT: 3, DepthG: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d := m.dec
	h := int64(m.cfg.Hidden)
	r := rand.New(rand.NewPCG(1, 2))
	torch.NoGrad(func() {
		sc := torch.NewScope()
		defer sc.Close()
		bd := &builder{sc: sc, dev: m.Device()}
		lt := newLabelTerms(m, bd)
		equal := func(step int, what string, want, got *torch.Tensor) {
			t.Helper()
			w, err := want.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			g, err := got.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(t, w, g) {
				t.Logf("step %d: %s equals the step's own product up to rounding, not bit for bit", step, what)
			}
		}
		for step := range 300 {
			n := 1 + r.IntN(40)
			if step%3 == 0 {
				n = 1 + r.IntN(3) // one, two and three labels are the delicate batches
			}
			labels := make([]int64, n)
			for i := range labels {
				labels[i] = int64(r.IntN(60)) // a few dozen labels, as a decoding meets
			}
			distinct, of := distinctLabels(labels)
			ofT := bd.ints(of)

			// the step's own products, as decodeStep computed them before
			wantStop := torch.Linear(d.emb.Forward(bd.ints(distinct)), sc.Own(d.Ui.Weight.Narrow(1, 0, h)), d.Ui.Bias).IndexSelect(0, ofT)
			gotStop, err := lt.stop(labels)
			if err != nil {
				t.Fatal(err)
			}
			equal(step, "U_i's label half", wantStop, gotStop)

			want := d.gru.pass(schedule{labels: bd.ints(distinct), n: n, iterations: 1}, d.emb, false)
			got, idx, err := lt.gruPass(labels)
			if err != nil {
				t.Fatal(err)
			}
			idxT := bd.ints(idx)
			equal(step, "W_z's label half", want.xz.IndexSelect(0, ofT), got.xz.IndexSelect(0, idxT))
			equal(step, "W_r x", want.xr.IndexSelect(0, ofT), got.xr.IndexSelect(0, idxT))
			equal(step, "W_h's label half", want.xh.IndexSelect(0, ofT), got.xh.IndexSelect(0, idxT))
			want.close()
		}
		if lt.rows.computed*3 > lt.rows.asked {
			t.Errorf("computed %d label rows for %d asked: the cache saves little", lt.rows.computed, lt.rows.asked)
		}
		t.Logf("computed %d label rows for %d asked", lt.rows.computed, lt.rows.asked)
	})
}

// TestScoreInputsMatch: candidate scores with the JTMPN's input products
// taken from the scorers' shared cache are bit for bit those computed
// afresh for each group, at the hidden size of the ZINC networks, for the
// fixture's trees and candidate groups (of one input row to dozens) scored
// in turn as the trees' assemblies interleave.
func TestScoreInputsMatch(t *testing.T) {
	if err := torch.SetNumThreads(1); err != nil {
		t.Fatal(err)
	}
	f := readFixture(t, fixtureDir+"parity.npz")
	ex := f.examples(t)
	c := f.ints(t, "config") // hidden, latent, depthT, depthG, vocab size
	torch.ManualSeed(3)
	m, err := New(Config{VocabSize: int(c[4]), Hidden: 450, Latent: 56, LatentTree: 28, DepthT: 3, DepthG: int(c[3])})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	lg := m.cfg.LatentGraph()
	var trees []Tree
	zg := make([]float32, len(ex)*lg)
	for i, e := range ex {
		trees = append(trees, e.Tree)
		for j := range lg {
			zg[i*lg+j] = float32(math.Sin(float64(i*lg + j)))
		}
	}
	g, err := m.NewAssemblyScorers(trees, zg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	groups := 0
	for round := range 2 { // the second round finds every row cached
		for k := 0; ; k++ {
			more := false
			for i, e := range ex {
				if k >= len(e.Assembly) {
					continue
				}
				more = true
				s, err := g.Scorer(i)
				if err != nil {
					t.Fatal(err)
				}
				cands := e.Assembly[k].Candidates
				want, err := s.score(cands, false)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.score(cands, true)
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(t, got, want) {
					t.Logf("round %d, tree %d, group %d: cached %v equal afresh %v up to rounding, not bit for bit", round, i, k, got, want)
				}
				groups++
			}
			if !more {
				break
			}
		}
	}
	t.Logf("%d groups: computed %d input rows for %d asked", groups, g.inputs.computed, g.inputs.asked)
	if g.inputs.computed*2 > g.inputs.asked {
		t.Errorf("computed %d input rows for %d asked: the cache saves little", g.inputs.computed, g.inputs.asked)
	}
}

// sameBits reports whether got and want are the same bits. On this
// project's machines (OpenBLAS's x86-64 kernels) they are, which keeps
// every decoded molecule unchanged; that is the GEMM's behaviour, not a
// promise, so on other hardware a difference of rounding is only logged,
// and the test fails when the values differ by more than float32 rounding
// of the products (a wrong row gathered, a stale table).
func sameBits[F float32 | float64](t *testing.T, got, want []F) bool {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	same := true
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		same = false
		g, w := float64(got[i]), float64(want[i])
		if math.Abs(g-w) > 1e-4*math.Max(1, math.Abs(w)) || math.IsNaN(g) != math.IsNaN(w) {
			t.Fatalf("value %d: %v, want %v", i, g, w)
		}
	}
	return same
}
