package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tlbo-native/tlbo-native/internal/numpy"
	"github.com/tlbo-native/tlbo-native/torch"
)

// A checkpoint is three files side by side: FILE.pt, the network's state dict
// (plus the target predictor's tensors under "target_predictor.") in
// torch.save format, which Python's torch.load reads; FILE.json, the Header
// (network kind and configuration, ELBO and training state), so that later
// verbs rebuild the network without flags; and FILE.adam.pt, Adam's state,
// so that training can resume.

// CheckpointFormat identifies checkpoint headers.
const CheckpointFormat = "tlbo-native checkpoint"

// CheckpointVersion is the version of the header layout.
const CheckpointVersion = 1

// Header is the JSON file beside a checkpoint.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Network is the network kind, e.g. "expression-gvae".
	Network string `json:"network"`
	// Model is the network's own configuration (sizes, grammar...).
	Model json.RawMessage `json:"model"`
	// Training is the trainer's state; nil for an untrained network.
	Training *TrainingState `json:"training,omitempty"`
}

// TrainingState is what a trainer needs, besides tensors, to resume.
type TrainingState struct {
	ELBO ELBO         `json:"elbo"`
	Beta BetaSchedule `json:"beta"`
	// LR is the current learning rate, LRInit the one the training started
	// at (0: not recorded, in checkpoints written before it was kept).
	LR        float64 `json:"lr"`
	LRInit    float64 `json:"lr_init,omitempty"`
	BatchSize int     `json:"batch_size"`
	GradClip  float64 `json:"grad_clip"`
	Seed      uint64  `json:"seed"`
	Step      int     `json:"step"`
	Epoch     int     `json:"epoch"`
	// EpochStep counts the steps taken in the unfinished epoch Epoch+1 (a
	// checkpoint written within an epoch); resuming takes only the rest.
	EpochStep int `json:"epoch_step,omitempty"`
	// LabelMin and LabelMax are the label normalisation (valid when HasLabelRange).
	LabelMin      float64 `json:"label_min"`
	LabelMax      float64 `json:"label_max"`
	HasLabelRange bool    `json:"has_label_range"`
	// Plateau is the learning-rate schedule on the validation loss, with its
	// state (nil: none); Decay the step decay of the rate (nil: none).
	Plateau *Plateau   `json:"plateau,omitempty"`
	Decay   *StepDecay `json:"lr_decay,omitempty"`
	// Sampler is the state of the sampler's generator (mini-batches and
	// augmentation; checkpoints written before it was kept lack it).
	// SeedSteps says that libtorch's generator was seeded from the seed and
	// the step number (Trainer.SeedSteps). With both, a resumed training
	// equals the uninterrupted one on one thread.
	Sampler   []byte `json:"sampler_state,omitempty"`
	SeedSteps bool   `json:"seed_steps,omitempty"`
	// Augment says whether mini-batches were augmented (nil: not recorded).
	Augment *bool `json:"augment,omitempty"`
	// Init names the checkpoint whose weights the training started from (a
	// fine-tuning; nil: a new network).
	Init *Origin `json:"init,omitempty"`
	// Data is how the data set was split and weighted (nil: not recorded).
	Data *DataSettings `json:"data,omitempty"`
	// Cost is what the training has spent up to this state, over every run
	// that resumed it (nil: not counted, as in checkpoints written before it
	// was kept).
	Cost *Cost `json:"cost,omitempty"`
	// FreshOptimizer lists the steps at which the training resumed without
	// Adam's state (ResumeOptions.FreshOptimizer), so that the header says
	// where its optimiser started again.
	FreshOptimizer []int `json:"fresh_optimizer_at,omitempty"`
	// Train and Val are the last epoch's mean losses, for information.
	Train *Losses `json:"train_losses,omitempty"`
	Val   *Losses `json:"val_losses,omitempty"`
	// Best is set when the epoch this state ends was the best so far
	// (EpochReport.Best): a pretraining saves the same state as its
	// best-validation checkpoint too, which a resume can then complete when
	// that save was cut off.
	Best bool `json:"best,omitempty"`
}

