package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tlbo-native/tlbo-native/models/weighting"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/optim"
)

// DefaultGradClip is the gradient-norm clipping of the paper's training runs.
const DefaultGradClip = 20

// TrainOptions configures a Trainer.
type TrainOptions struct {
	ELBO ELBO
	Beta BetaSchedule
	// LR is Adam's learning rate.
	LR float64
	// BatchSize is the mini-batch size (smaller data sets use one batch of all).
	BatchSize int
	// GradClip bounds the joint gradient norm; 0 disables clipping.
	GradClip float64
	// Device is where the networks run; they are moved there by NewTrainer.
	Device torch.Device
	// Seed seeds the mini-batch sampler (libtorch is seeded by the caller).
	Seed uint64
}

// Validate checks the options.
func (o TrainOptions) Validate() error {
	if err := o.ELBO.Validate(); err != nil {
		return err
	}
	if err := o.Beta.Validate(); err != nil {
		return err
	}
	switch {
	case !(o.LR > 0):
		return fmt.Errorf("train options: learning rate %v, want > 0", o.LR)
	case o.BatchSize < 1:
		return fmt.Errorf("train options: batch size %d, want >= 1", o.BatchSize)
	case !(o.GradClip >= 0):
		return fmt.Errorf("train options: gradient clip %v, want >= 0", o.GradClip)
	}
	return nil
}

// Losses are the components of the loss, averaged over batches.
type Losses struct {
	Total  float64 `json:"total"`
	Rec    float64 `json:"rec"`
	KL     float64 `json:"kl"`
	Pred   float64 `json:"pred"`
	Metric float64 `json:"metric"`
	// Beta is the KL weight used (the last one of an epoch).
	Beta float64 `json:"beta"`
	// Terms are the reconstruction's own terms and accuracies, for a VAE
	// that reports them (ReconstructionTermer), in its order.
	Terms []Term `json:"terms,omitempty"`
}

// Term is one named term of a reconstruction loss, or an accuracy.
type Term struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// ReconstructionTermer is a VAE whose reconstruction loss has terms worth
// following in training (the JT-VAE's word, topology and assembly losses and
// accuracies); the trainer reports them with the losses.
type ReconstructionTermer interface {
	// ReconstructionTerms is ReconstructionLoss with its terms: names and
	// detached scalars, the same names for every batch.
	ReconstructionTerms(z *torch.Tensor, b Batch) (rec *torch.Tensor, names []string, terms []*torch.Tensor)
}

// Add accumulates l with weight w (for running means).
func (s *Losses) Add(l Losses, w float64) {
	s.Total += w * l.Total
	s.Rec += w * l.Rec
	s.KL += w * l.KL
	s.Pred += w * l.Pred
	s.Metric += w * l.Metric
	s.Beta = l.Beta
	for i, t := range l.Terms {
		if i == len(s.Terms) {
			s.Terms = append(s.Terms, Term{Name: t.Name})
		}
		s.Terms[i].Value += w * t.Value
	}
}

// Scaled returns every loss component times f (the KL weight is kept).
func (s Losses) Scaled(f float64) Losses {
	out := Losses{Total: s.Total * f, Rec: s.Rec * f, KL: s.KL * f, Pred: s.Pred * f, Metric: s.Metric * f, Beta: s.Beta}
	for _, t := range s.Terms {
		out.Terms = append(out.Terms, Term{Name: t.Name, Value: t.Value * f})
	}
	return out
}

// String shows every loss component, then the reconstruction's terms.
func (s Losses) String() string {
	out := fmt.Sprintf("loss %.4f rec %.4f kl %.3f pred %.4f metric %.4f beta %.3g", s.Total, s.Rec, s.KL, s.Pred, s.Metric, s.Beta)
	for _, t := range s.Terms {
		out += fmt.Sprintf(" %s %.4f", t.Name, t.Value)
	}
	return out
}

