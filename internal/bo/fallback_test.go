package bo

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/internal/gp"
	"gonum.org/v1/gonum/mat"
)

// lineTask scores points of R^1 by -(x-1)^2 (maximised); near the
// optimum, |x - 1| < 0.2, the objective returns NaN.
type lineTask struct{}

func (lineTask) Score(x float64) (float64, error) {
	if math.Abs(x-1) < 0.2 {
		return math.NaN(), nil
	}
	return -(x - 1) * (x - 1), nil
}
func (lineTask) FailureScore() float64           { return -10 }
func (lineTask) Maximize() bool                  { return true }
func (lineTask) Deterministic() bool             { return true }
func (lineTask) Key(x float64) string            { return formatFloat(x) }
func (lineTask) Parse(k string) (float64, error) { return parseFloat(k) }

// lineModel is the identity map of R^1, invalid above 1.5.
type lineModel struct{}

func (lineModel) LatentDim() int       { return 1 }
func (lineModel) Accept(float64) error { return nil }
func (lineModel) Encode(xs []float64) (*mat.Dense, error) {
	return mat.NewDense(len(xs), 1, append([]float64(nil), xs...)), nil
}
func (lineModel) Decode(z *mat.Dense, _ uint64) ([]float64, []bool, error) {
	n, _ := z.Dims()
	xs, ok := make([]float64, n), make([]bool, n)
	for i := range xs {
		xs[i], ok[i] = z.At(i, 0), z.At(i, 0) <= 1.5
	}
	return xs, ok, nil
}
func (lineModel) Retrain(RetrainRequest[float64]) (map[string]float64, error) { return nil, nil }
func (lineModel) Save(string) error                                           { return nil }
func (lineModel) Load(string) error                                           { return nil }

func lineRun(t *testing.T, cfg Config) *Result {
	t.Helper()
	data := Data[float64]{Objects: []float64{-2, -1, 0, 0.5, 2.5}, Scores: []float64{-9, -4, -1, -0.25, -2.25}}
	res, err := Run[float64](cfg, lineTask{}, lineModel{}, data, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func lineConfig() Config {
	c := DefaultConfig()
	c.Budget, c.RetrainEvery = 6, 3
	c.RankK, c.InitialRetrainEpochs, c.RetrainEpochs = 1e-3, 1, 1
	c.NBest, c.NRand, c.Inducing = 2500, 500, 500
	c.RawSamples, c.Restarts = 64, 2
	return c
}

func TestGPFailureFallsBackToRandom(t *testing.T) {
	defer func(f func(*mat.Dense, []float64, gp.Options) (*gp.Model, error)) { fitGP = f }(fitGP)
	fitGP = func(*mat.Dense, []float64, gp.Options) (*gp.Model, error) {
		return nil, errors.New("not positive definite")
	}
	res := lineRun(t, lineConfig())
	for _, q := range res.Queries {
		if !q.Random || !strings.Contains(q.RandomReason, "GP fit failed: not positive definite") {
			t.Errorf("query %d is not flagged as a random fallback with its reason: %v %q", q.Index, q.Random, q.RandomReason)
		}
		if q.Z[0] < -2.5 || q.Z[0] > 3 { // the box: data range widened by 5% each side
			t.Errorf("query %d: fallback z = %v outside the latent box", q.Index, q.Z[0])
		}
	}
}

func TestFailuresScoreFailure(t *testing.T) {
	res := lineRun(t, lineConfig())
	nan, invalid := 0, 0
	for _, q := range res.Queries {
		t.Logf("query %d: z %.3f score %v valid %v failure %q", q.Index, q.Z[0], q.Score, q.Valid, q.Failure)
		switch {
		case q.Z[0] > 1.5:
			invalid++
			if q.Valid || q.Score != -10 || q.Failure != "invalid decode" {
				t.Errorf("query %d at %v (invalid decode): %+v", q.Index, q.Z[0], q)
			}
		case math.Abs(q.Z[0]-1) < 0.2:
			nan++
			if q.Score != -10 || q.Failure != "objective returned NaN" {
				t.Errorf("query %d at %v (NaN objective): score %v, failure %q; want -10 and a reason", q.Index, q.Z[0], q.Score, q.Failure)
			}
		}
	}
	if nan == 0 || invalid == 0 {
		t.Errorf("%d NaN objectives and %d invalid decodes, want some of each", nan, invalid)
	}
}

func formatFloat(x float64) string         { return strconv.FormatFloat(x, 'g', -1, 64) }
func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
