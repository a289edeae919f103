package jtvae

import (
	"testing"

	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/optim"
)

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
	var sum StepTimes
	n := 0
	for b.Loop() {
		st, err := m.TimedStep(opt, ex, 1e-3)
		if err != nil {
			b.Fatal(err)
		}
		sum.Collate += st.Collate
		sum.Tree += st.Tree
		sum.Graph += st.Graph
		sum.Decoder += st.Decoder
		sum.Assembly += st.Assembly
		sum.Backward += st.Backward
		n++
	}
	k := float64(n)
	b.ReportMetric(sum.Collate/k, "collate_ms")
	b.ReportMetric(sum.Tree/k, "tree_ms")
	b.ReportMetric(sum.Graph/k, "graph_ms")
	b.ReportMetric(sum.Decoder/k, "decoder_ms")
	b.ReportMetric(sum.Assembly/k, "assembly_ms")
	b.ReportMetric(sum.Backward/k, "backward_adam_ms")
}