// Trainer trains a VAE with an ELBO variant: weighted sampling of mini-batches,
// the beta schedule, the metric and target-prediction terms on the labelled
// part of each batch (the metric loss on min-max normalised labels, the
// target prediction on raw ones, as the reference), gradient clipping and Adam.
// One Trainer serves pretraining and every retraining of the BO loop.
type Trainer[E any] struct {
	VAE VAE[E]
	// Predictor is the target-prediction head, nil unless ELBO.PredictTarget.
	// It persists across retrainings (Restart keeps it).
	Predictor *TargetPredictor
	Opts      TrainOptions
	// Step counts optimiser steps (it drives the beta schedule); Epoch counts
	// finished epochs; EpochStep the steps taken in the current epoch.
	Step, Epoch, EpochStep int
	// LabelMin and LabelMax normalise the labels: set from the training set at
	// each epoch (or by SetLabelRange).
	LabelMin, LabelMax float64
	// Augment, when set, transforms every sampled mini-batch (data
	// augmentation), drawing from the sampler's seeded generator.
	Augment Augment[E]
	// Plateau, when set, lowers the learning rate when the validation loss
	// stalls and marks the best epochs (EpochReport.Best); Fit applies it.
	Plateau *Plateau
	// Decay, when set, multiplies the learning rate by its factor every
	// Every steps; Fit applies it (pretraining).
	Decay *StepDecay
	// SeedSteps seeds libtorch's generator before every training step and
	// every validation pass from the seed and the step (or epoch) number, so
	// that the sampler's generator and the counters, which a checkpoint
	// saves, determine the rest of the training: a resumed training then
	// equals the uninterrupted one (on one thread). Pretraining sets it.
	SeedSteps bool
	// Init, when set, names the checkpoint the weights started from (a
	// fine-tuning); checkpoints record it.
	Init *Origin
	// Data, when set, records how the caller split and weighted the data
	// set; checkpoints keep it so that a resumed training uses the same
	// examples.
	Data *DataSettings
	cost *costClock // nil until StartCost
	// lrInit is the learning rate the training started at (0: unknown, a
	// training resumed from a checkpoint that did not record it).
	lrInit float64
	// freshOptimizer: the steps at which a resume started Adam afresh.
	freshOptimizer []int
	hasRange       bool
	adam           *optim.Adam
	params         []*torch.Tensor
	pcg            *rand.PCG
	rng            *rand.Rand
}

// StepDecay multiplies the learning rate by Factor every Every optimiser
// steps (counted over the whole training), as PyTorch's ExponentialLR stepped
// every Every steps in icml18-jtnn's fast_molvae.
type StepDecay struct {
	Factor float64 `json:"factor"`
	Every  int     `json:"every"`
}

// Validate checks the settings.
func (d *StepDecay) Validate() error {
	if !(d.Factor > 0 && d.Factor <= 1) || d.Every < 1 {
		return fmt.Errorf("learning-rate decay: factor %v (want in (0, 1]) every %d steps (want >= 1)", d.Factor, d.Every)
	}
	return nil
}

// Augment transforms a mini-batch of examples, e.g. random rotations of
// images; it returns new examples and leaves its input unchanged.
type Augment[E any] func(examples []E, rng *rand.Rand) []E

// samplerStream is the PCG stream of the mini-batch sampler.
const samplerStream = 0x9e3779b97f4a7c15

// NewTrainer moves vae (and, for TP-LBO, a new target predictor) to the device
// and sets up Adam over their parameters.
func NewTrainer[E any](vae VAE[E], opts TrainOptions) (*Trainer[E], error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t := &Trainer[E]{VAE: vae, Opts: opts, lrInit: opts.LR}
	t.seedSampler(opts.Seed)
	if err := vae.To(opts.Device); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	t.params = vae.Parameters()
	if opts.ELBO.PredictTarget {
		t.Predictor = NewTargetPredictor(vae.LatentDim())
		if err := t.Predictor.Err(); err != nil {
			return nil, fmt.Errorf("trainer: target predictor: %w", err)
		}
		if err := t.Predictor.To(opts.Device); err != nil {
			return nil, fmt.Errorf("trainer: %w", err)
		}
		t.params = append(t.params, t.Predictor.Parameters()...)
	}
	t.adam = optim.NewAdam(t.params, optim.DefaultAdam(opts.LR))
	return t, nil
}

// Close releases the target predictor (the VAE belongs to the caller).
func (t *Trainer[E]) Close() {
	if t.Predictor != nil {
		t.Predictor.Close()
	}
}

// Restart prepares a retraining as the reference does: Adam starts afresh
// and the sampler is seeded from seed, while the weights, the target
// predictor and the label range carry over.
func (t *Trainer[E]) Restart(seed uint64) {
	t.adam = optim.NewAdam(t.params, optim.DefaultAdam(t.Opts.LR))
	t.seedSampler(seed)
	t.Opts.Seed = seed
}

