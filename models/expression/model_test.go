package expression

import (
	"math/rand/v2"
	"slices"
	"testing"

	fixture "github.com/tlbo-native/tlbo-native/internal/fixture/torchfixture"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// Nonterminals of the test grammar (docs/design.md section 3).
const (
	ntS, ntT, ntNothing = 0, 1, 2
	numRules            = 12
)

// testGrammar is the expression grammar of docs/design.md as plain data:
// S->S+T | S*T | S/T | T ; T->(S) | sin(S) | exp(S) | x | 1 | 2 | 3 ; Nothing->None.
func testGrammar() Grammar {
	st := []int{ntS, ntT}
	return Grammar{
		LHS:             []int{ntS, ntS, ntS, ntS, ntT, ntT, ntT, ntT, ntT, ntT, ntT, ntNothing},
		RHSNonterminals: [][]int{st, st, st, {ntT}, {ntS}, {ntS}, {ntS}, {}, {}, {}, {}, {}},
		NumNonterminals: 3, Start: ntS, Padding: ntNothing,
	}
}

func newTestModel(t *testing.T) *Model {
	t.Helper()
	m, err := New(DefaultConfig(testGrammar()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestMatchesPyTorch loads the state dict that PyTorch saved for the network of
// docs/design.md (gen_gvae_fixture.py) and compares encoder outputs, logits and the
// masked reconstruction loss in evaluation and training mode, gradients and the
// updated batch-norm statistics. Tolerance: 1e-5 of the largest magnitude
// (float32; gradients 1e-4).
func TestMatchesPyTorch(t *testing.T) {
	fx := fixture.Load(t, "models", "gvae_io.npz")
	sd, err := torch.Load("../../testdata/models/gvae_state.pt")
	if err != nil {
		t.Fatal(err)
	}
	defer torch.CloseNamed(sd)
	m := newTestModel(t)
	if err := m.LoadStateDict(sd); err != nil {
		t.Fatal(err)
	}
	sc := torch.NewScope()
	defer sc.Close()
	x, z := sc.Own(fx["x"].Clone()), sc.Own(fx["z"].Clone())
	b := models.DenseBatch{X: x}

	m.SetTraining(false)
	torch.NoGrad(func() {
		mu, s := m.EncodeParams(b)
		fixture.CloseScaled(t, "eval mu", fixture.Float64s(t, mu), fixture.Float64s(t, fx["eval_mu"]), 1e-5)
		fixture.CloseScaled(t, "eval log-std", fixture.Float64s(t, s), fixture.Float64s(t, fx["eval_log_std"]), 1e-5)
		fixture.CloseScaled(t, "eval logits", fixture.Float64s(t, m.Logits(z)), fixture.Float64s(t, fx["eval_logits"]), 1e-5)
		fixture.CloseScaled(t, "eval rec", fixture.Float64s(t, m.ReconstructionLoss(z, b)), fixture.Float64s(t, fx["eval_rec"]), 1e-5)
	})

	m.SetTraining(true)
	mu, s := m.EncodeParams(b)
	rec := m.ReconstructionLoss(z, b)
	fixture.CloseScaled(t, "train mu", fixture.Float64s(t, mu), fixture.Float64s(t, fx["train_mu"]), 1e-5)
	fixture.CloseScaled(t, "train rec", fixture.Float64s(t, rec), fixture.Float64s(t, fx["train_rec"]), 1e-5)
	if err := rec.Add(mu.Sum()).Add(s.Square().Sum()).Backward(); err != nil {
		t.Fatal(err)
	}
	state := map[string]*torch.Tensor{}
	for _, n := range m.StateDict() {
		state[n.Name] = n.Tensor
	}
	for name, want := range fx {
		switch {
		case len(name) > 5 && name[:5] == "grad/":
			g, err := state[name[5:]].Grad()
			if err != nil || g == nil {
				t.Fatalf("%s: no gradient (%v)", name, err)
			}
			fixture.CloseScaled(t, name, fixture.Float64s(t, sc.Own(g)), fixture.Float64s(t, want), 1e-4)
		case len(name) > 6 && name[:6] == "after/":
			fixture.CloseScaled(t, name, fixture.Float64s(t, state[name[6:]]), fixture.Float64s(t, want), 1e-5)
		}
	}
}

func TestGrammarValidate(t *testing.T) {
	if err := testGrammar().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(g *Grammar){
		"no productions":         func(g *Grammar) { g.LHS, g.RHSNonterminals = nil, nil },
		"ragged":                 func(g *Grammar) { g.RHSNonterminals = g.RHSNonterminals[1:] },
		"lhs out of range":       func(g *Grammar) { g.LHS[0] = 7 },
		"padding on a rhs":       func(g *Grammar) { g.RHSNonterminals[3] = []int{ntNothing} },
		"two padding rules":      func(g *Grammar) { g.LHS[10] = ntNothing },
		"start is padding":       func(g *Grammar) { g.Start = ntNothing },
		"nonterminal no rule":    func(g *Grammar) { g.NumNonterminals = 4; g.RHSNonterminals[3] = []int{3} },
		"padding rule with rhs":  func(g *Grammar) { g.RHSNonterminals[11] = []int{ntT} },
		"production names count": func(g *Grammar) { g.Productions = []string{"S -> T"} },
	}
	for name, mutate := range bad {
		g := testGrammar()
		mutate(&g)
		if err := g.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// oneHotLogits returns logits that favour the given rules (then padding) by gap.
func oneHotLogits(rules []int, gap float32) []float32 {
	l := make([]float32, 15*numRules)
	for t := range 15 {
		p := numRules - 1
		if t < len(rules) {
			p = rules[t]
		}
		l[t*numRules+p] = gap
	}
	return l
}

func TestSampleFollowsGrammar(t *testing.T) {
	g := testGrammar()
	// sin(x) + 3: S->S+T, S->T, T->sin(S), S->T, T->x, T->3
	want := []int{0, 3, 5, 3, 7, 10}
	rules, ok := g.sample(oneHotLogits(want, 10), 15, nil)
	if !ok || !slices.Equal(rules, want) {
		t.Errorf("greedy: %v %v, want %v", rules, ok, want)
	}
	// Logits that prefer a disallowed rule must still give a derivation: at the
	// first step only S rules are allowed, so T->x (column 7) cannot be chosen.
	rules, _ = g.sample(oneHotLogits([]int{7, 7, 7}, 10), 15, nil)
	if len(rules) == 0 || rules[0] > 3 {
		t.Errorf("masking: %v", rules)
	}
	// Always S->S+T: the derivation never ends within 15 rules.
	if rules, ok := g.sample(oneHotLogits([]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 100), 15, nil); ok {
		t.Errorf("endless derivation reported valid: %v", rules)
	}
	// Gumbel sampling: with a small gap the favoured derivation is the most
	// frequent, and every sample follows the grammar.
	rng := rand.New(rand.NewPCG(1, 1))
	hits := 0
	for range 200 {
		rules, ok := g.sample(oneHotLogits(want, 4), 15, rng)
		if ok && slices.Equal(rules, want) {
			hits++
		}
		if ok && !derives(g, rules) {
			t.Fatalf("sample %v does not follow the grammar", rules)
		}
	}
	if hits < 100 || hits == 200 {
		t.Errorf("favoured derivation drawn %d times of 200", hits)
	}
}

// derives replays rules as a leftmost derivation and reports whether it is complete.
func derives(g Grammar, rules []int) bool {
	stack := []int{g.Start}
	for _, r := range rules {
		if len(stack) == 0 || g.LHS[r] != stack[len(stack)-1] {
			return false
		}
		stack = stack[:len(stack)-1]
		for i := len(g.RHSNonterminals[r]) - 1; i >= 0; i-- {
			stack = append(stack, g.RHSNonterminals[r][i])
		}
	}
	return len(stack) == 0
}

func TestConfigValidate(t *testing.T) {
	for name, c := range map[string]Config{
		"short":     {MaxLen: 5, Latent: 2, Conv: [3]int{2, 3, 4}, Dense: 1, Hidden: 1, GRULayers: 1, Grammar: testGrammar()},
		"no latent": {MaxLen: 15, Conv: [3]int{2, 3, 4}, Dense: 1, Hidden: 1, GRULayers: 1, Grammar: testGrammar()},
		"grammar":   {MaxLen: 15, Latent: 2, Conv: [3]int{2, 3, 4}, Dense: 1, Hidden: 1, GRULayers: 1},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
