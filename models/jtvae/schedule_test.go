package jtvae

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/torch"
)

// randomTree returns a random tree of n nodes (each node linked to an
// earlier one, neighbours shuffled) with labels below vocab, a one-atom
// graph and no assembly.
func randomTree(rng *rand.Rand, n, vocab int) Example {
	t := Tree{Labels: make([]int64, n), Neighbors: make([][]int32, n)}
	for x := range n {
		t.Labels[x] = int64(rng.IntN(vocab))
		if x > 0 {
			p := int32(rng.IntN(x))
			t.Neighbors[x] = append(t.Neighbors[x], p)
			t.Neighbors[p] = append(t.Neighbors[p], int32(x))
		}
	}
	for _, nb := range t.Neighbors {
		rng.Shuffle(len(nb), func(i, j int) { nb[i], nb[j] = nb[j], nb[i] })
	}
	atoms := make([]float32, AtomFeatures)
	atoms[0] = 1
	return Example{Tree: t, Graph: Graph{Atoms: atoms}}
}

// longestPath is the number of edges of the tree's longest path.
func longestPath(t Tree) int {
	far := func(from int32) (int32, int) {
		dist := map[int32]int{from: 0}
		stack, best, at := []int32{from}, 0, from
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, y := range t.Neighbors[x] {
				if _, ok := dist[y]; !ok {
					dist[y] = dist[x] + 1
					if dist[y] > best {
						best, at = dist[y], y
					}
					stack = append(stack, y)
				}
			}
		}
		return at, best
	}
	end, _ := far(0)
	_, d := far(end)
	return d
}

