package expression

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	fixture "github.com/tlbo-native/tlbo-native/internal/fixture/torchfixture"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// TestCheckpoint saves a trainer after one epoch, loads the network (same
// encoder means) and a resumed trainer (same counters), and checks the errors
// for a checkpoint of another network and for inconsistent files.
func TestCheckpoint(t *testing.T) {
	if err := torch.ManualSeed(3); err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t)
	tr := tinyTrainer(t, m, "tp")
	x, y, _ := randomDerivations(64, 5)
	if _, err := tr.TrainEpoch(models.Data[models.Dense]{Examples: dense(t, x), Labels: y}, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "gvae.pt")
	if err := tr.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, models.HeaderPath(path), models.AdamPath(path)} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	loaded, h, err := Load(path, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	if h.Network != NetworkKind || h.Training == nil || h.Training.ELBO.Name != "tp" {
		t.Errorf("header %+v", h)
	}
	want, err := m.EncodeMeans(x)
	if err != nil {
		t.Fatal(err)
	}
	got, err := loaded.EncodeMeans(x)
	if err != nil {
		t.Fatal(err)
	}
	fixture.CloseScaled(t, "means after reload", got, want, 0)

	resumed, rt, err := models.LoadTrainer[models.Dense](path, torch.CPU, models.ResumeOptions{}, NetworkKind)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	if rt.Step != tr.Step || rt.Epoch != 1 || rt.Predictor == nil || rt.Opts.ELBO.Name != "tp" {
		t.Errorf("resumed trainer at step %d epoch %d", rt.Step, rt.Epoch)
	}

	// A network saved alone has no training state to resume.
	alone := filepath.Join(dir, "alone.pt")
	if err := models.SaveNetwork(alone, m); err != nil {
		t.Fatal(err)
	}
	if _, _, err := models.LoadTrainer[models.Dense](alone, torch.CPU, models.ResumeOptions{}, NetworkKind); err == nil || !strings.Contains(err.Error(), "training") {
		t.Errorf("resuming a network-only checkpoint: %v", err)
	}

	// Another network's checkpoint.
	other := filepath.Join(dir, "topology.pt")
	if err := models.SaveCheckpoint(other, models.Header{Network: "topology-conv", Model: json.RawMessage(`{}`)}, m.StateDict(), nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(other, torch.CPU); err == nil || !strings.Contains(err.Error(), `is for network "topology-conv", not "expression-gvae"`) {
		t.Errorf("other network: %v", err)
	}

	// A header whose configuration does not fit the tensors.
	cfg := m.Config()
	cfg.Latent = 10
	raw, _ := json.Marshal(cfg)
	wrong := filepath.Join(dir, "wrong.pt")
	if err := models.SaveCheckpoint(wrong, models.Header{Network: NetworkKind, Model: raw}, m.StateDict(), nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(wrong, torch.CPU); err == nil || !strings.Contains(err.Error(), "shape mismatch") || !strings.Contains(err.Error(), wrong) {
		t.Errorf("mismatched configuration: %v", err)
	}

	// Missing and malformed headers name the file.
	if err := os.WriteFile(models.HeaderPath(wrong), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(wrong, torch.CPU); err == nil || !strings.Contains(err.Error(), "wrong.json") {
		t.Errorf("malformed header: %v", err)
	}
	if _, _, err := Load(filepath.Join(dir, "none.pt"), torch.CPU); err == nil || !strings.Contains(err.Error(), "none.pt") {
		t.Errorf("missing checkpoint: %v", err)
	}
}

func TestRulesAndAccuracy(t *testing.T) {
	m := newTestModel(t)
	x, _, rules := randomDerivations(20, 9)
	got, err := m.Rules(x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if !slices.Equal(got[i], rules[i]) {
			t.Fatalf("rules %d: %v, want %v", i, got[i], rules[i])
		}
	}
	acc, err := m.ReconstructionAccuracy(x, 0, nil)
	if err != nil || acc < 0 || acc > 1 {
		t.Errorf("accuracy %v, %v", acc, err)
	}
	v, distinct, err := m.PriorValidity(50, 3, rand.New(rand.NewPCG(1, 2)))
	if err != nil || v < 0 || v > 1 || distinct > 50 {
		t.Errorf("prior validity %v (%d distinct), %v", v, distinct, err)
	}
	if _, err := m.Rules(x[:7]); err == nil {
		t.Error("ragged one-hot input: no error")
	}
	if _, _, err := m.PriorValidity(0, 3, nil); err == nil {
		t.Error("no samples: no error")
	}
}
