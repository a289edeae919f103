package molecule

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbo-native/tlbo-native/internal/chem"
	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/internal/openblas"
	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
)

// decodeFixture reads testdata/jtvae/decode.npz (make_decode_fixture.py):
// latent points, the authors' greedy decodes ("" for None) and where each
// point came from.
func decodeFixture(t *testing.T) (z []float32, smiles, source []string) {
	t.Helper()
	arrays, err := numpy.ReadNPZ("../../../testdata/jtvae/decode.npz")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arrays {
		switch a.Name {
		case "z":
			z, _ = a.Data.([]float32)
		case "smiles":
			smiles, _ = a.Data.([]string)
		case "source":
			source, _ = a.Data.([]string)
		}
	}
	if len(z) == 0 || len(smiles) == 0 || len(z) != 56*len(smiles) || len(source) != len(smiles) {
		t.Fatalf("decode.npz: %d latent values, %d SMILES, %d sources", len(z), len(smiles), len(source))
	}
	return z, smiles, source
}

// decodeFixtureModel imports the decode fixture's weights over the test
// vocabulary.
func decodeFixtureModel(t *testing.T) *jtvae.Model {
	t.Helper()
	v, err := ReadVocab(testVocab(t))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := jtvae.ImportModel("../../../testdata/jtvae/decode_state.pt", v)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDecodeMatchesAuthors: the fixture's weights (decode_state.pt, imported),
// decoded greedily through the registry's decode verb with the checkpoint's
// vocabulary, give the authors' molecules for prior samples and encoder
// means of ZINC molecules.
func TestDecodeMatchesAuthors(t *testing.T) { decodeMatchesAuthors(t, torch.CPU) }

// TestDecodeMatchesAuthorsCUDA is TestDecodeMatchesAuthors with the network
// on the GPU.
func TestDecodeMatchesAuthorsCUDA(t *testing.T) { decodeMatchesAuthors(t, cudaDevice(t)) }

func decodeMatchesAuthors(t *testing.T, dev torch.Device) {
	z, want, source := decodeFixture(t)
	tk := lookup(t)
	dir := t.TempDir()
	env := testEnv(t, false, task.Values{optVocab: testVocab(t)})
	ckpt := filepath.Join(dir, "imported.pt")
	if err := tk.Import(env, task.ImportRequest{From: "../../../testdata/jtvae/decode_state.pt", Out: ckpt}); err != nil {
		t.Fatal(err)
	}
	z64 := make([]float64, len(z))
	for i, v := range z {
		z64[i] = float64(v)
	}
	in, out := filepath.Join(dir, "z.npy"), filepath.Join(dir, "out.txt")
	if err := numpy.WriteNPY(in, numpy.Array{Shape: []int{len(want), 56}, Data: z64}); err != nil {
		t.Fatal(err)
	}
	// no --vocab: decoding takes the checkpoint's
	denv := testEnv(t, false, nil)
	denv.Device = dev
	if err := tk.Decode(denv, task.DecodeRequest{VAE: ckpt, In: in, Out: out, Decode: task.DecodeOptions{Greedy: true}}); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines decoded, want %d", len(got), len(want))
	}
	valid := 0
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("point %d (%s): decoded %q, the authors %q", i, source[i], got[i], want[i])
		}
		if want[i] != "" {
			valid++
		}
	}
	t.Logf("%d points, %d valid decodes", len(want), valid)
}

