package models

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	fixture "github.com/tlbo-native/tlbo-native/internal/fixture/torchfixture"

	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/nn"
)

// toyVAE is a linear VAE on vectors of 6 values with a 2-d latent space.
type toyVAE struct {
	nn.Base
	enc, dec *nn.Linear
}

func newToyVAE() *toyVAE {
	v := &toyVAE{enc: nn.NewLinear(6, 4), dec: nn.NewLinear(2, 6)}
	v.RegisterModule("enc", v.enc)
	v.RegisterModule("dec", v.dec)
	return v
}

func (v *toyVAE) LatentDim() int          { return 2 }
func (v *toyVAE) Device() torch.Device    { return torch.CPU }
func (v *toyVAE) Describe() (string, any) { return "toy", map[string]int{"latent": 2} }
func (v *toyVAE) Collate(sc *torch.Scope, ex []Dense) (Batch, error) {
	return CollateDense(sc, ex, []int64{6}, torch.CPU)
}
func (v *toyVAE) EncodeParams(b Batch) (mu, logStd *torch.Tensor) {
	h := v.enc.Forward(b.(DenseBatch).X)
	return h.Narrow(1, 0, 2), h.Narrow(1, 2, 2)
}
func (v *toyVAE) ReconstructionLoss(z *torch.Tensor, b Batch) *torch.Tensor {
	return torch.MSELoss(v.dec.Forward(z), b.(DenseBatch).X, torch.ReduceMean).MulScalar(6)
}

// toyData returns n points on a noisy 2-d plane in R^6 labelled by their
// first coordinate, every third one unlabelled.
func toyData(n int) Data[Dense] {
	rng := rand.New(rand.NewPCG(3, 4))
	d := Data[Dense]{Examples: make([]Dense, n), Labels: make([]float64, n)}
	for i := range n {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		x := make(Dense, 6)
		for j := range x {
			x[j] = float32(a*float64(j%3) + b*float64(j%2) + 0.05*rng.NormFloat64())
		}
		d.Examples[i] = x
		d.Labels[i] = a
		if i%3 == 2 {
			d.Labels[i] = math.NaN()
		}
	}
	return d
}