// seedSampler starts the sampler's generator (mini-batches, augmentation)
// from seed.
func (t *Trainer[E]) seedSampler(seed uint64) {
	t.pcg = rand.NewPCG(seed, samplerStream)
	t.rng = rand.New(t.pcg)
}

// SamplerState returns the state of the sampler's generator, which a
// checkpoint keeps so that a resumed training draws the same mini-batches.
func (t *Trainer[E]) SamplerState() ([]byte, error) { return t.pcg.MarshalBinary() }

// SetSamplerState restores a state that SamplerState returned.
func (t *Trainer[E]) SetSamplerState(state []byte) error {
	if err := t.pcg.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("trainer: sampler state: %w", err)
	}
	return nil
}

// Streams of the seeds SeedSteps derives.
const (
	stepSeedStream = 1
	valSeedStream  = 2
	valSampleSeeds = 3
)

// derivedSeed mixes a seed, a stream and a counter into a new seed
// (splitmix64's finaliser).
func derivedSeed(seed, stream, i uint64) uint64 {
	z := seed + stream*0x9e3779b97f4a7c15 + i*0xd1b54a32d192ed03
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Adam returns the optimiser (for saving its state).
func (t *Trainer[E]) Adam() *optim.Adam { return t.adam }

// SetLabelRange fixes the label normalisation (it is otherwise set from the
// training set at every epoch).
func (t *Trainer[E]) SetLabelRange(lo, hi float64) error {
	if !(hi >= lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return fmt.Errorf("trainer: bad label range [%v, %v]", lo, hi)
	}
	t.LabelMin, t.LabelMax, t.hasRange = lo, hi, true
	return nil
}

// normalise maps a raw label to [0, 1] with the current range (0 when the
// range is a single value).
func (t *Trainer[E]) normalise(y float64) float64 {
	if t.LabelMax == t.LabelMin {
		return 0
	}
	return (y - t.LabelMin) / (t.LabelMax - t.LabelMin)
}

// labelled returns the rows of the batch with a label and their normalised
// labels.
func (t *Trainer[E]) labelled(y []float64) (rows []int64, ny []float64) {
	for i, v := range y {
		if !math.IsNaN(v) {
			rows = append(rows, int64(i))
			ny = append(ny, t.normalise(v))
		}
	}
	return rows, ny
}

// batchLoss holds the detached components of a batch's loss: [total rec kl
// pred metric], then the reconstruction's terms named by terms.
type batchLoss struct {
	parts *torch.Tensor
	terms []string
}

// loss builds the loss of a batch in scope sc and returns the total and its
// components.
func (t *Trainer[E]) loss(sc *torch.Scope, examples []E, y []float64, beta float64) (total *torch.Tensor, bl batchLoss, err error) {
	b, err := t.VAE.Collate(sc, examples)
	if err != nil {
		return nil, bl, err
	}
	mu, logStd := t.VAE.EncodeParams(b)
	z := Reparameterize(mu, logStd)
	kl := KL(mu, logStd)
	rec, names, terms := t.reconstruction(z, b)
	total = rec.Add(kl.MulScalar(beta))
	zero := rec.MulScalar(0).Detach()
	pred, metric := zero, zero
	e := t.Opts.ELBO
	if rows, ny := t.labelled(y); e.NeedsLabels() && len(rows) > 0 {
		idx := sc.Own(torch.FromInt64(rows)).To(t.Opts.Device)
		zl := z.IndexSelect(0, idx)
		yl := sc.Own(torch.FromFloat64(ny)).To(t.Opts.Device).ToDType(z.DType())
		if e.PredictTarget {
			// The head predicts raw labels, as the reference's (its
			// prediction loss precedes the min-max normalisation that only
			// the metric loss needs).
			raw := make([]float64, len(rows))
			for i, r := range rows {
				raw[i] = y[r]
			}
			yr := sc.Own(torch.FromFloat64(raw)).To(t.Opts.Device).ToDType(z.DType())
			pred = t.Predictor.Loss(zl, yr)
			total = total.Add(pred.MulScalar(e.PredWeight))
		}
		if e.Metric.Kind != MetricNone && len(rows) >= 2 {
			metric = e.Metric.Loss(zl, yl)
			total = total.Add(metric.MulScalar(e.MetricWeight))
		}
	}
	scalars := append([]*torch.Tensor{total, rec, kl, pred, metric}, terms...)
	for i := 5; i < len(scalars); i++ {
		scalars[i] = scalars[i].ToDType(total.DType())
	}
	return total, batchLoss{parts: torch.Stack(scalars, 0).Detach(), terms: names}, nil
}

// reconstruction returns the reconstruction loss of latent samples z, with
// its terms where the VAE reports them.
func (t *Trainer[E]) reconstruction(z *torch.Tensor, b Batch) (*torch.Tensor, []string, []*torch.Tensor) {
	if r, ok := t.VAE.(ReconstructionTermer); ok {
		return r.ReconstructionTerms(z, b)
	}
	return t.VAE.ReconstructionLoss(z, b), nil, nil
}

// read copies the components to the host.
func (bl batchLoss) read(beta float64) (Losses, error) {
	v, err := bl.parts.Float64s()
	if err != nil {
		return Losses{}, err
	}
	l := Losses{Total: v[0], Rec: v[1], KL: v[2], Pred: v[3], Metric: v[4], Beta: beta}
	for i, name := range bl.terms {
		l.Terms = append(l.Terms, Term{Name: name, Value: v[5+i]})
	}
	if math.IsNaN(l.Total) || math.IsInf(l.Total, 0) {
		return l, fmt.Errorf("loss is %v (rec %v, kl %v, pred %v, metric %v)", l.Total, l.Rec, l.KL, l.Pred, l.Metric)
	}
	return l, nil
}

// TrainBatch takes one optimiser step on a mini-batch of examples with raw
// labels y (NaN unlabelled; nil for none). Beta comes from the schedule at
// the current step.
func (t *Trainer[E]) TrainBatch(examples []E, y []float64) (Losses, error) {
	if len(examples) == 0 || (y != nil && len(y) != len(examples)) {
		return Losses{}, fmt.Errorf("train batch: %d examples and %d labels", len(examples), len(y))
	}
	if !t.hasRange && y != nil {
		if lo, hi, ok := LabelRange(y); ok {
			t.LabelMin, t.LabelMax, t.hasRange = lo, hi, true
		}
	}
	t.setTraining(true)
	sc := torch.NewScope()
	defer sc.Close()
	beta := t.Opts.Beta.At(t.Step)
	total, bl, err := t.loss(sc, examples, y, beta)
	if err != nil {
		return Losses{}, fmt.Errorf("train step %d: %w", t.Step, err)
	}
	l, err := bl.read(beta)
	if err != nil {
		return l, fmt.Errorf("train step %d: %w", t.Step, err)
	}
	if err := t.optimise(total); err != nil {
		return l, fmt.Errorf("train step %d: %w", t.Step, err)
	}
	t.Step++
	return l, nil
}

func (t *Trainer[E]) setTraining(on bool) {
	t.VAE.SetTraining(on)
	if t.Predictor != nil {
		t.Predictor.SetTraining(on)
	}
}

func (t *Trainer[E]) optimise(total *torch.Tensor) error {
	if err := t.adam.ZeroGrad(); err != nil {
		return err
	}
	if err := total.Backward(); err != nil {
		return err
	}
	if t.Opts.GradClip > 0 {
		if _, err := optim.ClipGradNorm(t.params, t.Opts.GradClip); err != nil {
			return err
		}
	}
	return t.adam.Step()
}

// StepFunc reports progress within an epoch: step i (from 1) of n and the
// losses of that step.
type StepFunc func(i, n int, l Losses)

// StepsPerEpoch returns the number of mini-batches of one epoch over n
// examples: n / B (at least one; smaller data sets use one batch of all).
func (t *Trainer[E]) StepsPerEpoch(n int) int { return max(1, n/min(t.Opts.BatchSize, max(n, 1))) }

// TrainSteps takes steps optimiser steps on mini-batches drawn with
// replacement in proportion to d.Weights. The labels' min-max range is taken
// from d first. It returns the mean losses.
func (t *Trainer[E]) TrainSteps(d Data[E], steps int, progress StepFunc) (Losses, error) {
	if err := d.Validate(t.Opts.ELBO.NeedsLabels()); err != nil {
		return Losses{}, err
	}
	if steps < 1 {
		return Losses{}, fmt.Errorf("train: %d steps, want >= 1", steps)
	}
	if lo, hi, ok := LabelRange(d.Labels); ok {
		t.LabelMin, t.LabelMax, t.hasRange = lo, hi, true
	}
	sampler, bs, err := t.batchSampler(d, t.rng)
	if err != nil {
		return Losses{}, err
	}
	examples := make([]E, bs)
	var y []float64
	if d.Labels != nil {
		y = make([]float64, bs)
	}
	var sum Losses
	err = torch.OnOneThread(func() error {
		for i := range steps {
			for k, j := range sampler.Sample(bs) {
				examples[k] = d.Examples[j]
				if y != nil {
					y[k] = d.Labels[j]
				}
			}
			batch := examples
			if t.Augment != nil {
				batch = t.Augment(examples, t.rng)
			}
			if t.SeedSteps {
				if err := torch.ManualSeed(derivedSeed(t.Opts.Seed, stepSeedStream, uint64(t.Step))); err != nil {
					return err
				}
			}
			l, err := t.TrainBatch(batch, y)
			if err != nil {
				return err
			}
			sum.Add(l, 1)
			if progress != nil {
				progress(i+1, steps, l)
			}
		}
		return nil
	})
	if err != nil {
		return Losses{}, err
	}
	return sum.Scaled(1 / float64(steps)), nil
}

// batchSampler returns TrainSteps' sampler of mini-batches over d (weights
// d.Weights, else uniform) drawing from rng, and the batch size.
func (t *Trainer[E]) batchSampler(d Data[E], rng *rand.Rand) (*weighting.WeightedSampler, int, error) {
	weights := d.Weights
	if weights == nil {
		weights = make([]float64, d.Len())
		for i := range weights {
			weights[i] = 1
		}
	}
	sampler, err := weighting.NewWeightedSampler(weights, rng)
	return sampler, min(t.Opts.BatchSize, d.Len()), err
}

// PlanSteps returns the positions in d of the mini-batches that
// TrainSteps(d, steps) will draw next, drawn from a copy of the sampler's
// generator, which is left as it is. They are TrainSteps' batches when
// Augment draws nothing from the generator (it is given it), so that a
// caller can prepare them ahead (the molecule task featurises them while
// the steps run).
func (t *Trainer[E]) PlanSteps(d Data[E], steps int) ([][]int, error) {
	state, err := t.pcg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("plan steps: %w", err)
	}
	pcg := &rand.PCG{}
	if err := pcg.UnmarshalBinary(state); err != nil {
		return nil, fmt.Errorf("plan steps: %w", err)
	}
	sampler, bs, err := t.batchSampler(d, rand.New(pcg))
	if err != nil {
		return nil, err
	}
	plan := make([][]int, max(steps, 0))
	for i := range plan {
		plan[i] = sampler.Sample(bs)
	}
	return plan, nil
}

