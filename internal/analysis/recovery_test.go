package analysis

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// fakeModel is a 1-d model version whose point z decodes to the target
// (similarity 1) in a share clamp(z + shift) of its decodings, the first
// ones, and to nothing (similarity 0) in the rest; q(z | target) is
// N(mu, std²).
type fakeModel struct {
	mu, std, shift float64
	closed         *int
}

func (f fakeModel) LatentDim() int { return 1 }
func (f fakeModel) Close()         { *f.closed++ }
func (f fakeModel) Posterior() ([]float64, []float64, error) {
	return []float64{f.mu}, []float64{f.std}, nil
}

func (f fakeModel) Similarities(z []float64, n int, _ uint64) ([]float64, error) {
	var out []float64
	for _, x := range z {
		hits := int(math.Round(math.Min(1, math.Max(0, x+f.shift)) * float64(n)))
		for k := range n {
			out = append(out, float64(min(1, max(0, hits-k))))
		}
	}
	return out, nil
}

// ModeSimilarities: the mode of z's decodings is the target (similarity 1)
// when more than half of them are, else nothing (0).
func (f fakeModel) ModeSimilarities(z []float64) ([]float64, error) {
	out := make([]float64, len(z))
	for i, x := range z {
		if x+f.shift > 0.5 {
			out[i] = 1
		}
	}
	return out, nil
}

// share is p of z under f with n decodings and any threshold in [0, 1).
func (f fakeModel) share(z float64, n int) float64 {
	return math.Round(math.Min(1, math.Max(0, z+f.shift))*float64(n)) / float64(n)
}

