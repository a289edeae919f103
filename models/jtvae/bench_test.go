package jtvae

import (
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/optim"
)

// stepTimes are the parts of one training step in milliseconds.
type stepTimes struct{ collate, tree, graph, decoder, assembly, backward float64 }

// trainStep is one training step of the authors' loop on examples: word +
// topology + assembly + 1e-3 KL, gradient clipping at 20, Adam.
func trainStep(m *Model, opt *optim.Adam, ex []Example) (stepTimes, error) {
	var st stepTimes
	lap := func(start time.Time, into *float64) time.Time {
		now := time.Now()
		*into += float64(now.Sub(start).Microseconds()) / 1e3
		return now
	}
	sc := torch.NewScope()
	defer sc.Close()
	t0 := time.Now()
	if err := opt.ZeroGrad(); err != nil {
		return st, err
	}
	mb, err := m.Collate(sc, ex)
	if err != nil {
		return st, err
	}
	b := mb.(*Batch)
	t0 = lap(t0, &st.collate)
	tree, table := m.encodeTree(b)
	b.treeMess = table
	t0 = lap(t0, &st.tree)
	graph := m.mpn.forward(b.graph, nil)
	t0 = lap(t0, &st.graph)
	mu := torch.Cat([]*torch.Tensor{m.tMean.Forward(tree), m.gMean.Forward(graph)}, 1)
	logStd := torch.Cat([]*torch.Tensor{m.tVar.Forward(tree), m.gVar.Forward(graph)}, 1).Abs().MulScalar(-0.5)
	z := models.Reparameterize(mu, logStd)
	lt := int64(m.cfg.LatentTree)
	word, topo, _, _ := m.decoderLoss(z.Narrow(1, 0, lt), b)
	t0 = lap(t0, &st.decoder)
	assm, _ := m.assemblyLoss(z.Narrow(1, lt, int64(m.cfg.LatentGraph())), b)
	t0 = lap(t0, &st.assembly)
	total := word.Add(topo).Add(assm).Add(models.KL(mu, logStd).MulScalar(1e-3))
	if err := total.Backward(); err != nil {
		return st, err
	}
	if _, err := optim.ClipGradNorm(m.Parameters(), models.DefaultGradClip); err != nil {
		return st, err
	}
	if err := opt.Step(); err != nil {
		return st, err
	}
	lap(t0, &st.backward)
	return st, nil
}

// BenchmarkTrainStep times a training step of the full-size network (hidden
// 450, latent 56, 780 clusters) on the fixture's 32 ZINC molecules; the
// authors' step on the same molecules: make_fixture.py CHECKOUT --bench N.
// Run with OPENBLAS_NUM_THREADS=1 (the test binary sets one libtorch thread).
func BenchmarkTrainStep(b *testing.B) {
	f := readFixture(b, fixtureDir+"bench32.npz")
	ex := f.examples(b)
	if err := torch.ManualSeed(1); err != nil {
		b.Fatal(err)
	}
	m, err := New(DefaultConfig(make([]string, 780)))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	opt := optim.NewAdam(m.Parameters(), optim.DefaultAdam(1e-3))
	var sum stepTimes
	n := 0
	for b.Loop() {
		st, err := trainStep(m, opt, ex)
		if err != nil {
			b.Fatal(err)
		}
		sum.collate += st.collate
		sum.tree += st.tree
		sum.graph += st.graph
		sum.decoder += st.decoder
		sum.assembly += st.assembly
		sum.backward += st.backward
		n++
	}
	k := float64(n)
	b.ReportMetric(sum.collate/k, "collate_ms")
	b.ReportMetric(sum.tree/k, "tree_ms")
	b.ReportMetric(sum.graph/k, "graph_ms")
	b.ReportMetric(sum.decoder/k, "decoder_ms")
	b.ReportMetric(sum.assembly/k, "assembly_ms")
	b.ReportMetric(sum.backward/k, "backward_adam_ms")
}