// TrainEpoch runs one epoch: N/B mini-batches (N examples, batch size B)
// drawn with replacement in proportion to d.Weights, and returns the mean
// losses.
//
// An epoch resumed from a checkpoint written within it (EpochStep > 0) takes
// only its remaining steps, and its mean losses are theirs. progress sees
// step numbers within the whole epoch, after EpochStep is updated, so it can
// save the trainer.
func (t *Trainer[E]) TrainEpoch(d Data[E], progress StepFunc) (Losses, error) {
	total := t.StepsPerEpoch(d.Len())
	done := min(t.EpochStep, total-1)
	l, err := t.TrainSteps(d, total-done, func(i, _ int, l Losses) {
		t.EpochStep = done + i
		if progress != nil {
			progress(done+i, total, l)
		}
	})
	if err != nil {
		return Losses{}, fmt.Errorf("epoch %d: %w", t.Epoch+1, err)
	}
	t.Epoch++
	t.EpochStep = 0
	return l, nil
}

// Evaluate returns the mean losses over d in evaluation mode (batch-norm
// running statistics, no gradients), visiting every example once in order,
// with beta at its final value as the reference validates. Labels are
// normalised with the training range.
func (t *Trainer[E]) Evaluate(d Data[E]) (Losses, error) {
	if err := d.Validate(false); err != nil {
		return Losses{}, fmt.Errorf("evaluate: %w", err)
	}
	t.setTraining(false)
	defer t.setTraining(true)
	n := d.Len()
	beta := t.Opts.Beta.Final
	var sum Losses
	var err error
	torch.NoGrad(func() {
		for lo := 0; lo < n && err == nil; lo += t.Opts.BatchSize {
			hi := min(lo+t.Opts.BatchSize, n)
			var y []float64
			if d.Labels != nil {
				y = d.Labels[lo:hi]
			}
			var l Losses
			l, err = t.evalBatch(d.Examples[lo:hi], y, beta)
			sum.Add(l, float64(hi-lo))
		}
	})
	if err != nil {
		return Losses{}, fmt.Errorf("evaluate: %w", err)
	}
	return sum.Scaled(1 / float64(n)), nil
}