// TestDomainRecoveryProtocol checks each version's p, carried point and
// candidate search against a direct computation of the protocol.
func TestDomainRecoveryProtocol(t *testing.T) {
	closed := 0
	vs := map[int]fakeModel{
		-1: {mu: 0.2, std: 0.3, shift: 0, closed: &closed},
		0:  {mu: 0.5, std: 0.3, shift: -0.1, closed: &closed},
		1:  {mu: 0.9, std: 0.1, shift: 0.4, closed: &closed},  // the carried point reaches 1
		3:  {mu: 0.6, std: 0.3, shift: -0.5, closed: &closed}, // falls from 1: every candidate drawn
	}
	open := func(v int) (RecoveryModel, error) { return vs[v], nil }
	const n = 50
	o := RecoveryOptions{Decodes: n, Threshold: 0.5, Candidates: 20, Seed: 7}
	var told []int
	o.Progress = func(s RecoveryStep) { told = append(told, s.Version) }
	steps, err := DomainRecovery([]int{-1, 0, 1, 3}, open, o)
	if err != nil {
		t.Fatal(err)
	}
	if closed != 4 || !reflect.DeepEqual(told, []int{-1, 0, 1, 3}) {
		t.Fatalf("closed %d models and told versions %v, want 4 and all of them", closed, told)
	}
	z, prev := 0.2, 0.0 // the first point is the first version's encoder mean
	for i, v := range []int{-1, 0, 1, 3} {
		m, s := vs[v], steps[i]
		carried := m.share(z, n)
		want := RecoveryStep{Version: v, P: carried, Carried: carried, AtMean: m.share(m.mu, n), Z: []float64{z}}
		if bar := max(prev, carried); carried < 1 {
			cands := drawCandidates([]float64{m.mu}, []float64{m.std}, o.Candidates, recoverySeed(o.Seed, v, streamNoise))
			for k, c := range cands {
				want.Drawn = k + 1
				if pk := m.share(c, n); pk > want.P {
					want.P, want.Z = pk, []float64{c}
				}
				if pk := m.share(c, n); pk > bar || pk == 1 {
					want.Raised = true
					break
				}
			}
		}
		if !reflect.DeepEqual(s, want) {
			t.Errorf("version %d: %+v, want %+v", v, s, want)
		}
		z, prev = want.Z[0], want.P
	}
	if steps[2].P != 1 || steps[2].Drawn != 0 {
		t.Errorf("version 1 carries a point of p 1: %+v, want no candidates", steps[2])
	}
	if !steps[0].Raised || steps[3].P >= steps[2].P || steps[3].Drawn != o.Candidates || steps[3].P <= steps[3].Carried {
		t.Errorf("want a raise at the first version, and at the last a drop with every candidate drawn and the best kept: %+v", steps)
	}
	// Without candidates the first encoder mean is carried throughout.
	steps, err = DomainRecovery([]int{-1, 0, 3}, open, RecoveryOptions{Decodes: n, Threshold: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []int{-1, 0, 3} {
		if want := vs[v].share(0.2, n); steps[i].P != want || steps[i].Drawn != 0 {
			t.Errorf("no candidates, version %d: p %v (drawn %d), want %v", v, steps[i].P, steps[i].Drawn, want)
		}
	}
}

func TestDomainRecoveryErrors(t *testing.T) {
	closed := 0
	good := fakeModel{mu: 0.5, std: 0.1, closed: &closed}
	open := func(v int) (RecoveryModel, error) {
		if v == 2 {
			return nil, errors.New("no such file")
		}
		return good, nil
	}
	if _, err := DomainRecovery([]int{0, 2}, open, RecoveryOptions{Threshold: 0.8}); err == nil || !strings.Contains(err.Error(), "version 2: no such file") {
		t.Errorf("failing open: %v", err)
	}
	if _, err := DomainRecovery(nil, open, RecoveryOptions{Threshold: 0.8}); err == nil {
		t.Error("no versions accepted")
	}
	if _, err := DomainRecovery([]int{0}, open, RecoveryOptions{Threshold: 0.8, Candidates: -1}); err == nil {
		t.Error("negative candidates accepted")
	}
	if _, err := DomainRecovery([]int{0}, open, RecoveryOptions{Threshold: math.NaN()}); err == nil {
		t.Error("NaN threshold accepted")
	}
}

// TestRecoveryTableAndReport groups runs by method, with a run lacking
// versions, and reads the report back.
func TestRecoveryTableAndReport(t *testing.T) {
	step := func(v int, p float64) RecoveryStep {
		return RecoveryStep{Version: v, P: p, Carried: p, Drawn: 3, Raised: true}
	}
	runs := []RecoveryRun{
		{Name: "lbo-1", Method: MethodLabel("bo", "lbo", false), Seed: 1, Steps: []RecoveryStep{step(0, 0.2), step(1, 0.4)}},
		{Name: "tlbo-1", Method: MethodLabel("bo", "t", false), Seed: 1, Steps: []RecoveryStep{step(0, 0.5), step(1, 1), step(2, 1)}},
		{Name: "lbo-2", Method: "LBO", Seed: 2, Steps: []RecoveryStep{step(0, 0.4), step(1, 0.8)}},
	}
	tab := TabulateRecovery(runs)
	if !reflect.DeepEqual(tab.Versions, []int{0, 1, 2}) || !reflect.DeepEqual(tab.Methods, []string{"LBO", "T-LBO"}) {
		t.Fatalf("versions %v methods %v", tab.Versions, tab.Methods)
	}
	if !math.IsNaN(tab.P[0][2]) || !math.IsNaN(tab.Mean[0][2]) || tab.Count[0][2] != 0 || tab.Count[1][2] != 1 {
		t.Errorf("missing versions: p %v mean %v count %v", tab.P[0], tab.Mean[0], tab.Count)
	}
	if math.Abs(tab.Mean[0][1]-0.6) > 1e-12 || math.Abs(tab.Std[0][1]-math.Sqrt(0.08)) > 1e-12 || tab.Std[1][1] != 0 {
		t.Errorf("LBO at version 1: %v ± %v, want 0.6 ± %v (sample std); T-LBO std %v", tab.Mean[0][1], tab.Std[0][1], math.Sqrt(0.08), tab.Std[1][1])
	}
	dir := t.TempDir()
	files, err := WriteRecovery(dir, []string{"task toy"}, tab)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	txt, _ := os.ReadFile(filepath.Join(dir, RecoveryBase+".txt"))
	for _, want := range []string{"# task toy\n", "l=1", "l=3", "0.60 ± 0.28", "T-LBO", "lbo-2"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("domain_recovery.txt lacks %q:\n%s", want, txt)
		}
	}
	arrays, err := numpy.ReadNPZ(filepath.Join(dir, RecoveryBase+".npz"))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]numpy.Array{}
	for _, a := range arrays {
		by[a.Name] = a
	}
	if p := by["p"]; !reflect.DeepEqual(p.Shape, []int{3, 3}) || p.Data.([]float64)[4] != 1 {
		t.Errorf("p %+v", p)
	}
	if l := by["l"].Data.([]int64); !reflect.DeepEqual(l, []int64{1, 2, 3}) {
		t.Errorf("l %v", l)
	}
	if d := by["drawn"].Data.([]int64); d[2] != -1 || d[0] != 3 {
		t.Errorf("drawn %v, want -1 where a run lacks the version", d)
	}
	if _, err := WriteRecovery(dir, nil, RecoveryTable{}); err == nil {
		t.Error("empty table accepted")
	}
}

