package jtvae

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// TestImport: the Lightning-style checkpoint and the bare state dict of the
// fixture script import to the same network, whose encoder means are the
// authors'; the result round-trips through our checkpoint format.
func TestImport(t *testing.T) {
	f := readFixture(t, fixtureDir+"parity.npz")
	ex := f.examples(t)
	vocab := make([]string, f.ints(t, "config")[4])
	for _, from := range []string{"parity.ckpt", "parity_state.pt"} {
		m, notes, err := ImportModel(fixtureDir+from, vocab)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		wantNotes := from == "parity.ckpt"
		if got := len(notes) == 1 && strings.Contains(notes[0], "prior_mu, prior_sigma"); got != wantNotes {
			t.Errorf("%s: notes %q", from, notes)
		}
		if c := m.Config(); c.Hidden != 40 || c.Latent != 56 || c.LatentTree != 28 || c.EncoderGRUTanh || c.BilinearAssembly {
			t.Errorf("%s: config %+v", from, c)
		}
		path := filepath.Join(t.TempDir(), "jtvae.pt")
		if err := models.SaveNetwork(path, m); err != nil {
			t.Fatal(err)
		}
		back, _, err := Load(path, torch.CPU)
		if err != nil {
			t.Fatal(err)
		}
		defer back.Close()
		sc := torch.NewScope()
		defer sc.Close()
		b := collateFixture(t, back, sc, ex)
		torch.NoGrad(func() {
			mu, _ := back.EncodeParams(b)
			if err := closeTo(values(t, mu), f.floats(t, "mean"), 1e-4); err != nil {
				t.Errorf("%s: means after import and reload: %v", from, err)
			}
		})
	}
}

func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Import(filepath.Join(dir, "missing.ckpt")); err == nil {
		t.Error("missing file: no error")
	}
	junk := filepath.Join(dir, "junk.ckpt")
	if err := os.WriteFile(junk, []byte("not a checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Import(junk); err == nil {
		t.Error("junk file: no error")
	}
	other := filepath.Join(dir, "other.pt")
	x := torch.Zeros([]int64{2}, torch.Float32, torch.CPU)
	defer x.Close()
	if err := torch.Save(other, []torch.Named{{Name: "encoder.0.weight", Tensor: x}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Import(other); err == nil || !strings.Contains(err.Error(), "no JT-VAE tensors") {
		t.Errorf("foreign state dict: %v", err)
	}
	if _, _, err := ImportModel(fixtureDir+"parity.ckpt", make([]string, 10)); err == nil || !strings.Contains(err.Error(), "vocabulary has 10") {
		t.Errorf("wrong vocabulary size: %v", err)
	}
}
