package bo_test

import (
	"fmt"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tlbo-native/tlbo-native/internal/bo"
	"github.com/tlbo-native/tlbo-native/internal/bo/botest"
)

// pointwiseModel is the toy model on a coarse grid, decoding each point on
// its own with a fixed seed, so that a point's object depends neither on
// the seed nor on the other points of a call (a bo.PointwiseDecoder of
// width Width). Points counts the points decoded.
type pointwiseModel struct {
	*botest.Model
	Width  int
	Points int
}

func (m *pointwiseModel) DecodeWidth() int { return m.Width }

func (m *pointwiseModel) Decode(z *mat.Dense, _ uint64) ([][]float64, []bool, error) {
	n, d := z.Dims()
	m.Points += n
	objs, ok := make([][]float64, n), make([]bool, n)
	for i := range n {
		o, v, err := m.Model.Decode(mat.NewDense(1, d, mat.Row(nil, i, z)), 0)
		if err != nil {
			return nil, nil, err
		}
		objs[i], ok[i] = o[0], v[0]
	}
	return objs, ok, nil
}

// TestDecodeWidth: a model that decodes point by point is asked for its
// width's worth of perturbations and random draws at a time instead of
// ten, and the run is the same query for query (latent points, objects,
// draws, perturbations, fallbacks) with fewer points decoded.
func TestDecodeWidth(t *testing.T) {
	p, data := newToy(t)
	cases := []struct {
		strategy bo.Strategy
		repeats  bo.Repeats
	}{
		// the novelty check's perturbations (under "skip" the loop does not
		// perturb, and its ball fallback keeps the best of a whole batch)
		{bo.StrategyBO, bo.RepeatsAuthors},
		{bo.StrategyRandom, bo.RepeatsAuthors},
		{bo.StrategyRandom, bo.RepeatsSkip},
		{bo.StrategyPrior, bo.RepeatsSkip},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s-%s", c.strategy, c.repeats), func(t *testing.T) {
			cfg := toyConfig()
			cfg.Strategy, cfg.Repeats, cfg.Budget, cfg.SamplesPerModel = c.strategy, c.repeats, 12, 0
			run := func(width int) (*bo.Result, int) {
				m := &pointwiseModel{Model: p.Model(), Width: width}
				m.Grid = 0.25 // a coarse grid: known objects, perturbations and redraws
				res, err := bo.Run[[]float64](cfg, p.Task(), m, data, bo.Options{Dir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				return res, m.Points
			}
			ref, refPoints := run(0)
			batched := 0
			for _, q := range ref.Queries {
				batched += q.Perturbations + q.Draws
			}
			if batched == 0 {
				t.Fatal("no query perturbed or drew: the test checks nothing")
			}
			for _, width := range []int{1, 3} {
				res, points := run(width)
				if len(res.Queries) != len(ref.Queries) {
					t.Fatalf("width %d: %d queries, width 0 %d", width, len(res.Queries), len(ref.Queries))
				}
				for i, q := range res.Queries {
					r := ref.Queries[i]
					if !reflect.DeepEqual(q.Z, r.Z) || q.Object != r.Object || q.Draws != r.Draws ||
						q.Perturbations != r.Perturbations || q.Fallback != r.Fallback {
						t.Errorf("width %d, query %d: %s, want %s", width, i, describe(q), describe(r))
					}
				}
				if points >= refPoints {
					t.Errorf("width %d decoded %d points, width 0 (batches of ten) %d", width, points, refPoints)
				}
				t.Logf("width %d: %d points decoded, batches of ten %d (%d perturbations and draws)", width, points, refPoints, batched)
			}
		})
	}
}

func describe(q bo.Query) string {
	return fmt.Sprintf("object %s, draws %d, perturbations %d, fallback %q, z %v", q.Object, q.Draws, q.Perturbations, q.Fallback, q.Z)
}
