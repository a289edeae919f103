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
}

// Add accumulates l with weight w (for running means).
func (s *Losses) Add(l Losses, w float64) {
	s.Total += w * l.Total
	s.Rec += w * l.Rec
	s.KL += w * l.KL
	s.Pred += w * l.Pred
	s.Metric += w * l.Metric
	s.Beta = l.Beta
}

// Scaled returns every loss component times f (the KL weight is kept).
func (s Losses) Scaled(f float64) Losses {
	return Losses{Total: s.Total * f, Rec: s.Rec * f, KL: s.KL * f, Pred: s.Pred * f, Metric: s.Metric * f, Beta: s.Beta}
}

// String shows every loss component.
func (s Losses) String() string {
	return fmt.Sprintf("loss %.4f rec %.4f kl %.3f pred %.4f metric %.4f beta %.3g", s.Total, s.Rec, s.KL, s.Pred, s.Metric, s.Beta)
}

// Trainer trains a VAE with an ELBO variant: weighted sampling of mini-batches,
// the beta schedule, the metric and target-prediction terms on the labelled
// part of each batch (min-max normalised labels), gradient clipping and Adam.
type Trainer struct {
	VAE VAE
	// Predictor is the target-prediction head, nil unless ELBO.PredictTarget.
	Predictor *TargetPredictor
	Opts      TrainOptions
	// Step counts optimiser steps (it drives the beta schedule); Epoch counts
	// finished epochs.
	Step, Epoch int
	// LabelMin and LabelMax normalise the labels: set from the training set at
	// each epoch (or by SetLabelRange).
	LabelMin, LabelMax float64
	hasRange           bool
	adam               *optim.Adam
	params             []*torch.Tensor
	rng                *rand.Rand
}

// NewTrainer moves vae (and, for TP-LBO, a new target predictor) to the device
// and sets up Adam over their parameters.
func NewTrainer(vae VAE, opts TrainOptions) (*Trainer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t := &Trainer{VAE: vae, Opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))}
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

// Adam returns the optimiser (for saving its state).
func (t *Trainer) Adam() *optim.Adam { return t.adam }

// SetLabelRange fixes the label normalisation (it is otherwise set from the
// training set at every epoch).
func (t *Trainer) SetLabelRange(lo, hi float64) error {
	if !(hi >= lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return fmt.Errorf("trainer: bad label range [%v, %v]", lo, hi)
	}
	t.LabelMin, t.LabelMax, t.hasRange = lo, hi, true
	return nil
}

// normalise maps a raw label to [0, 1] with the current range (0 when the
// range is a single value).
func (t *Trainer) normalise(y float64) float64 {
	if t.LabelMax == t.LabelMin {
		return 0
	}
	return (y - t.LabelMin) / (t.LabelMax - t.LabelMin)
}

// batch is one mini-batch in host memory.
type batch struct {
	x []float32
	y []float64 // raw labels, NaN unlabelled; nil when none
}

// gather copies the examples idx of d into a batch.
func gather(d Data, size int, idx []int) batch {
	b := batch{x: make([]float32, 0, len(idx)*size)}
	if d.Labels != nil {
		b.y = make([]float64, 0, len(idx))
	}
	for _, i := range idx {
		b.x = append(b.x, d.X[i*size:(i+1)*size]...)
		if d.Labels != nil {
			b.y = append(b.y, d.Labels[i])
		}
	}
	return b
}

// labelled returns the rows of the batch with a label and their normalised
// labels.
func (t *Trainer) labelled(y []float64) (rows []int64, ny []float64) {
	for i, v := range y {
		if !math.IsNaN(v) {
			rows = append(rows, int64(i))
			ny = append(ny, t.normalise(v))
		}
	}
	return rows, ny
}