// TestDecoderTimeLimit: the decoder splits its time and counts its steps,
// and a time limit too short for any chemistry makes invalid decodes (or
// one-node trees, which need none), not an error.
func TestDecoderTimeLimit(t *testing.T) {
	z, want, _ := decodeFixture(t)
	m := decodeFixtureModel(t)
	defer m.Close()
	d, err := NewDecoder(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	smiles, _, err := d.Decode(z)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(smiles, want) {
		t.Errorf("decoded %q, want %q", smiles, want)
	}
	if d.Stats.Tree <= 0 || d.Stats.Assembly <= 0 || d.Stats.Steps == 0 || d.Stats.Timeouts != 0 {
		t.Errorf("stats %+v", d.Stats)
	}
	// a fresh chemistry, so that no cached answer spares the work
	d.chem = &clusterChem{vocab: d.chem.vocab, slots: d.chem.slots, aroma: d.chem.aroma,
		nodes: make([]nodeTemplate, len(d.chem.vocab))}
	d.TimeLimit = time.Nanosecond
	smiles, errs, err := d.Decode(z)
	if err != nil {
		t.Fatal(err)
	}
	timeouts := 0
	for i := range smiles {
		if errors.Is(errs[i], jtvae.ErrGiveUp) && smiles[i] == "" {
			timeouts++
		} else if errs[i] != nil || smiles[i] != want[i] {
			t.Errorf("point %d: %q (%v) with a 1 ns limit", i, smiles[i], errs[i])
		}
	}
	if timeouts == 0 || d.Stats.Timeouts != timeouts {
		t.Errorf("%d timeouts with a 1 ns limit, stats %+v", timeouts, d.Stats)
	}
}

// TestDecodeSampled: stochastic decoding (prob_decode) gives molecules or
// invalid decodes, the same ones from the same seed, and not always the
// greedy ones.
func TestDecodeSampled(t *testing.T) {
	z, want, _ := decodeFixture(t)
	z, want = z[:12*56], want[:12]
	m := decodeFixtureModel(t)
	defer m.Close()
	run := func() []string {
		d, err := NewDecoder(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		d.Sampled, d.Seed = true, 5
		smiles, _, err := d.Decode(z)
		if err != nil {
			t.Fatal(err)
		}
		return smiles
	}
	a, b := run(), run()
	if !slices.Equal(a, b) {
		t.Errorf("two runs from one seed differ:\n%q\n%q", a, b)
	}
	differ := 0
	for i, s := range a {
		if s != want[i] {
			differ++
		}
		if s == "" {
			continue
		}
		if mol, err := chem.Smiles(s); err != nil {
			t.Errorf("point %d: %q: %v", i, s, err)
		} else {
			mol.Close()
		}
	}
	if differ == 0 {
		t.Error("sampled decodes are all the greedy ones")
	}
	t.Logf("%d of %d sampled decodes differ from the greedy ones", differ, len(a))
}

// TestDecodeWorkers: decoding on several workers gives the molecules of
// one worker, row for row, greedily (the authors' on the fixture) and
// sampled (each row its own stream), with the same counts; a batch that
// is not whole rows is refused.
func TestDecodeWorkers(t *testing.T) {
	z, want, _ := decodeFixture(t)
	m := decodeFixtureModel(t)
	defer m.Close()
	run := func(workers int, sampled bool, z []float32) ([]string, DecodeStats) {
		t.Helper()
		d, err := NewDecoder(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		d.Workers, d.Sampled, d.Seed = workers, sampled, 11
		smiles, errs, err := d.Decode(z)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range errs {
			if (e == nil) != (smiles[i] != "") {
				t.Errorf("%d workers: row %d: %q with error %v", workers, i, smiles[i], e)
			}
		}
		return smiles, d.Stats
	}
	counts := func(s DecodeStats) [5]int {
		return [5]int{s.Steps, s.Retries, s.SecondPasses, s.Partial, s.Timeouts}
	}
	one, st1 := run(1, false, z)
	if !slices.Equal(one, want) {
		t.Errorf("one worker: %q, the authors %q", one, want)
	}
	zs := z[:12*56]
	sampled1, _ := run(1, true, zs)
	// Workers run OpenBLAS on one thread each and give its count back.
	defer openblas.SetThreads(openblas.Threads())
	openblas.SetThreads(3)
	for _, w := range []int{2, 3, 7, 0} {
		got, st := run(w, false, z)
		if !slices.Equal(got, one) || counts(st) != counts(st1) {
			t.Errorf("%d workers: %q (%+v), one worker %q (%+v)", w, got, st, one, st1)
		}
		if n := openblas.Threads(); n != 3 {
			t.Errorf("%d workers left OpenBLAS at %d threads, want 3", w, n)
		}
		if got, _ := run(w, true, zs); !slices.Equal(got, sampled1) {
			t.Errorf("%d workers, sampled: %q, one worker %q", w, got, sampled1)
		}
	}
	d, err := NewDecoder(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]float32{nil, z[:55], z[:57]} {
		if _, _, err := d.Decode(bad); err == nil {
			t.Errorf("%d latent values decoded without an error", len(bad))
		}
	}
}