// LastBeta returns the KL weight of the training's last step (the
// schedule's initial weight before any step): Beta.Final once its annealing
// is done, less for a training stopped before (icml18-jtnn's fast_molvae
// schedule heads for 1 but stands at 0.026 after 10 ZINC epochs).
func (s *TrainingState) LastBeta() float64 { return s.Beta.At(max(s.Step-1, 0)) }

// Origin identifies the checkpoint a fine-tuning started from: its file as
// given, its digest, and how far its own training had gone.
type Origin struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	ELBO   string `json:"elbo,omitempty"`
	Step   int    `json:"step"`
	Epoch  int    `json:"epoch"`
}

// HeaderPath returns the header path of a checkpoint: FILE.json for FILE.pt.
func HeaderPath(path string) string { return strings.TrimSuffix(path, filepath.Ext(path)) + ".json" }

// AdamPath returns the optimiser-state path of a checkpoint: FILE.adam.pt.
func AdamPath(path string) string { return strings.TrimSuffix(path, filepath.Ext(path)) + ".adam.pt" }

// ReadHeader reads the header beside the checkpoint path and checks that it is
// for the network kind want ("" accepts any).
func ReadHeader(path, want string) (Header, error) {
	hp := HeaderPath(path)
	raw, err := os.ReadFile(hp)
	if err != nil {
		return Header{}, fmt.Errorf("checkpoint %s: configuration: %w", path, err)
	}
	var h Header
	if err := json.Unmarshal(raw, &h); err != nil {
		return Header{}, fmt.Errorf("checkpoint configuration %s: %w", hp, err)
	}
	switch {
	case h.Format != CheckpointFormat:
		return Header{}, fmt.Errorf("checkpoint configuration %s: field format is %q, want %q", hp, h.Format, CheckpointFormat)
	case h.Version != CheckpointVersion:
		return Header{}, fmt.Errorf("checkpoint configuration %s: field version is %d, this program reads %d", hp, h.Version, CheckpointVersion)
	case h.Network == "":
		return Header{}, fmt.Errorf("checkpoint configuration %s: field network is empty", hp)
	case want != "" && h.Network != want:
		return Header{}, fmt.Errorf("checkpoint %s is for network %q, not %q", path, h.Network, want)
	}
	return h, nil
}

// writeJSONAtomic writes v as indented JSON to path through a temporary file
// in the same directory.
func writeJSONAtomic(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return numpy.AtomicWriteFile(path, func(w io.Writer) error {
		_, err := w.Write(append(raw, '\n'))
		return err
	})
}

// SaveCheckpoint writes a network's state dict to path, its header beside it
// and, when adam is not nil, the optimiser state to AdamPath(path). Each file
// is written atomically; the header goes last.
func SaveCheckpoint(path string, h Header, state, adam []torch.Named) error {
	h.Format, h.Version = CheckpointFormat, CheckpointVersion
	if adam != nil {
		if err := saveOnCPU(AdamPath(path), adam); err != nil {
			return fmt.Errorf("checkpoint %s: optimiser state: %w", path, err)
		}
	}
	if err := saveOnCPU(path, state); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return writeJSONAtomic(HeaderPath(path), h)
}

// saveOnCPU saves tensors after copying those on another device to the CPU,
// so that checkpoints of a CUDA run load anywhere (torch.load needs no
// map_location).
func saveOnCPU(path string, tensors []torch.Named) error {
	out := make([]torch.Named, len(tensors))
	var copies []*torch.Tensor
	defer func() {
		for _, t := range copies {
			t.Close()
		}
	}()
	for i, n := range tensors {
		out[i] = n
		if n.Tensor.Err() == nil && n.Tensor.Device() != torch.CPU {
			d := n.Tensor.Detach()
			c := d.To(torch.CPU)
			d.Close()
			copies = append(copies, c)
			out[i].Tensor = c
		}
	}
	return torch.Save(path, out)
}

