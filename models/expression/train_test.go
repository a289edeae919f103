package expression

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// randomDerivations draws n leftmost derivations of at most 15 rules from the
// test grammar (terminal rules favoured so that they end), with their one-hot
// matrices and a label: the share of x leaves among the terminals.
func randomDerivations(n int, seed uint64) (x []float32, labels []float64, rules [][]int) {
	g := testGrammar()
	rng := rand.New(rand.NewPCG(seed, 1))
	for len(rules) < n {
		stack, r := []int{g.Start}, []int{}
		for len(stack) > 0 && len(r) <= 15 {
			nt := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			var choices []int
			var total float64
			for p, lhs := range g.LHS {
				if lhs == nt {
					choices = append(choices, p)
					total += ruleWeight(g, p)
				}
			}
			u := rng.Float64() * total
			p := choices[len(choices)-1]
			for _, c := range choices {
				if u -= ruleWeight(g, c); u < 0 {
					p = c
					break
				}
			}
			r = append(r, p)
			for i := len(g.RHSNonterminals[p]) - 1; i >= 0; i-- {
				stack = append(stack, g.RHSNonterminals[p][i])
			}
		}
		if len(stack) > 0 || len(r) > 15 {
			continue
		}
		rules = append(rules, r)
		leaves, xs := 0, 0
		for t := range 15 {
			p := numRules - 1
			if t < len(r) {
				p = r[t]
			}
			row := make([]float32, numRules)
			row[p] = 1
			x = append(x, row...)
			if p >= 7 && p <= 10 {
				leaves++
				if p == 7 {
					xs++
				}
			}
		}
		labels = append(labels, float64(xs)/float64(leaves))
	}
	return x, labels, rules
}

func ruleWeight(g Grammar, p int) float64 {
	if len(g.RHSNonterminals[p]) > 0 {
		return 0.4
	}
	return 1
}

// dense cuts flat one-hot matrices into examples.
func dense(t testing.TB, x []float32) []models.Dense {
	t.Helper()
	ex, err := models.SplitDense(x, 15*numRules)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func tinyTrainer(t testing.TB, m *Model, elbo string) *models.Trainer[models.Dense] {
	t.Helper()
	e, err := models.ParseELBO(elbo)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := models.NewTrainer(m, models.TrainOptions{ELBO: e, Beta: models.FixedBeta(1e-3), LR: 1e-2,
		BatchSize: 32, GradClip: models.DefaultGradClip, Device: torch.CPU, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTinyTraining trains the grammar VAE with T-LBO for a few seconds on 400
// examples of 40 distinct random derivations: the training loss must fall by a
// third, and decoding encoder means and prior samples must give derivations
// that follow the grammar, at least 90% of them complete. (Evaluation-mode
// losses lag in so short a run: the batch-norm running statistics move with
// momentum 0.01, so validation is only checked to be finite.)
func TestTinyTraining(t *testing.T) {
	if err := torch.ManualSeed(2); err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t)
	tr := tinyTrainer(t, m, "t")
	px, py, prules := randomDerivations(40, 3)
	size := 15 * numRules
	var x []float32
	var y []float64
	var rules [][]int
	for i := range 400 {
		j := (i * 7) % 40
		x = append(x, px[j*size:(j+1)*size]...)
		y = append(y, py[j])
		rules = append(rules, prules[j])
	}
	train, val, err := models.Data[models.Dense]{Examples: dense(t, x), Labels: y}.Split(0.1)
	if err != nil {
		t.Fatal(err)
	}
	var first, last models.EpochReport
	err = tr.Fit(train, val, 25, nil, func(r models.EpochReport) error {
		if r.Epoch == 1 {
			first = r
		}
		last = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train %+v -> %+v, validation %+v", first.Train, last.Train, *last.Val)
	if !(last.Train.Rec < 0.67*first.Train.Rec) || !(last.Train.Total < first.Train.Total) || last.Train.Metric == 0 {
		t.Errorf("training loss did not fall: %+v -> %+v", first.Train, last.Train)
	}
	if v := last.Val; v == nil || math.IsNaN(v.Total) || math.IsInf(v.Total, 0) {
		t.Errorf("validation losses %+v", v)
	}
	means, err := m.EncodeMeans(x)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	prior := make([]float64, 200*m.LatentDim())
	for i := range prior {
		prior[i] = rng.NormFloat64()
	}
	for name, z := range map[string][]float64{"encoder means": means, "prior samples": prior} {
		decoded, err := m.Decode(z, DefaultAttempts, rng)
		if err != nil {
			t.Fatal(err)
		}
		valid, same := 0, 0
		for i, d := range decoded {
			if d == nil {
				continue
			}
			if !derives(testGrammar(), d) {
				t.Fatalf("%s: decoded %v does not follow the grammar", name, d)
			}
			valid++
			if name == "encoder means" && slices.Equal(d, rules[i]) {
				same++
			}
		}
		t.Logf("%s: %d/%d valid, %d reconstructed", name, valid, len(decoded), same)
		if valid < 9*len(decoded)/10 {
			t.Errorf("%s: only %d/%d valid", name, valid, len(decoded))
		}
	}
}