// TestLevelScheduleIsSynchronous: computing each tree message once in
// dependency order gives depthT synchronous sweeps: the tree vectors and
// every message, for trees within depthT (levels = longest path) and deeper
// ones (levels = depthT, the deep messages' partial values computed too).
func TestLevelScheduleIsSynchronous(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	if err := torch.ManualSeed(3); err != nil {
		t.Fatal(err)
	}
	const depth = 6
	m, err := New(Config{VocabSize: 7, Hidden: 16, Latent: 4, LatentTree: 2, DepthT: depth, DepthG: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var shallow, deep int
	for trial := range 40 {
		ex := []Example{randomTree(rng, 1+rng.IntN(14), 7), randomTree(rng, 1+rng.IntN(14), 7)}
		path := max(longestPath(ex[0].Tree), longestPath(ex[1].Tree))
		sc := torch.NewScope()
		levels, err := collate(sc, torch.CPU, m.cfg, ex)
		if err != nil {
			t.Fatal(err)
		}
		sweeps, err := collateWith(&builder{sc: sc, dev: torch.CPU, sweepOnly: true}, m.cfg, ex)
		if err != nil {
			t.Fatal(err)
		}
		if got := levels.tree.levelCount(); levels.tree.iterations != 1 || got != min(path, depth) {
			t.Errorf("trial %d: %d levels (%d iterations) for a longest path of %d edges", trial, got, levels.tree.iterations, path)
		}
		torch.NoGrad(func() {
			a, aMess := m.encodeTree(levels)
			b, bMess := m.encodeTree(sweeps)
			if err := closeTo(values(t, a), values(t, b), 1e-5); err != nil {
				t.Errorf("trial %d (longest path %d): level schedule vs sweeps: %v", trial, path, err)
			}
			bd := &builder{sc: sc, dev: torch.CPU}
			aRows := aMess.IndexSelect(0, bd.ints(levels.tree.rows))
			bRows := bMess.IndexSelect(0, bd.ints(sweeps.tree.rows))
			if err := closeTo(values(t, aRows), values(t, bRows), 1e-5); err != nil {
				t.Errorf("trial %d (longest path %d): messages, level schedule vs sweeps: %v", trial, path, err)
			}
		})
		if path > depth {
			deep++
			levelGrads, sweepGrads := treeGrads(t, m, levels), treeGrads(t, m, sweeps)
			for name, g := range levelGrads {
				if err := closeTo(g, sweepGrads[name], 1e-5); err != nil {
					t.Errorf("trial %d (longest path %d): gradient of %s, level schedule vs sweeps: %v", trial, path, name, err)
				}
			}
		} else {
			shallow++
		}
		sc.Close()
	}
	if shallow < 5 || deep < 5 {
		t.Errorf("%d shallow and %d deep batches: the test needs both", shallow, deep)
	}
}

// treeGrads returns the gradients of the tree vectors' sum of squares with
// respect to the parameters (by name) that get one.
func treeGrads(t *testing.T, m *Model, b *Batch) map[string][]float64 {
	t.Helper()
	if err := m.ZeroGrad(); err != nil {
		t.Fatal(err)
	}
	sc := torch.NewScope()
	defer sc.Close()
	vecs, table := m.encodeTree(b)
	sc.Own(vecs)
	sc.Own(table)
	if err := sc.Own(sc.Own(vecs.Square()).Sum()).Backward(); err != nil {
		t.Fatal(err)
	}
	grads := map[string][]float64{}
	for _, p := range m.NamedParameters() {
		g, err := p.Tensor.Grad()
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if g != nil {
			grads[p.Name] = values(t, sc.Own(g))
		}
	}
	if len(grads) == 0 {
		t.Fatal("no parameter has a gradient")
	}
	return grads
}

// TestEncoderDepthMatters guards the depth-3 fixture: it must exercise trees
// that 3 sweeps do not reach through.
func TestEncoderDepthMatters(t *testing.T) {
	f := readFixture(t, fixtureDir+"parity.npz")
	if err := closeTo(f.floats(t, "mean_depth3"), f.floats(t, "mean"), 1e-4); err == nil {
		t.Error("the fixture's means at depth 3 and 20 agree: no tree is deeper than 3")
	}
}

func TestCollateBadInput(t *testing.T) {
	f := readFixture(t, fixtureDir+"parity.npz")
	cfg := Config{VocabSize: 780, Hidden: 8, Latent: 4, LatentTree: 2, DepthT: 3, DepthG: 2}
	for _, c := range []struct {
		name, want string
		edit       func(e *Example)
	}{
		{"label", "outside the vocabulary", func(e *Example) { e.Tree.Labels[0] = 780 }},
		{"one-way edge", "not a node linked back", func(e *Example) { e.Tree.Neighbors[1] = nil }},
		{"cycle", "do not make a tree", func(e *Example) {
			e.Tree.Labels = append(e.Tree.Labels, 1)
			e.Tree.Neighbors = append(e.Tree.Neighbors, nil)
		}},
		{"atoms", "atom feature values", func(e *Example) { e.Graph.Atoms = e.Graph.Atoms[:5] }},
		{"bond", "joins atoms", func(e *Example) { e.Graph.Bonds[0] = [2]int32{0, 999} }},
		{"bond features", "bond feature values", func(e *Example) { e.Graph.BondFeatures = nil }},
		{"group label", "label", func(e *Example) { e.Assembly[0].Label = 99 }},
		{"injection", "injection", func(e *Example) {
			c := &e.Assembly[0].Candidates[0]
			c.Injections = append(c.Injections, [3]int32{0, 0, 0})
		}},
	} {
		ex := f.examples(t)
		c.edit(&ex[0])
		sc := torch.NewScope()
		_, err := collate(sc, torch.CPU, cfg, ex)
		sc.Close()
		if err == nil || !strings.Contains(err.Error(), "example 0") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming example 0 and %q", c.name, err, c.want)
		}
	}
	sc := torch.NewScope()
	defer sc.Close()
	if _, err := collate(sc, torch.CPU, cfg, nil); err == nil {
		t.Error("empty batch: no error")
	}
}

// TestTrainerSteps: the shared trainer (T-LBO's ELBO: soft triplet loss on
// the sampled z) runs on JT-VAE batches and lowers the loss on a fixed batch.
func TestTrainerSteps(t *testing.T) {
	f := readFixture(t, fixtureDir+"parity.npz")
	ex := f.examples(t)
	m := parityModel(t, f, true, 20)
	elbo, err := models.ParseELBO("t")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := models.NewTrainer[Example](m, models.TrainOptions{ELBO: elbo, Beta: models.FixedBeta(1e-3), LR: 1e-3,
		BatchSize: len(ex), GradClip: models.DefaultGradClip, Device: torch.CPU, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.SetLabelRange(0, 1); err != nil {
		t.Fatal(err)
	}
	y := []float64{0.1, 0.9, 0.4, 0.5, 0.05, 0.7}
	// The step losses are noisy (z is sampled) and libtorch's reductions
	// may sum in any order: 25 steps lower the loss by about 10%, so the 5%
	// asked for holds whatever the noise (15 steps gave 5-9%).
	const trainSteps = 25
	var first, last models.Losses
	var live, collected int64
	for step := range trainSteps {
		l, err := tr.TrainBatch(ex, y)
		if err != nil {
			t.Fatal(err)
		}
		if step == 0 {
			first = l
		}
		if step == 1 { // Adam's state exists from the first step on
			live, collected = torch.LiveTensors(), torch.CollectedTensors()
		}
		last = l
	}
	// Every tensor of a step must be freed with it, by its scope: one left
	// to the garbage collector holds native memory the collector does not see.
	if n := torch.LiveTensors() - live; n != 0 {
		t.Errorf("%d more live tensors after %d more steps", n, trainSteps-2)
	}
	if n := torch.CollectedTensors() - collected; n != 0 {
		t.Errorf("%d tensors of the steps were freed by the finalizer, not by their scope", n)
	}
	t.Logf("rec first %.4f last %.4f", first.Rec, last.Rec)
	if !(last.Rec < 0.95*first.Rec) {
		t.Errorf("reconstruction loss %.4g after %d steps, first %.4g", last.Rec, trainSteps, first.Rec)
	}
	checkTerms(t, last)
	val, err := tr.Evaluate(models.Data[Example]{Examples: ex, Labels: y})
	if err != nil {
		t.Fatal(err)
	}
	checkTerms(t, val)
}

// checkTerms checks the JT-VAE's reconstruction terms in a trainer's
// losses: named in order, the three losses adding up to the reconstruction
// (float32 sums), accuracies in [0, 1].
func checkTerms(t *testing.T, l models.Losses) {
	t.Helper()
	want := []string{"word", "topo", "assm", "word_acc", "topo_acc", "assm_acc"}
	if len(l.Terms) != len(want) {
		t.Fatalf("terms %+v, want %v", l.Terms, want)
	}
	for i, term := range l.Terms {
		if term.Name != want[i] {
			t.Errorf("term %d is %q, want %q", i, term.Name, want[i])
		}
		if i >= 3 && (term.Value < 0 || term.Value > 1) {
			t.Errorf("%s = %g, not a share", term.Name, term.Value)
		}
	}
	if sum := l.Terms[0].Value + l.Terms[1].Value + l.Terms[2].Value; math.Abs(sum-l.Rec) > 1e-4*l.Rec {
		t.Errorf("word + topo + assm = %.6g, rec %.6g", sum, l.Rec)
	}
	if !strings.Contains(l.String(), " word_acc ") {
		t.Errorf("losses line %q does not show the accuracies", l.String())
	}
}

// TestSingleClusterBatch: molecules of one cluster and one atom (no tree
// message, no bond) encode, give a finite loss and a gradient.
func TestSingleClusterBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := New(Config{VocabSize: 7, Hidden: 16, Latent: 4, LatentTree: 2, DepthT: 6, DepthG: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sc := torch.NewScope()
	defer sc.Close()
	b, err := m.Collate(sc, []Example{randomTree(rng, 1, 7), randomTree(rng, 1, 7)})
	if err != nil {
		t.Fatal(err)
	}
	mu, logStd := m.EncodeParams(b)
	loss := m.ReconstructionLoss(mu.Add(logStd.Exp()), b)
	if v, err := loss.Item(); err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		t.Fatalf("loss %v, %v", v, err)
	}
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
}