func TestMethodLabel(t *testing.T) {
	for _, c := range []struct {
		strategy, elbo string
		warp           bool
		want           string
	}{
		{"bo", "lbo", false, "LBO"}, {"bo", "t", false, "T-LBO"}, {"bo", "w", true, "W-LBO"},
		{"bo", "lbo", true, "W-LBO"}, {"bo", "t", true, "T-LBO, warped"}, {"", "", false, "LBO"},
		{"random", "t", false, "random search"}, {"prior", "lbo", false, "prior sampling"},
	} {
		if got := MethodLabel(c.strategy, c.elbo, c.warp); got != c.want {
			t.Errorf("MethodLabel(%q, %q, %v) = %q, want %q", c.strategy, c.elbo, c.warp, got, c.want)
		}
	}
}

// TestDomainRecoveryMode: with the decoder's mode, p of a point is 0 or 1,
// and a version whose carried point misses draws candidates until the
// first whose mode is the target.
func TestDomainRecoveryMode(t *testing.T) {
	closed := 0
	vs := map[int]fakeModel{
		0: {mu: 0.2, std: 0.5, shift: 0, closed: &closed},   // the mean misses: candidates until one hits
		1: {mu: 0.9, std: 0.1, shift: 0.4, closed: &closed}, // the carried point hits
	}
	open := func(v int) (RecoveryModel, error) { return vs[v], nil }
	o := RecoveryOptions{Decodes: 50, Mode: true, Threshold: 0.5, Candidates: 30, Seed: 3}
	steps, err := DomainRecovery([]int{0, 1}, open, o)
	if err != nil {
		t.Fatal(err)
	}
	cands := drawCandidates([]float64{0.2}, []float64{0.5}, 30, recoverySeed(3, 0, streamNoise))
	first := slices.IndexFunc(cands, func(z float64) bool { return z > 0.5 })
	if first < 0 {
		t.Fatal("no candidate of the fixed seed hits; change the seed")
	}
	s := steps[0]
	if s.Carried != 0 || s.P != 1 || !s.Raised || s.Drawn != first+1 || s.Z[0] != cands[first] {
		t.Errorf("version 0: %+v; want the mean missing (0) and candidate %d (%v) hitting", s, first+1, cands[first])
	}
	if s := steps[1]; s.Carried != 1 || s.P != 1 || s.Drawn != 0 {
		t.Errorf("version 1: %+v; want the carried point hitting, no candidate drawn", s)
	}
	for _, s := range steps {
		if s.AtMean != 0 && s.AtMean != 1 {
			t.Errorf("version %d: p at the mean %v, want 0 or 1", s.Version, s.AtMean)
		}
	}
}
