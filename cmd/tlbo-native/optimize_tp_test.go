package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// versionLosses reads the retraining losses of each model version from a
// run's journal.
func versionLosses(t *testing.T, dir string) []map[string]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]float64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Version *struct {
				Losses map[string]float64 `json:"losses"`
			} `json:"version"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Version != nil {
			out = append(out, rec.Version.Losses)
		}
	}
	return out
}

// TestTargetPredictorPersists runs TP-LBO through the loop: the target
// predictor trained by the first retraining must still be trained at the
// second (one step), so its prediction loss there is far below that of a
// fresh predictor's first step; a head re-initialised at every retraining
// would give about the same loss. The journal records the losses.
func TestTargetPredictorPersists(t *testing.T) {
	data, dir := tinyExpressionData(t), t.TempDir()
	vae := filepath.Join(dir, "gvae.pt")
	if err := runCLI("train", "--task", "expression", "--data-dir", data, "--epochs", "1", "--batch-size", "64",
		"--prior-samples", "2", "--decode-attempts", "1", "--out", vae); err != nil {
		t.Fatal(err)
	}
	run := []string{"optimize", "--task", "expression", "--data-dir", data, "--vae", vae, "--elbo", "tp", "--strategy", "prior",
		"--budget", "2", "--retrain-every", "1", "--retrain-epochs", "0.01", "--decode-attempts", "1", "--seed", "3"}
	trained, fresh := filepath.Join(dir, "trained"), filepath.Join(dir, "fresh")
	if err := runCLI(append(run, "--initial-retrain-epochs", "15", "--run-dir", trained)...); err != nil {
		t.Fatal(err)
	}
	if err := runCLI(append(run, "--initial-retrain-epochs", "0.01", "--run-dir", fresh)...); err != nil {
		t.Fatal(err)
	}
	lt, lf := versionLosses(t, trained), versionLosses(t, fresh)
	if len(lt) != 2 || len(lf) != 2 {
		t.Fatalf("%d and %d version records, want 2 each", len(lt), len(lf))
	}
	for _, k := range []string{"total", "rec", "kl", "pred", "metric", "beta"} {
		if _, ok := lt[1][k]; !ok {
			t.Errorf("version 1 losses %v lack %q", lt[1], k)
		}
	}
	t.Logf("prediction loss: trained head's first step in version 1 %.4g; fresh head's first step %.4g (its 15-epoch mean %.4g)",
		lt[1]["pred"], lf[0]["pred"], lt[0]["pred"])
	if !(lt[1]["pred"] < 0.7*lf[0]["pred"]) {
		t.Errorf("the target predictor's loss after 15 epochs is %.4g, a fresh one's %.4g: the head did not persist", lt[1]["pred"], lf[0]["pred"])
	}
}