// validate returns the validation losses of the epoch just finished. With
// weights on val it evaluates len(val) examples drawn with replacement in
// proportion to them, as the authors' validation loader draws with the rank
// weights (a WeightedRandomSampler over the validation set); the draw depends
// only on the seed and the epoch, so a resumed training draws the same.
// Without weights it visits every example once (Evaluate).
func (t *Trainer[E]) validate(val Data[E]) (Losses, error) {
	if t.SeedSteps {
		if err := torch.ManualSeed(derivedSeed(t.Opts.Seed, valSeedStream, uint64(t.Epoch))); err != nil {
			return Losses{}, err
		}
	}
	if val.Weights == nil {
		return t.Evaluate(val)
	}
	if err := val.Validate(false); err != nil {
		return Losses{}, fmt.Errorf("evaluate: %w", err)
	}
	rng := rand.New(rand.NewPCG(derivedSeed(t.Opts.Seed, valSampleSeeds, uint64(t.Epoch)), samplerStream))
	sampler, err := weighting.NewWeightedSampler(val.Weights, rng)
	if err != nil {
		return Losses{}, fmt.Errorf("evaluate: %w", err)
	}
	drawn := Data[E]{Examples: make([]E, val.Len())}
	if val.Labels != nil {
		drawn.Labels = make([]float64, val.Len())
	}
	for k, j := range sampler.Sample(val.Len()) {
		drawn.Examples[k] = val.Examples[j]
		if val.Labels != nil {
			drawn.Labels[k] = val.Labels[j]
		}
	}
	return t.Evaluate(drawn)
}