func toyTrainer(t *testing.T, elbo string) *Trainer[Dense] {
	t.Helper()
	if err := torch.ManualSeed(1); err != nil {
		t.Fatal(err)
	}
	e, err := ParseELBO(elbo)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(newToyVAE(), TrainOptions{ELBO: e, Beta: FixedBeta(0.01), LR: 1e-2, BatchSize: 32,
		GradClip: DefaultGradClip, Device: torch.CPU, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTrainerLossDecreases trains the toy VAE with every ELBO on data where a
// third of the points are unlabelled, and checks that the validation loss falls.
func TestTrainerLossDecreases(t *testing.T) {
	for _, elbo := range []string{"lbo", "tp", "s", "c", "c-hard", "lr", "t", "t-hard"} {
		tr := toyTrainer(t, elbo)
		train, val, err := toyData(300).Split(0.2)
		if err != nil {
			t.Fatal(err)
		}
		before, err := tr.Evaluate(val)
		if err != nil {
			t.Fatal(err)
		}
		var last EpochReport
		steps := 0
		err = tr.Fit(train, val, 15, func(i, n int, l Losses) { steps++ }, func(r EpochReport) error {
			last = r
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", elbo, err)
		}
		if steps != 15*(240/32) || tr.Step != steps || tr.Epoch != 15 {
			t.Errorf("%s: %d steps reported, trainer at step %d epoch %d", elbo, steps, tr.Step, tr.Epoch)
		}
		if last.Val == nil || !(last.Val.Total < 0.5*before.Total) {
			t.Errorf("%s: validation loss %v -> %+v", elbo, before.Total, last.Val)
		}
		if tr.Opts.ELBO.Metric.Kind != MetricNone && last.Train.Metric == 0 {
			t.Errorf("%s: metric term is zero", elbo)
		}
		if tr.Opts.ELBO.PredictTarget && last.Train.Pred == 0 {
			t.Errorf("%s: prediction term is zero", elbo)
		}
	}
}

func TestTrainerBadData(t *testing.T) {
	tr := toyTrainer(t, "t")
	d := toyData(10)
	d.Labels = nil
	if _, err := tr.TrainEpoch(d, nil); err == nil || !strings.Contains(err.Error(), "labelled") {
		t.Errorf("no labels for a metric ELBO: %v", err)
	}
	d = toyData(10)
	for i := range d.Examples {
		d.Examples[i] = d.Examples[i][:5]
	}
	if _, err := tr.TrainEpoch(d, nil); err == nil || !strings.Contains(err.Error(), "has 5 values, want 6") {
		t.Errorf("ragged input: %v", err)
	}
	d = toyData(10)
	d.Weights = []float64{1}
	if _, err := tr.TrainEpoch(d, nil); err == nil {
		t.Error("wrong number of weights: no error")
	}
}

// TestCheckpointRoundTrip saves a TP-LBO trainer, resumes it into a fresh one and
// checks weights, predictor, Adam state and counters; a reader expecting another
// network gets a clear error.
func TestCheckpointRoundTrip(t *testing.T) {
	tr := toyTrainer(t, "tp")
	tr.Data = &DataSettings{K: RankK(math.Inf(1)), ValFraction: 0.01, LabelledFraction: 0.5}
	if _, err := tr.TrainEpoch(toyData(100), nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "toy.pt")
	if err := tr.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeader(path, "toy")
	if err != nil {
		t.Fatal(err)
	}
	var model map[string]int
	if err := json.Unmarshal(h.Model, &model); err != nil || model["latent"] != 2 {
		t.Fatalf("model configuration %s: %v", h.Model, err)
	}
	if h.Training == nil || h.Training.Step != tr.Step || h.Training.ELBO.Name != "tp" {
		t.Fatalf("header %+v", h)
	}
	if _, err := ReadHeader(path, "expression-gvae"); err == nil || !strings.Contains(err.Error(), `is for network "toy"`) {
		t.Errorf("wrong network: %v", err)
	}
	fresh := toyTrainer(t, "tp")
	net, _, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	defer torch.CloseNamed(net)
	if err := fresh.VAE.LoadStateDict(net); err != nil {
		t.Fatal(err)
	}
	if err := fresh.Resume(path, *h.Training, ResumeOptions{}); err != nil {
		t.Fatal(err)
	}
	if fresh.Step != tr.Step || fresh.Epoch != 1 || fresh.LabelMax != tr.LabelMax {
		t.Errorf("resumed at step %d epoch %d range %v, want %d 1 %v", fresh.Step, fresh.Epoch, fresh.LabelMax, tr.Step, tr.LabelMax)
	}
	// The data settings (k +Inf, which JSON numbers cannot hold) and the
	// starting rate come back with the rest of the state.
	if got := fresh.State(); got.Data == nil || *got.Data != *tr.Data || got.LRInit != tr.Opts.LR {
		t.Errorf("resumed data settings %+v, starting rate %v; want %+v and %v", got.Data, got.LRInit, *tr.Data, tr.Opts.LR)
	}
	// The same batch and seed must now give the same step on both trainers.
	d := toyData(32)
	for _, x := range []*Trainer[Dense]{tr, fresh} {
		if err := torch.ManualSeed(9); err != nil {
			t.Fatal(err)
		}
		if _, err := x.TrainBatch(d.Examples, d.Labels); err != nil {
			t.Fatal(err)
		}
	}
	a, b := tr.Predictor.StateDict(), fresh.Predictor.StateDict()
	for i := range a {
		if !slices.Equal(fixture.Float64s(t, a[i].Tensor), fixture.Float64s(t, b[i].Tensor)) {
			t.Fatalf("%s differs after a resumed step", a[i].Name)
		}
	}
}

// TestRankKJSON: a rank-weight k is a JSON number, +Inf the string "inf";
// anything else is refused with the value named.
func TestRankKJSON(t *testing.T) {
	for _, c := range []struct {
		k    RankK
		json string
	}{{1e-3, `1e-3`}, {RankK(math.Inf(1)), `"inf"`}, {0.1, `0.1`}} {
		b, err := json.Marshal(c.k)
		if err != nil {
			t.Fatal(err)
		}
		var back RankK
		if err := json.Unmarshal(b, &back); err != nil || back != c.k {
			t.Errorf("k %v: JSON %s read back as %v (%v)", c.k, b, back, err)
		}
		if err := json.Unmarshal([]byte(c.json), &back); err != nil || back != c.k {
			t.Errorf("JSON %s: %v (%v), want %v", c.json, back, err, c.k)
		}
	}
	for _, bad := range []string{`"Infinity"`, `"-inf"`, `true`, `[1]`} {
		var k RankK
		if err := json.Unmarshal([]byte(bad), &k); err == nil || !strings.Contains(err.Error(), "rank-weight k") {
			t.Errorf("JSON %s: %v, want an error naming the rank-weight k", bad, err)
		}
	}
}

// TestResumeFreshOptimizer: a checkpoint without its Adam state is refused
// (ErrNoOptimizerState) unless ResumeOptions.FreshOptimizer, which resumes
// the counters with new Adam moments, and the header then records the step
// at which Adam started again, also across a later resume.
func TestResumeFreshOptimizer(t *testing.T) {
	tr := toyTrainer(t, "lbo")
	if _, err := tr.TrainEpoch(toyData(100), nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "toy.pt")
	if err := tr.Save(path, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(AdamPath(path)); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeader(path, "toy")
	if err != nil {
		t.Fatal(err)
	}
	refused := toyTrainer(t, "lbo")
	err = refused.Resume(path, *h.Training, ResumeOptions{})
	if !errors.Is(err, ErrNoOptimizerState) || !strings.Contains(err.Error(), AdamPath(path)) {
		t.Fatalf("resume without the optimiser state: %v, want ErrNoOptimizerState naming %s", err, AdamPath(path))
	}
	fresh := toyTrainer(t, "lbo")
	if err := fresh.Resume(path, *h.Training, ResumeOptions{FreshOptimizer: true}); err != nil {
		t.Fatal(err)
	}
	if fresh.Step != tr.Step || fresh.Epoch != 1 {
		t.Errorf("resumed at step %d epoch %d, want %d 1", fresh.Step, fresh.Epoch, tr.Step)
	}
	if _, err := fresh.TrainEpoch(toyData(100), nil); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "again.pt")
	if err := fresh.Save(again, nil); err != nil {
		t.Fatal(err)
	}
	h2, err := ReadHeader(again, "toy")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h2.Training.FreshOptimizer, []int{tr.Step}) {
		t.Errorf("header records a fresh optimiser at %v, want [%d]", h2.Training.FreshOptimizer, tr.Step)
	}
	// The optimiser state is there now: an exact resume keeps the record.
	exact := toyTrainer(t, "lbo")
	if err := exact.Resume(again, *h2.Training, ResumeOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := exact.State().FreshOptimizer; !slices.Equal(got, h2.Training.FreshOptimizer) {
		t.Errorf("after an exact resume the record is %v, want %v", got, h2.Training.FreshOptimizer)
	}
}

// TestPlateau follows Keras' ReduceLROnPlateau (factor 0.2, patience 1,
// floor 1e-4, min_delta 1e-4) and ModelCheckpoint's best epochs on a
// sequence of validation losses.
func TestPlateau(t *testing.T) {
	p := KerasPlateau()
	lr := 1e-3
	for i, c := range []struct {
		val    float64
		best   bool
		nextLR float64
	}{
		{5, true, 1e-3},
		{4, true, 1e-3},
		{3.99995, true, 2e-4}, // better, but by less than min_delta: counts as a stall
		{4.5, false, 1e-4},    // 2e-4 * 0.2 = 4e-5, floored at 1e-4
		{4.6, false, 1e-4},    // at the floor: unchanged
		{3, true, 1e-4},
	} {
		var best bool
		best, lr = p.Epoch(c.val, lr)
		if best != c.best || math.Abs(lr-c.nextLR) > 1e-15 {
			t.Errorf("epoch %d (val %v): best %v lr %v, want %v %v", i, c.val, best, lr, c.best, c.nextLR)
		}
	}
	if err := (&Plateau{Factor: 1, Patience: 1}).Validate(); err == nil {
		t.Error("factor 1 accepted")
	}
}

// TestTorchPlateau follows PyTorch's ReduceLROnPlateau (threshold 1e-4
// relative, the rate lowered after more than patience bad epochs, the count
// restarted after a reduction) with T-LBO's expression settings scaled down:
// factor 0.2, patience 2, floor lr/10.
func TestTorchPlateau(t *testing.T) {
	p := TorchPlateau(0.2, 2, 1e-4)
	lr := 1e-3
	for i, c := range []struct {
		val    float64
		best   bool
		nextLR float64
	}{
		{5, true, 1e-3},
		{4, true, 1e-3},
		{3.9999, true, 1e-3},  // better, by less than 4 * 1e-4: bad epoch 1
		{4.5, false, 1e-3},    // bad epoch 2
		{4.6, false, 2e-4},    // bad epoch 3 > patience: lowered
		{3.99, true, 2e-4},    // better by more than the threshold: the count restarts
		{3.999, false, 2e-4},  // bad epoch 1
		{3.9999, false, 2e-4}, // bad epoch 2
		{4, false, 1e-4},      // bad epoch 3: 2e-4 * 0.2 floored at 1e-4
		{1, true, 1e-4},
	} {
		var best bool
		best, lr = p.Epoch(c.val, lr)
		if best != c.best || math.Abs(lr-c.nextLR) > 1e-15 {
			t.Errorf("epoch %d (val %v): best %v lr %v, want %v %v", i, c.val, best, lr, c.best, c.nextLR)
		}
	}
	// min_lr = lr (the topology schedule): never lowered.
	p, lr = TorchPlateau(0.2, 0, 1e-3), 1e-3
	for _, v := range []float64{3, 4, 5, 6} {
		if _, lr = p.Epoch(v, lr); lr != 1e-3 {
			t.Fatalf("val %v: lr %v with min_lr = lr", v, lr)
		}
	}
}

// TestPlateauWaitsForAnnealing checks that Fit applies the plateau schedule
// only once the KL weight is final: every annealing epoch is the latest best
// and keeps the learning rate.
func TestPlateauWaitsForAnnealing(t *testing.T) {
	tr := toyTrainer(t, "lbo")
	tr.Opts.Beta = BetaSchedule{Init: 1e-4, Final: 1, Warmup: 0, Every: 1, Factor: 1.1}
	tr.Plateau = KerasPlateau()
	train, val, err := toyData(300).Split(0.2)
	if err != nil {
		t.Fatal(err)
	}
	var reports []EpochReport
	err = tr.Fit(train, val, 4, nil, func(r EpochReport) error {
		reports = append(reports, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 7 steps per epoch: beta reaches 1 after about 97 steps, i.e. in the 14th epoch.
	for _, r := range reports {
		if !r.Best || r.LR != 1e-2 {
			t.Errorf("annealing epoch %d: best %v lr %v, want true and the initial 0.01", r.Epoch, r.Best, r.LR)
		}
	}
	if tr.Plateau.HasBest {
		t.Error("the plateau schedule saw an annealing epoch")
	}
}

// smallBatchVAE is the toy VAE encoding at most 3 examples a batch.
type smallBatchVAE struct {
	*toyVAE
	sizes []int
}

func (v *smallBatchVAE) EncodeBatchSize() int { return 3 }

func (v *smallBatchVAE) Collate(sc *torch.Scope, ex []Dense) (Batch, error) {
	v.sizes = append(v.sizes, len(ex))
	return v.toyVAE.Collate(sc, ex)
}

// TestEncodeMeansBatchSize: EncodeMeans keeps to a network's own batch size
// and gives the same means as one batch.
func TestEncodeMeansBatchSize(t *testing.T) {
	v := &smallBatchVAE{toyVAE: newToyVAE()}
	ex := make([]Dense, 7)
	for i := range ex {
		ex[i] = Dense{float32(i), 1, 0, -1, 0.5, float32(i) / 2}
	}
	got, err := EncodeMeans[Dense](v, ex)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.sizes, []int{3, 3, 1}) {
		t.Errorf("batches %v, want [3 3 1]", v.sizes)
	}
	want, err := EncodeMeans[Dense](v.toyVAE, ex)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6 {
			t.Fatalf("mean %d: %g in batches of 3, %g in one", i, got[i], want[i])
		}
	}
}

// TestEncodeMeansIn: chunks of whole batches give EncodeMeans's batches
// and means, each chunk prepared first; a prepare error ends the encoding
// before its chunk.
func TestEncodeMeansIn(t *testing.T) {
	ex := make([]Dense, 2*chunkExamples+5)
	for i := range ex {
		ex[i] = Dense{float32(i % 17), 1, 0, -1, 0.5, float32(i) / 2}
	}
	whole := &smallBatchVAE{toyVAE: newToyVAE()}
	want, err := EncodeMeans[Dense](whole, ex)
	if err != nil {
		t.Fatal(err)
	}
	v := &smallBatchVAE{toyVAE: whole.toyVAE}
	var firsts []int
	got, err := EncodeMeansIn[Dense](v, ex, func(first int, chunk []Dense) ([]Dense, error) {
		firsts = append(firsts, first)
		return chunk, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.sizes, whole.sizes) {
		t.Errorf("batches %v in chunks, %v at once", v.sizes, whole.sizes)
	}
	if size := (chunkExamples + 2) / 3 * 3; !slices.Equal(firsts, []int{0, size, 2 * size}) {
		t.Errorf("chunks start at %v, want multiples of %d", firsts, size)
	}
	if !slices.Equal(got, want) {
		t.Error("the means in chunks differ from EncodeMeans's")
	}
	halt := errors.New("halt")
	v.sizes = nil
	_, err = EncodeMeansIn[Dense](v, ex, func(first int, chunk []Dense) ([]Dense, error) {
		if first > 0 {
			return nil, halt
		}
		return chunk, nil
	})
	if !errors.Is(err, halt) || len(v.sizes) != (chunkExamples+2)/3 {
		t.Errorf("a prepare error at the second chunk: %v after %d batches, want it after the first chunk's %d",
			err, len(v.sizes), (chunkExamples+2)/3)
	}
}

// TestEpochResumedWithin: a checkpoint written within an epoch records the
// steps taken, and the resumed epoch takes only the rest, numbered within
// the whole epoch.
func TestEpochResumedWithin(t *testing.T) {
	tr := toyTrainer(t, "lbo")
	d := toyData(200)
	total := tr.StepsPerEpoch(d.Len())
	if total < 4 {
		t.Fatalf("%d steps an epoch: the test needs at least 4", total)
	}
	path := filepath.Join(t.TempDir(), "toy.pt")
	var saveErr error
	if _, err := tr.TrainEpoch(d, func(i, n int, _ Losses) {
		if i == 3 {
			saveErr = tr.Save(path, nil)
		}
	}); err != nil || saveErr != nil {
		t.Fatal(err, saveErr)
	}
	if tr.Epoch != 1 || tr.EpochStep != 0 || tr.Step != total {
		t.Fatalf("after an epoch: epoch %d, epoch step %d, step %d (of %d)", tr.Epoch, tr.EpochStep, tr.Step, total)
	}
	h, err := ReadHeader(path, "toy")
	if err != nil {
		t.Fatal(err)
	}
	if h.Training.EpochStep != 3 || h.Training.Step != 3 || h.Training.Epoch != 0 {
		t.Fatalf("checkpoint within the epoch: %+v", *h.Training)
	}
	fresh := toyTrainer(t, "lbo")
	if err := fresh.Resume(path, *h.Training, ResumeOptions{}); err != nil {
		t.Fatal(err)
	}
	var seen []int
	if _, err := fresh.TrainEpoch(d, func(i, n int, _ Losses) {
		if n != total {
			t.Errorf("step %d of %d, want of %d", i, n, total)
		}
		seen = append(seen, i)
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != total-3 || seen[0] != 4 || seen[len(seen)-1] != total {
		t.Errorf("resumed epoch took steps %v, want 4..%d", seen, total)
	}
	if fresh.Epoch != 1 || fresh.EpochStep != 0 || fresh.Step != total {
		t.Errorf("after the resumed epoch: epoch %d, epoch step %d, step %d, want 1, 0, %d", fresh.Epoch, fresh.EpochStep, fresh.Step, total)
	}
}

// TestStepDecay: Fit multiplies the learning rate by the decay's factor
// every Every steps, counted over the whole training.
func TestStepDecay(t *testing.T) {
	tr := toyTrainer(t, "lbo")
	tr.Decay = &StepDecay{Factor: 0.5, Every: 3}
	d := toyData(240)
	steps := 2 * tr.StepsPerEpoch(d.Len())
	if err := tr.Fit(d, Data[Dense]{}, 2, nil, nil); err != nil {
		t.Fatal(err)
	}
	if want := 1e-2 * math.Pow(0.5, float64(steps/3)); math.Abs(tr.Adam().Opts.LR-want) > 1e-15 {
		t.Errorf("after %d steps: lr %v, want %v", steps, tr.Adam().Opts.LR, want)
	}
	tr.Decay = &StepDecay{Factor: 0.5}
	if err := tr.Fit(d, Data[Dense]{}, 1, nil, nil); err == nil {
		t.Error("a decay every 0 steps accepted")
	}
}

// TestWeightedValidation: validation data with weights is evaluated on as
// many examples drawn with replacement in proportion to them (here all
// weight on one example), the same draw for the same seed and epoch.
func TestWeightedValidation(t *testing.T) {
	tr := toyTrainer(t, "t")
	val := toyData(30)
	val.Weights = make([]float64, val.Len())
	val.Weights[4] = 1
	copies := Data[Dense]{}
	for range val.Len() {
		copies.Examples = append(copies.Examples, val.Examples[4])
		copies.Labels = append(copies.Labels, val.Labels[4])
	}
	eval := func(f func() (Losses, error)) Losses {
		t.Helper()
		if err := torch.ManualSeed(7); err != nil {
			t.Fatal(err)
		}
		l, err := f()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	drawn := eval(func() (Losses, error) { return tr.validate(val) })
	if want := eval(func() (Losses, error) { return tr.Evaluate(copies) }); drawn.Total != want.Total {
		t.Errorf("validation drawn with the weights: loss %v, want %v (the weighted example %d times)", drawn.Total, want.Total, val.Len())
	}
	val.Weights = nil
	if all := eval(func() (Losses, error) { return tr.validate(val) }); all.Total == drawn.Total {
		t.Errorf("validation without weights: loss %v, the same as the weighted draw", all.Total)
	}
}

// TestPlanSteps: the batches PlanSteps returns are those TrainSteps then
// draws (seen by an Augment that draws nothing), with weights and without,
// and planning draws nothing from the sampler.
func TestPlanSteps(t *testing.T) {
	tr := toyTrainer(t, "lbo")
	defer tr.Close()
	d := toyData(100)
	for i := range d.Examples {
		d.Examples[i][0] = float32(i) // the position, to tell the examples apart
	}
	weights := make([]float64, d.Len())
	for i := range weights {
		weights[i] = 1 / float64(1+i)
	}
	for _, w := range [][]float64{nil, weights} {
		d.Weights = w
		plan, err := tr.PlanSteps(d, 4)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := tr.PlanSteps(d, 4)
		if !reflect.DeepEqual(plan, again) {
			t.Fatal("planning twice gave other batches: PlanSteps drew from the sampler")
		}
		var drawn [][]int
		tr.Augment = func(ex []Dense, _ *rand.Rand) []Dense {
			rows := make([]int, len(ex))
			for k, e := range ex {
				rows[k] = int(e[0])
			}
			drawn = append(drawn, rows)
			return ex
		}
		if _, err := tr.TrainSteps(d, 4, nil); err != nil {
			t.Fatal(err)
		}
		tr.Augment = nil
		if len(plan) != 4 || len(plan[0]) != 32 || !reflect.DeepEqual(plan, drawn) {
			t.Errorf("weights %v: planned %v, drawn %v", w != nil, plan, drawn)
		}
	}
}
