package task

import (
	"maps"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// TestRunIdentity: the settings the task layer records for a run (which
// resume compares with the run's config.json) are the fields runs have
// always recorded, in their format, taken from the request: a field lost,
// renamed or reformatted would refuse every earlier run's resume. LBO's
// objective with a warped GP records w, as --elbo w runs did; a warped T-LBO
// keeps its own name.
func TestRunIdentity(t *testing.T) {
	d := &Defined[string, models.Dense]{s: Spec[string, models.Dense]{Name: "toy"}}
	elbo := func(name string) models.ELBO {
		e, err := models.ParseELBO(name)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	req := OptimizeRequest{
		Model:  ModelRequest{ELBO: elbo("lbo"), BatchSize: 16, GradClip: 20, Decode: DecodeOptions{Attempts: 3}},
		Config: bo.Config{Warp: true, Extra: map[string]string{"note": "kept", "task": "the caller's"}},
	}
	env := &Env{Device: torch.Device{Type: torch.CPUDevice}}
	got := d.runIdentity(env, req, strings.Repeat("ab", 32))
	want := map[string]string{"task": "toy", "elbo": "w", "elbo-params": "metric-weight=1 pred-weight=1 eta=0 nu=0 margin=0",
		"retrain": "batch=16 clip=20", "device": "cpu", "decode-attempts": "3", "vae-sha256": strings.Repeat("ab", 8), "note": "kept"}
	if !maps.Equal(got, want) {
		t.Errorf("identity\n%v\nwant\n%v", got, want)
	}
	if req.Config.Extra["task"] != "the caller's" {
		t.Error("runIdentity changed the request's Extra")
	}
	for _, c := range []struct {
		name string
		warp bool
		want string
	}{{"lbo", false, "lbo"}, {"w", true, "w"}, {"t", true, "t"}, {"t", false, "t"}} {
		req.Model.ELBO, req.Config.Warp = elbo(c.name), c.warp
		if got := d.runIdentity(env, req, strings.Repeat("0", 64))["elbo"]; got != c.want {
			t.Errorf("elbo %s, warp %v: records elbo %q, want %q", c.name, c.warp, got, c.want)
		}
	}
}