func (t *Trainer[E]) evalBatch(examples []E, y []float64, beta float64) (Losses, error) {
	sc := torch.NewScope()
	defer sc.Close()
	_, bl, err := t.loss(sc, examples, y, beta)
	if err != nil {
		return Losses{}, err
	}
	return bl.read(beta)
}

// EpochReport summarises one epoch of Fit.
type EpochReport struct {
	Epoch int
	Train Losses
	Val   *Losses // nil without validation data
	// Best reports the lowest validation loss so far (always true without
	// validation or without a Plateau); LR is the learning rate of the next
	// epoch.
	Best bool
	LR   float64
	// TrainTime is the time of the training steps, Duration that of the
	// whole epoch with validation.
	TrainTime, Duration time.Duration
}

// Fit trains for epochs epochs, evaluating on val (if it has examples) after
// each (drawn with val.Weights when set, see validate) and applying Decay
// and Plateau; onEpoch (may be nil) can stop training by returning an
// error, which Fit returns. onStep sees the learning rate of the next step.
func (t *Trainer[E]) Fit(train, val Data[E], epochs int, onStep StepFunc, onEpoch func(EpochReport) error) error {
	if t.Decay != nil {
		if err := t.Decay.Validate(); err != nil {
			return err
		}
		inner := onStep
		onStep = func(i, n int, l Losses) {
			if t.Step%t.Decay.Every == 0 {
				t.adam.SetLR(t.adam.Opts.LR * t.Decay.Factor)
			}
			if inner != nil {
				inner(i, n, l)
			}
		}
	}
	for range epochs {
		start := time.Now()
		tl, err := t.TrainEpoch(train, onStep)
		if err != nil {
			return err
		}
		rep := EpochReport{Epoch: t.Epoch, Train: tl, TrainTime: time.Since(start), Best: true}
		if val.Len() > 0 {
			vl, err := t.validate(val)
			if err != nil {
				return fmt.Errorf("epoch %d: validation: %w", t.Epoch, err)
			}
			rep.Val = &vl
			// The plateau schedule and the best epoch start once the KL
			// weight has reached its final value: during annealing the
			// validation loss rises with the weight, which would cut the
			// learning rate and keep a barely regularised epoch (the
			// authors' callbacks run from the first epoch, but their 300
			// epochs leave annealing far behind).
			if t.Plateau != nil && t.Opts.Beta.At(t.Step) >= t.Opts.Beta.Final {
				var lr float64
				rep.Best, lr = t.Plateau.Epoch(vl.Total, t.adam.Opts.LR)
				t.adam.SetLR(lr)
			}
		}
		rep.LR = t.adam.Opts.LR
		rep.Duration = time.Since(start)
		if onEpoch != nil {
			if err := onEpoch(rep); err != nil {
				return err
			}
		}
	}
	return nil
}
