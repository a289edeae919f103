package analysis

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
)

// smooth returns n points of [0,1]^2 with y = sin(3 x0) + x1² plus noise of
// standard deviation noise.
func smooth(n int, noise float64, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	z := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		a, b := rng.Float64(), rng.Float64()
		z.Set(i, 0, a)
		z.Set(i, 1, b)
		y[i] = math.Sin(3*a) + b*b + noise*rng.NormFloat64()
	}
	return z, y
}

// TestGPLogLikKnownNoise: on a smooth function with Gaussian noise of
// standard deviation s, a good GP predicts each held-out point with about
// the noise's density: log-likelihood near -log(s sqrt(2 pi e)) = 1.58 for
// s = 0.05; on pure noise the GP can do no better than the marginal.
func TestGPLogLikKnownNoise(t *testing.T) {
	const s = 0.05
	z, y := smooth(300, s, 1)
	res, err := GPLogLik(z, y, GPOptions{Inducing: 0, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := -math.Log(s * math.Sqrt(2*math.Pi*math.E))
	t.Logf("smooth: %v (mean %.3f std %.3f), noise-limited %.3f", res.LogLik, res.Mean, res.Std, want)
	if len(res.LogLik) != 5 || res.Train != 240 || res.Test != 60 || res.Points != 300 || res.Dim != 2 {
		t.Errorf("result %+v, want 5 splits of 240/60 points in 2 dimensions", res)
	}
	if math.Abs(res.Mean-want) > 0.25 {
		t.Errorf("mean log-likelihood %.3f, want within 0.25 of %.3f", res.Mean, want)
	}
	// Sparse with 30 inducing points is close on so smooth a function.
	sparse, err := GPLogLik(z, y, GPOptions{Inducing: 30, Seed: 3, Splits: 2})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(sparse.Mean-want) > 0.4 {
		t.Errorf("SGPR mean log-likelihood %.3f, want within 0.4 of %.3f", sparse.Mean, want)
	}
	// Scores unrelated to the points: the log-likelihood of a N(m, v) fit,
	// -0.5 log(2 pi e v), at best.
	rng := rand.New(rand.NewPCG(9, 9))
	noise := make([]float64, len(y))
	for i := range noise {
		noise[i] = 2 * rng.NormFloat64()
	}
	bad, err := GPLogLik(z, noise, GPOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if limit := -0.5 * math.Log(2*math.Pi*math.E*4); bad.Mean > limit+0.15 || bad.Mean < limit-0.5 {
		t.Errorf("pure noise: mean log-likelihood %.3f, want about %.3f", bad.Mean, limit)
	}
}

// TestGPLogLikScales: scaling the scores by c moves the log-likelihood on
// the scores' scale by -log c and leaves the standardised one unchanged,
// which is LogLik + log of the training part's standard deviation.
func TestGPLogLikScales(t *testing.T) {
	z, y := smooth(200, 0.1, 4)
	const c = 7.5
	scaled := make([]float64, len(y))
	for i, v := range y {
		scaled[i] = c * v
	}
	o := GPOptions{Inducing: 0, Seed: 2, Splits: 3}
	a, err := GPLogLik(z, y, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := GPLogLik(z, scaled, o)
	if err != nil {
		t.Fatal(err)
	}
	for s := range a.LogLik {
		if d := b.LogLik[s] - a.LogLik[s] + math.Log(c); math.Abs(d) > 1e-6 {
			t.Errorf("split %d: log-likelihood %v scaled by %v against %v: moved by %v, want -log c = %v",
				s, b.LogLik[s], c, a.LogLik[s], b.LogLik[s]-a.LogLik[s], -math.Log(c))
		}
		if d := b.Standardised[s] - a.Standardised[s]; math.Abs(d) > 1e-6 {
			t.Errorf("split %d: standardised log-likelihood %v scaled, %v unscaled", s, b.Standardised[s], a.Standardised[s])
		}
	}
	if math.Abs(b.StandardisedMean-a.StandardisedMean) > 1e-6 || math.Abs(b.Mean-a.Mean+math.Log(c)) > 1e-6 {
		t.Errorf("means: standardised %v and %v, on the scores' scale %v and %v", a.StandardisedMean, b.StandardisedMean, a.Mean, b.Mean)
	}
}

// TestDistancesSeparatedClusters: high scores in one tight cluster, low in
// another far away: within-group distances are small, across-group ones
// near the clusters' distance, and the histograms do not overlap.
func TestDistancesSeparatedClusters(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const n = 101
	z := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := range n {
		c := 0.0
		y[i] = float64(i)
		if i >= n/2 { // the high half (51 points, the middle one included)
			c = 10
		}
		for k := range 3 {
			z.Set(i, k, c+0.1*rng.NormFloat64())
		}
	}
	res, err := LatentDistances(z, y, DistanceOptions{Bins: 40})
	if err != nil {
		t.Fatal(err)
	}
	if res.High != 51 || res.Low != 50 || res.Median != 50 {
		t.Errorf("split %d/%d at median %v, want 51/50 at 50", res.High, res.Low, res.Median)
	}
	if want := [3]int{51 * 50 / 2, 50 * 49 / 2, 51 * 50}; res.Pairs != want || res.Sampled != [3]bool{} {
		t.Errorf("pairs %v (sampled %v), want all %v", res.Pairs, res.Sampled, want)
	}
	far := 10 * math.Sqrt(3)
	if res.Mean[HighLow] < far-0.5 || res.Mean[HighLow] > far+0.5 || res.Mean[HighHigh] > 0.5 || res.Mean[LowLow] > 0.5 {
		t.Errorf("mean distances %v, want about 0, 0 and %.2f", res.Mean, far)
	}
	width := res.Edges[1] - res.Edges[0]
	for g := range 3 {
		integral := 0.0
		for b, d := range res.Density[g] {
			integral += d * width
			within := res.Edges[b+1] < far/2
			if d > 0 && within == (g == HighLow) {
				t.Errorf("group %s has density in bin %d [%.2f, %.2f]", GroupNames[g], b, res.Edges[b], res.Edges[b+1])
			}
		}
		if math.Abs(integral-1) > 1e-9 {
			t.Errorf("group %s density integrates to %v", GroupNames[g], integral)
		}
	}
	// Sampling: with at most 100 pairs per group, every group is sampled
	// and the means stay put.
	samp, err := LatentDistances(z, y, DistanceOptions{MaxPairs: 100, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if samp.Pairs != [3]int{100, 100, 100} || samp.Sampled != [3]bool{true, true, true} {
		t.Errorf("sampled pairs %v %v, want 100 of each, sampled", samp.Pairs, samp.Sampled)
	}
	if math.Abs(samp.Mean[HighLow]-res.Mean[HighLow]) > 0.1 {
		t.Errorf("sampled high-low mean %v, all pairs %v", samp.Mean[HighLow], res.Mean[HighLow])
	}
}

func TestBadInput(t *testing.T) {
	z, y := smooth(10, 0.1, 1)
	nan := append([]float64(nil), y...)
	nan[3] = math.NaN()
	zNaN := mat.DenseCopyOf(z)
	zNaN.Set(4, 1, math.Inf(1))
	cases := []struct {
		name string
		z    *mat.Dense
		y    []float64
		gp   GPOptions
		want string
	}{
		{"length", z, y[:9], GPOptions{}, "10 latent points but 9 scores"},
		{"NaN score", z, nan, GPOptions{}, "score 3 is NaN"},
		{"Inf latent", zNaN, y, GPOptions{}, "latent point 4 has +Inf in dimension 1"},
		{"fraction", z, y, GPOptions{TestFraction: 1.5}, "fraction"},
		{"too few", mat.NewDense(2, 2, nil), []float64{1, 2}, GPOptions{}, "need at least 3"},
		{"nil", nil, nil, GPOptions{}, "no latent points"},
	}
	for _, c := range cases {
		if _, err := GPLogLik(c.z, c.y, c.gp); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("GPLogLik %s: %v, want an error containing %q", c.name, err, c.want)
		}
		if c.name == "fraction" {
			continue
		}
		if _, err := LatentDistances(c.z, c.y, DistanceOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LatentDistances %s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := LatentDistances(z, y, DistanceOptions{MaxPairs: -1}); err == nil {
		t.Error("negative max pairs accepted")
	}
	if _, err := WriteGPLogLik(t.TempDir(), Report{Names: []string{"a", "b"}}, []GPResult{{}}); err == nil {
		t.Error("two names for one result accepted")
	}
	if _, err := WriteGPLogLik(filepath.Join(t.TempDir(), "missing", "dir"), Report{Names: []string{"a"}},
		[]GPResult{{LogLik: []float64{1}, RMSE: []float64{1}, Standardised: []float64{1}}}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("write into a missing directory: %v, want an error naming it", err)
	}
}

// TestReports writes both reports and reads the tables back.
func TestReports(t *testing.T) {
	dir := t.TempDir()
	z, y := smooth(60, 0.1, 2)
	var told []int
	g, err := GPLogLik(z, y, GPOptions{Splits: 3, Seed: 1, Progress: func(s int, _, _ float64) { told = append(told, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(told, []int{1, 2, 3}) {
		t.Errorf("progress told splits %v, want 1, 2, 3", told)
	}
	d, err := LatentDistances(z, y, DistanceOptions{Bins: 10})
	if err != nil {
		t.Fatal(err)
	}
	rep := Report{Names: []string{"vanilla", "triplet"}, Notes: []string{"task toy, 3 splits"}}
	files, err := WriteGPLogLik(dir, rep, []GPResult{g, g})
	if err != nil {
		t.Fatal(err)
	}
	more, err := WriteDistances(dir, rep, []DistanceResult{d, d})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, more...) {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	txt, _ := os.ReadFile(filepath.Join(dir, GPLogLikBase+".txt"))
	if !strings.HasPrefix(string(txt), "# task toy, 3 splits\n") || strings.Count(string(txt), "\n") != 4 || !strings.Contains(string(txt), "triplet") {
		t.Errorf("gp_loglik.txt:\n%s", txt)
	}
	arrays, err := numpy.ReadNPZ(filepath.Join(dir, GPLogLikBase+".npz"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]numpy.Array{}
	for _, a := range arrays {
		byName[a.Name] = a
	}
	if got := byName["loglik"]; !reflect.DeepEqual(got.Shape, []int{2, 3}) || got.Data.([]float64)[4] != g.LogLik[1] {
		t.Errorf("loglik array %+v, want 2 x 3 with the splits' values", got)
	}
	if got := byName["standardised_loglik"]; !reflect.DeepEqual(got.Shape, []int{2, 3}) || got.Data.([]float64)[5] != g.Standardised[2] {
		t.Errorf("standardised_loglik array %+v, want 2 x 3 with the splits' values", got)
	}
	if got := byName["standardised_mean"]; got.Data.([]float64)[1] != g.StandardisedMean {
		t.Errorf("standardised_mean %+v, want %v", got, g.StandardisedMean)
	}
	if !strings.Contains(string(txt), "standardised mean") {
		t.Errorf("gp_loglik.txt has no standardised column:\n%s", txt)
	}
	if got := byName["names"].Data.([]string); !reflect.DeepEqual(got, rep.Names) {
		t.Errorf("names %v", got)
	}
	arrays, err = numpy.ReadNPZ(filepath.Join(dir, DistancesBase+".npz"))
	if err != nil {
		t.Fatal(err)
	}
	byName = map[string]numpy.Array{}
	for _, a := range arrays {
		byName[a.Name] = a
	}
	dens := byName["density"]
	if !reflect.DeepEqual(dens.Shape, []int{2, 3, 10}) || dens.Data.([]float64)[30+10+3] != d.Density[LowLow][3] {
		t.Errorf("density array shape %v, want [2 3 10] holding the densities", dens.Shape)
	}
	txt, _ = os.ReadFile(filepath.Join(dir, DistancesBase+".txt"))
	if strings.Count(string(txt), "high-low") != 2 {
		t.Errorf("latent_distances.txt:\n%s", txt)
	}
}
