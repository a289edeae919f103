package topology

import (
	"path/filepath"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/simp"
	"github.com/tlbo-native/tlbo-native/models"
	conv "github.com/tlbo-native/tlbo-native/models/topology"
	"github.com/tlbo-native/tlbo-native/torch"
)

// TestPretrainedNetworks loads the shipped topology networks as --vae does
// and reconstructs designs of the held-out set of pretrained/README.md
// (`data topology --seed 1`, designs 0..n-1; the training set's seed is
// 0): rounded decodes of the encoder means, cosine similarity (the
// training report's val_similarity, reconstruction). The README's
// 500 designs average 0.9067 (plain) and 0.9099 (soft triplet); these 8
// give 0.88 and 0.89. The bound is issue 21's 0.85: an untrained network of
// the same shape scores about 0.73 (the designs are mostly solid), so a
// wrong load (names, layout, dtype, width) fails.
func TestPretrainedNetworks(t *testing.T) {
	const n, bound = 8, 0.85
	dir := t.TempDir()
	path, err := simp.Generate(t.Context(), simp.GenerateOptions{Dir: dir, N: n, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	held, err := readDataFile(path)
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]models.Dense, n)
	for i, d := range held {
		if xs[i], err = example(d); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ file, elbo string }{{"topology-lbo.pt", "lbo"}, {"topology-t.pt", "t"}} {
		t.Run(c.file, func(t *testing.T) {
			net, h, err := conv.Load(filepath.Join("..", "..", "..", "pretrained", c.file), torch.CPU)
			if err != nil {
				t.Fatal(err)
			}
			defer net.Close()
			if h.Training == nil || h.Training.ELBO.Name != c.elbo || h.Training.Epoch < 1 || net.LatentDim() != 20 {
				t.Fatalf("header %+v, latent %d: want a trained %q network with 20 latent dimensions", h.Training, net.LatentDim(), c.elbo)
			}
			_, mean, err := reconstruction(net, xs)
			if err != nil {
				t.Fatal(err)
			}
			if mean < bound {
				t.Errorf("mean similarity of %d held-out reconstructions %.4f, want >= %v", n, mean, bound)
			}
			t.Logf("%s: mean similarity %.4f over %d held-out designs", c.file, mean, n)
		})
	}
}