// LoadState reads the state dict of a checkpoint and splits it into the
// network's tensors and the target predictor's (prefix removed; empty when
// there is none). The caller closes them (torch.CloseNamed).
func LoadState(path string) (network, predictor []torch.Named, err error) {
	sd, err := torch.Load(path)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	for _, n := range sd {
		if rest, ok := strings.CutPrefix(n.Name, PredictorPrefix); ok {
			predictor = append(predictor, torch.Named{Name: rest, Tensor: n.Tensor})
		} else {
			network = append(network, n)
		}
	}
	return network, predictor, nil
}

// prefixed returns sd with prefix added to every name.
func prefixed(prefix string, sd []torch.Named) []torch.Named {
	out := make([]torch.Named, len(sd))
	for i, n := range sd {
		out[i] = torch.Named{Name: prefix + n.Name, Tensor: n.Tensor}
	}
	return out
}

// ExactResume reports whether a training resumed from this state draws the
// same mini-batches and noise as the uninterrupted one would have (whether
// Adam's state is there is the resume's to find out).
func (st TrainingState) ExactResume() bool { return len(st.Sampler) > 0 && st.SeedSteps }

// State returns the trainer's resumable state (without tensors).
func (t *Trainer[E]) State() TrainingState {
	o := t.Opts
	sampler, _ := t.SamplerState() // a PCG always marshals
	augment := t.Augment != nil
	return TrainingState{ELBO: o.ELBO, Beta: o.Beta, LR: t.adam.Opts.LR, LRInit: t.lrInit, BatchSize: o.BatchSize, GradClip: o.GradClip,
		Seed: o.Seed, Step: t.Step, Epoch: t.Epoch, EpochStep: t.EpochStep, LabelMin: t.LabelMin, LabelMax: t.LabelMax, HasLabelRange: t.hasRange,
		Plateau: t.Plateau, Decay: t.Decay, Sampler: sampler, SeedSteps: t.SeedSteps, Augment: &augment, Init: t.Init, Data: t.Data,
		Cost: t.costState(), FreshOptimizer: t.freshOptimizer}
}

// costState returns the Cost to record, nil when it is not counted.
func (t *Trainer[E]) costState() *Cost {
	if t.cost == nil {
		return nil
	}
	c := t.Cost()
	return &c
}

// stateDict returns the network's tensors and the target predictor's,
// prefixed.
func (t *Trainer[E]) stateDict() []torch.Named {
	state := t.VAE.StateDict()
	if t.Predictor != nil {
		state = append(state, prefixed(PredictorPrefix, t.Predictor.StateDict())...)
	}
	return state
}

// Save writes a checkpoint of the trainer's networks and optimiser, with the
// network's kind and configuration and the training state in the header;
// last (may be nil) is the last epoch's report.
func (t *Trainer[E]) Save(path string, last *EpochReport) error {
	h, err := describe(path, t.VAE)
	if err != nil {
		return err
	}
	st := t.State()
	if last != nil {
		st.Train, st.Val, st.Best = &last.Train, last.Val, last.Best
	}
	h.Training = &st
	adam := t.adam.StateDict()
	defer torch.CloseNamed(adam)
	return SaveCheckpoint(path, h, t.stateDict(), adam)
}

// SaveWeights writes the networks' weights (the VAE and the target
// predictor) with a header but no optimiser state: a model version of the
// BO loop.
func (t *Trainer[E]) SaveWeights(path string) error {
	h, err := describe(path, t.VAE)
	if err != nil {
		return err
	}
	st := t.State()
	h.Training = &st
	return SaveCheckpoint(path, h, t.stateDict(), nil)
}

