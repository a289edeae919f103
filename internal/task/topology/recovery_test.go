package topology

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	conv "github.com/tlbo-native/tlbo-native/models/topology"
	"github.com/tlbo-native/tlbo-native/torch"
)

// TestTargetModel opens a checkpoint for a run's target and checks the
// posterior against the encoder and the similarities against decodings
// drawn directly from the decoder's probabilities.
func TestTargetModel(t *testing.T) {
	if err := torch.ManualSeed(5); err != nil {
		t.Fatal(err)
	}
	net, err := conv.New(conv.Config{Latent: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	path := filepath.Join(t.TempDir(), "model.pt")
	if err := models.SaveNetwork(path, net); err != nil {
		t.Fatal(err)
	}
	tt, ok := lookup(t).(task.TargetTask)
	if !ok {
		t.Fatal("the topology task is not a task.TargetTask")
	}
	if r := tt.Recovery(); r.Threshold != 0.8 || r.Decoding == "" {
		t.Errorf("recovery %+v, want the paper's threshold 0.8 and a description", r)
	}
	target := blockDesign(5, 30, 10, 20)
	run := map[string]string{fieldTargetKey: Key(target), fieldTarget: "design 7"}
	m, err := tt.OpenTargetModel(testEnv("", nil), path, run)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.LatentDim() != 2 || m.Target() != "design 7" {
		t.Errorf("latent %d target %q", m.LatentDim(), m.Target())
	}
	mu, std, err := m.Posterior()
	if err != nil {
		t.Fatal(err)
	}
	x, _ := example(target)
	want, err := models.EncodeMeans[models.Dense](net, []models.Dense{x})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(mu, want) || len(std) != 2 || !(std[0] > 0) || !(std[1] > 0) {
		t.Errorf("posterior mean %v (encoder %v), std %v", mu, want, std)
	}
	z := append(slices.Clone(mu), mu[0]+std[0], mu[1]-std[1])
	const n, seed = 7, 42
	sims, err := m.Similarities(z, n, seed)
	if err != nil || len(sims) != 2*n {
		t.Fatalf("similarities: %v, %d values", err, len(sims))
	}
	probs, err := net.DecodeProbs(z)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		for k := range n {
			d := make(Design, Pixels)
			for j, p := range probs[i*Pixels : (i+1)*Pixels] {
				if rng.Float64() < float64(p) {
					d[j] = 1
				}
			}
			if got, want := sims[i*n+k], Similarity(d, target); math.Abs(got-want) > 0 {
				t.Fatalf("point %d decoding %d: similarity %v, want %v", i, k, got, want)
			}
		}
	}
	if again, _ := m.Similarities(z[2:], n, seed); slices.Equal(again, sims[n:]) {
		t.Error("the decodings of a point depend on its index, not only on the seed: want (seed, i) streams")
	}
	if _, err := m.Similarities(z, 0, 1); err == nil {
		t.Error("0 decodings accepted")
	}
	// The mode is the task's own decode: pixels where the probability is
	// above one half.
	modes, err := m.ModeSimilarities(z)
	if err != nil || len(modes) != 2 {
		t.Fatalf("mode similarities: %v, %d values", err, len(modes))
	}
	decoded, _, err := decode(net, z, task.DecodeOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		d := make(Design, Pixels)
		for j, p := range probs[i*Pixels : (i+1)*Pixels] {
			if p > 0.5 {
				d[j] = 1
			}
		}
		if !slices.Equal(d, decoded[i]) || modes[i] != Similarity(d, target) {
			t.Errorf("point %d: mode similarity %v, want %v of the rounded decode", i, modes[i], Similarity(d, target))
		}
	}
	if r := tt.Recovery(); r.Mode == "" {
		t.Error("the recovery description says nothing of the mode")
	}
}

func TestOpenTargetModelErrors(t *testing.T) {
	tt := lookup(t).(task.TargetTask)
	env := testEnv("", nil)
	for _, c := range []struct {
		run  map[string]string
		path string
		want string
	}{
		{map[string]string{}, "x.pt", "no field target-key"},
		{map[string]string{fieldTargetKey: "zz"}, "x.pt", "field target-key"},
		{map[string]string{fieldTargetKey: Key(make(Design, Pixels))}, "x.pt", "empty"},
		{map[string]string{fieldTargetKey: Key(blockDesign(0, 2, 0, 2))}, filepath.Join(t.TempDir(), "missing.pt"), "missing"},
	} {
		if _, err := tt.OpenTargetModel(env, c.path, c.run); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.run, err, c.want)
		}
	}
}