// loss builds the loss of a batch in scope sc and returns the total and the
// stacked components [total rec kl pred metric].
func (t *Trainer) loss(sc *torch.Scope, b batch, beta float64) (total, parts *torch.Tensor) {
	shape := append([]int64{int64(len(b.x) / InputSize(t.VAE))}, t.VAE.InputShape()...)
	x := sc.Own(torch.FromFloat32(b.x, shape...)).To(t.Opts.Device)
	mu, logStd := t.VAE.EncodeParams(x)
	z := Reparameterize(mu, logStd)
	kl := KL(mu, logStd)
	rec := t.VAE.ReconstructionLoss(z, x)
	total = rec.Add(kl.MulScalar(beta))
	zero := rec.MulScalar(0).Detach()
	pred, metric := zero, zero
	e := t.Opts.ELBO
	if rows, ny := t.labelled(b.y); e.NeedsLabels() && len(rows) > 0 {
		idx := sc.Own(torch.FromInt64(rows)).To(t.Opts.Device)
		zl := z.IndexSelect(0, idx)
		yl := sc.Own(torch.FromFloat64(ny)).To(t.Opts.Device).ToDType(z.DType())
		if e.PredictTarget {
			pred = t.Predictor.Loss(zl, yl)
			total = total.Add(pred.MulScalar(e.PredWeight))
		}
		if e.Metric.Kind != MetricNone && len(rows) >= 2 {
			metric = e.Metric.Loss(zl, yl)
			total = total.Add(metric.MulScalar(e.MetricWeight))
		}
	}
	parts = torch.Stack([]*torch.Tensor{total, rec, kl, pred, metric}, 0).Detach()
	return total, parts
}

func readLosses(parts *torch.Tensor, beta float64) (Losses, error) {
	v, err := parts.Float64s()
	if err != nil {
		return Losses{}, err
	}
	l := Losses{Total: v[0], Rec: v[1], KL: v[2], Pred: v[3], Metric: v[4], Beta: beta}
	if math.IsNaN(l.Total) || math.IsInf(l.Total, 0) {
		return l, fmt.Errorf("loss is %v (rec %v, kl %v, pred %v, metric %v)", l.Total, l.Rec, l.KL, l.Pred, l.Metric)
	}
	return l, nil
}

// TrainBatch takes one optimiser step on a mini-batch: x holds whole examples,
// y their raw labels (NaN unlabelled; nil for none). Beta comes from the
// schedule at the current step.
func (t *Trainer) TrainBatch(x []float32, y []float64) (Losses, error) {
	size := InputSize(t.VAE)
	if len(x) == 0 || len(x)%size != 0 || (y != nil && len(y) != len(x)/size) {
		return Losses{}, fmt.Errorf("train batch: %d values and %d labels for examples of %d values", len(x), len(y), size)
	}
	if !t.hasRange && y != nil {
		if lo, hi, ok := labelRange(y); ok {
			t.LabelMin, t.LabelMax, t.hasRange = lo, hi, true
		}
	}
	t.VAE.SetTraining(true)
	if t.Predictor != nil {
		t.Predictor.SetTraining(true)
	}
	sc := torch.NewScope()
	defer sc.Close()
	beta := t.Opts.Beta.At(t.Step)
	total, parts := t.loss(sc, batch{x: x, y: y}, beta)
	l, err := readLosses(parts, beta)
	if err != nil {
		return l, fmt.Errorf("train step %d: %w", t.Step, err)
	}
	if err := t.optimise(total); err != nil {
		return l, fmt.Errorf("train step %d: %w", t.Step, err)
	}
	t.Step++
	return l, nil
}

