package molecule

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	// The allocator of cmd/tlbo-native, so that the benchmark times what
	// the program runs.
	_ "github.com/tlbo-native/tlbo-native/internal/malloc"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/rusage"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
)

// BenchmarkDecodePrior decodes 100 prior samples greedily per iteration with
// one libtorch thread and one worker ($TLBO_DECODE_WORKERS others, 0 one per
// CPU) and reports the split (tree decoding, assembly) in seconds per
// iteration, summed over the workers, and the process's CPU time. The
// network is $TLBO_DECODE_VAE (a checkpoint of ours or the authors' state
// dict) or testdata/jtvae/decode_state.pt; the points are $TLBO_DECODE_Z
// (.npy, n x 56, e.g. make_decode_fixture.py --time's, for the side-by-side
// timing) or 100 standard normal draws. The caches of answers (can_assemble,
// sanitised attachments, round trips) start empty each iteration.
// $TLBO_DECODE_TORCH_PROFILE=FILE records libtorch's operators into FILE
// (torch.Profile, one worker) and logs the costliest by self time.
// $TLBO_DECODE_ONE=1 decodes the points one per call, as a BO run's
// proposals (the caches then persist from call to call within an
// iteration). The C allocator is tcmalloc, as in cmd/tlbo-native
// (internal/malloc).
func BenchmarkDecodePrior(b *testing.B) {
	if err := torch.SetNumThreads(1); err != nil {
		b.Fatal(err)
	}
	m := benchDecodeModel(b)
	defer m.Close()
	z := benchDecodePoints(b, m.LatentDim())
	d, err := NewDecoder(m, nil)
	if err != nil {
		b.Fatal(err)
	}
	d.Workers = 1
	if w := os.Getenv("TLBO_DECODE_WORKERS"); w != "" {
		if d.Workers, err = strconv.Atoi(w); err != nil {
			b.Fatal(err)
		}
	}
	oneByOne := os.Getenv("TLBO_DECODE_ONE") == "1"
	var stats DecodeStats
	invalid, requests, hits, smilesHits := 0, 0, 0, 0
	cpu0 := rusage.CPUSeconds()
	profiled(b, os.Getenv("TLBO_DECODE_TORCH_PROFILE"), func() {
		for b.Loop() {
			d.chem.can.reset()
			d.chem.parses.reset()
			d.chem.memo.Reset()
			d.Stats = DecodeStats{}
			smiles, err := benchDecode(d, z, oneByOne)
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range smiles {
				if s == "" {
					invalid++
				}
			}
			stats.add(d.Stats)
			r, h, sh := d.chem.memo.Counts()
			requests, hits, smilesHits = requests+r, hits+h, smilesHits+sh
		}
	})
	n := float64(b.N)
	b.ReportMetric((rusage.CPUSeconds()-cpu0)/n, "cpu_s/op")
	b.ReportMetric(stats.Tree.Seconds()/n, "tree_s/op")
	b.ReportMetric(stats.Assembly.Seconds()/n, "assembly_s/op")
	b.ReportMetric(float64(invalid)/n, "invalid/op")
	b.ReportMetric(float64(requests)/n, "attachments/op")
	b.ReportMetric(float64(hits)/float64(max(requests, 1)), "memo_hits")
	b.ReportMetric(float64(smilesHits)/float64(max(requests, 1)), "memo_smiles_hits")
	b.ReportMetric(float64(stats.Timeouts)/n, "timeouts/op")
	b.ReportMetric(float64(stats.Retries)/n, "retries/op")
	b.ReportMetric(float64(stats.SecondPasses)/n, "second_passes/op")
	b.ReportMetric(float64(stats.Partial)/n, "partial/op")
}

// benchDecode decodes the rows of z at once or one per call.
func benchDecode(d *Decoder, z []float32, oneByOne bool) ([]string, error) {
	if !oneByOne {
		smiles, _, err := d.Decode(z)
		return smiles, err
	}
	lat := d.m.LatentDim()
	var out []string
	for i := 0; i < len(z); i += lat {
		smiles, _, err := d.Decode(z[i : i+lat])
		if err != nil {
			return nil, err
		}
		out = append(out, smiles...)
	}
	return out, nil
}

// benchDecodeModel loads $TLBO_DECODE_VAE or the decode fixture's weights.
func benchDecodeModel(b *testing.B) *jtvae.Model {
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
	return m
}

// benchDecodePoints reads $TLBO_DECODE_Z or draws 100 standard normal rows.
func benchDecodePoints(b *testing.B, latent int) []float32 {
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
		return z
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 100 * latent {
		z = append(z, float32(r.NormFloat64()))
	}
	return z
}

// profiled runs fn, recording libtorch's operators into path (torch.Profile)
// unless it is empty, and logs the costliest by self time.
func profiled(b *testing.B, path string, fn func()) {
	if path == "" {
		fn()
		return
	}
	if err := torch.Profile(path, func() error { fn(); return nil }); err != nil {
		b.Fatal(err)
	}
	ops, err := torch.ReadProfile(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, op := range ops[:min(len(ops), 15)] {
		b.Logf("%-36s %7d calls %8.3f s self", op.Name, op.Calls, op.Self/1e6)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