// LoadWeights replaces the networks' weights (the VAE and, when there is
// one, the target predictor) by those of the checkpoint at path, which must
// be of the same network kind and configuration.
func (t *Trainer[E]) LoadWeights(path string) error {
	kind, _ := t.VAE.Describe()
	h, err := ReadHeader(path, kind)
	if err != nil {
		return err
	}
	net, pred, err := LoadState(path)
	if err != nil {
		return err
	}
	defer torch.CloseNamed(net)
	defer torch.CloseNamed(pred)
	if err := t.VAE.LoadStateDict(net); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if t.Predictor != nil && len(pred) > 0 {
		if err := t.Predictor.LoadStateDict(pred); err != nil {
			return fmt.Errorf("checkpoint %s: target predictor: %w", path, err)
		}
	}
	if st := h.Training; st != nil && st.HasLabelRange {
		t.LabelMin, t.LabelMax, t.hasRange = st.LabelMin, st.LabelMax, true
	}
	return nil
}

// ErrNoOptimizerState is returned, wrapped, when a checkpoint to resume has
// no Adam state beside it and ResumeOptions.FreshOptimizer is not set.
var ErrNoOptimizerState = errors.New("optimiser state missing")

// ResumeOptions are what a resumed training may do without.
type ResumeOptions struct {
	// FreshOptimizer lets a checkpoint whose Adam state (FILE.adam.pt) is
	// absent, e.g. one committed without it to save space, resume with new
	// Adam moments; the counters, schedules, rate and sampler still come
	// from the header, which records the step (TrainingState.FreshOptimizer).
	// The training then no longer equals an uninterrupted one.
	FreshOptimizer bool
}

// Resume restores what a trainer made with the checkpoint's options needs
// beyond the network weights (loaded with the network): the target
// predictor, Adam's state, the step and epoch counters, the label range, the
// learning-rate schedules and, when the checkpoint has it, the sampler's
// generator (else the sampler keeps the trainer's seeding). SeedSteps is the
// caller's to set (pretraining does; the BO loop's retraining does not).
func (t *Trainer[E]) Resume(path string, st TrainingState, opts ResumeOptions) error {
	net, pred, err := LoadState(path)
	if err != nil {
		return err
	}
	torch.CloseNamed(net)
	defer torch.CloseNamed(pred)
	if t.Predictor != nil {
		if err := t.Predictor.LoadStateDict(pred); err != nil {
			return fmt.Errorf("checkpoint %s: target predictor: %w", path, err)
		}
	}
	t.freshOptimizer = slices.Clone(st.FreshOptimizer)
	switch _, err := os.Stat(AdamPath(path)); {
	case errors.Is(err, fs.ErrNotExist) && opts.FreshOptimizer:
		t.freshOptimizer = append(t.freshOptimizer, st.Step)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("checkpoint %s: %w: %s is not there", path, ErrNoOptimizerState, AdamPath(path))
	default:
		if err := t.loadAdam(AdamPath(path)); err != nil {
			return err
		}
	}
	t.Step, t.Epoch, t.EpochStep = st.Step, st.Epoch, st.EpochStep
	t.LabelMin, t.LabelMax, t.hasRange = st.LabelMin, st.LabelMax, st.HasLabelRange
	t.Plateau, t.Decay, t.Init, t.Data, t.lrInit = st.Plateau, st.Decay, st.Init, st.Data, st.LRInit
	t.adam.SetLR(st.LR)
	if len(st.Sampler) > 0 {
		if err := t.SetSamplerState(st.Sampler); err != nil {
			return fmt.Errorf("checkpoint %s: %w", path, err)
		}
	}
	return nil
}

// loadAdam restores Adam's state from file.
func (t *Trainer[E]) loadAdam(file string) error {
	adam, err := torch.Load(file)
	if err != nil {
		return fmt.Errorf("optimiser state %s: %w", file, err)
	}
	defer torch.CloseNamed(adam)
	if err := t.adam.LoadStateDict(adam); err != nil {
		return fmt.Errorf("optimiser state %s: %w", file, err)
	}
	return nil
}