func (t *Trainer) optimise(total *torch.Tensor) error {
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

// TrainEpoch runs one epoch: N/B mini-batches (N examples, batch size B) drawn
// with replacement in proportion to d.Weights. The labels' min-max range is
// taken from d first. It returns the mean losses.
func (t *Trainer) TrainEpoch(d Data, progress StepFunc) (Losses, error) {
	size := InputSize(t.VAE)
	if err := d.Validate(size, t.Opts.ELBO.NeedsLabels()); err != nil {
		return Losses{}, fmt.Errorf("train epoch: %w", err)
	}
	if lo, hi, ok := labelRange(d.Labels); ok {
		t.LabelMin, t.LabelMax, t.hasRange = lo, hi, true
	}
	n := d.Len(size)
	weights := d.Weights
	if weights == nil {
		weights = make([]float64, n)
		for i := range weights {
			weights[i] = 1
		}
	}
	sampler, err := weighting.NewWeightedSampler(weights, t.rng)
	if err != nil {
		return Losses{}, fmt.Errorf("train epoch: %w", err)
	}
	bs := min(t.Opts.BatchSize, n)
	steps := n / bs
	var sum Losses
	for i := range steps {
		b := gather(d, size, sampler.Sample(bs))
		l, err := t.TrainBatch(b.x, b.y)
		if err != nil {
			return Losses{}, fmt.Errorf("epoch %d: %w", t.Epoch+1, err)
		}
		sum.Add(l, 1)
		if progress != nil {
			progress(i+1, steps, l)
		}
	}
	t.Epoch++
	return sum.Scaled(1 / float64(steps)), nil
}

// Evaluate returns the mean losses over d in evaluation mode (batch-norm
// running statistics, no gradients), visiting every example once in order,
// with beta at its final value as the reference validates. Labels are
// normalised with the training range.
func (t *Trainer) Evaluate(d Data) (Losses, error) {
	size := InputSize(t.VAE)
	if err := d.Validate(size, false); err != nil {
		return Losses{}, fmt.Errorf("evaluate: %w", err)
	}
	t.VAE.SetTraining(false)
	if t.Predictor != nil {
		t.Predictor.SetTraining(false)
	}
	defer t.VAE.SetTraining(true)
	n := d.Len(size)
	beta := t.Opts.Beta.Final
	var sum Losses
	var err error
	torch.NoGrad(func() {
		for lo := 0; lo < n && err == nil; lo += t.Opts.BatchSize {
			hi := min(lo+t.Opts.BatchSize, n)
			idx := make([]int, hi-lo)
			for i := range idx {
				idx[i] = lo + i
			}
			var l Losses
			l, err = t.evalBatch(gather(d, size, idx), beta)
			sum.Add(l, float64(hi-lo))
		}
	})
	if err != nil {
		return Losses{}, fmt.Errorf("evaluate: %w", err)
	}
	return sum.Scaled(1 / float64(n)), nil
}

func (t *Trainer) evalBatch(b batch, beta float64) (Losses, error) {
	sc := torch.NewScope()
	defer sc.Close()
	_, parts := t.loss(sc, b, beta)
	return readLosses(parts, beta)
}

// EpochReport summarises one epoch of Fit.
type EpochReport struct {
	Epoch int
	Train Losses
	Val   *Losses // nil without validation data
	// TrainTime is the time of the training steps, Duration that of the
	// whole epoch with validation.
	TrainTime, Duration time.Duration
}

// Fit trains for epochs epochs, evaluating on val (if it has examples) after
// each; onEpoch (may be nil) can stop training by returning an error, which
// Fit returns.
func (t *Trainer) Fit(train, val Data, epochs int, onStep StepFunc, onEpoch func(EpochReport) error) error {
	for range epochs {
		start := time.Now()
		tl, err := t.TrainEpoch(train, onStep)
		if err != nil {
			return err
		}
		rep := EpochReport{Epoch: t.Epoch, Train: tl, TrainTime: time.Since(start)}
		if len(val.X) > 0 {
			vl, err := t.Evaluate(val)
			if err != nil {
				return fmt.Errorf("epoch %d: validation: %w", t.Epoch, err)
			}
			rep.Val = &vl
		}
		rep.Duration = time.Since(start)
		if onEpoch != nil {
			if err := onEpoch(rep); err != nil {
				return err
			}
		}
	}
	return nil
}
