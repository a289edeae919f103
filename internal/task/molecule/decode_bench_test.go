package molecule

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
)

// BenchmarkDecodePrior decodes 100 prior samples greedily per iteration with
// one libtorch thread and reports the split (tree decoding, assembly) in
// seconds per iteration. The network is $TLBO_DECODE_VAE (a checkpoint of
// ours or the authors' state dict) or testdata/jtvae/decode_state.pt; the
// points are $TLBO_DECODE_Z (.npy, n x 56, e.g. make_decode_fixture.py
// --time's, for the side-by-side timing) or 100 standard normal draws.
// The can_assemble cache starts empty each iteration.
func BenchmarkDecodePrior(b *testing.B) {
	if err := torch.SetNumThreads(1); err != nil {
		b.Fatal(err)
	}
	path := os.Getenv("TLBO_DECODE_VAE")
	if path == "" {
		path = "../../../testdata/jtvae/decode_state.pt"
	}
	var m *jtvae.Model
	var err error
	if strings.HasSuffix(path, ".pt") && fileExists(strings.TrimSuffix(path, ".pt")+".json") {
		m, _, err = jtvae.Load(path, torch.CPU)
	} else {
		var v Vocab
		if v, err = ReadVocab(testVocab(b)); err == nil {
			m, _, err = jtvae.ImportModel(path, v)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	var z []float32
	if p := os.Getenv("TLBO_DECODE_Z"); p != "" {
		a, err := numpy.ReadNPY(p)
		if err != nil {
			b.Fatal(err)
		}
		v, err := a.Float64s()
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range v {
			z = append(z, float32(x))
		}
	} else {
		r := rand.New(rand.NewPCG(1, 1))
		for range 100 * m.LatentDim() {
			z = append(z, float32(r.NormFloat64()))
		}
	}
	d, err := NewDecoder(m, nil)
	if err != nil {
		b.Fatal(err)
	}
	var stats DecodeStats
	invalid := 0
	for b.Loop() {
		clear(d.chem.can)
		d.Stats = DecodeStats{}
		smiles, _, err := d.Decode(z)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range smiles {
			if s == "" {
				invalid++
			}
		}
		stats.Tree += d.Stats.Tree
		stats.Assembly += d.Stats.Assembly
		stats.Timeouts += d.Stats.Timeouts
		stats.Retries += d.Stats.Retries
		stats.SecondPasses += d.Stats.SecondPasses
		stats.Partial += d.Stats.Partial
	}
	n := float64(b.N)
	b.ReportMetric(stats.Tree.Seconds()/n, "tree_s/op")
	b.ReportMetric(stats.Assembly.Seconds()/n, "assembly_s/op")
	b.ReportMetric(float64(invalid)/n, "invalid/op")
	b.ReportMetric(float64(stats.Timeouts)/n, "timeouts/op")
	b.ReportMetric(float64(stats.Retries)/n, "retries/op")
	b.ReportMetric(float64(stats.SecondPasses)/n, "second_passes/op")
	b.ReportMetric(float64(stats.Partial)/n, "partial/op")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
