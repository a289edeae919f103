package molecule

import (
	"fmt"

	"github.com/tlbo-native/tlbo-native/models/jtvae"
	"github.com/tlbo-native/tlbo-native/torch"
	"github.com/tlbo-native/tlbo-native/torch/optim"
)

// JTVAEStepOptions configure the JT-VAE training-step benchmark.
type JTVAEStepOptions struct {
	Device torch.Device
	// Vocab is the cluster vocabulary (the shipped one gives the authors'
	// full-size network: 780 clusters, 5,676,743 parameters).
	Vocab Vocab
	// Hidden is the hidden size (0: the authors' 450).
	Hidden int
	// Batch is the mini-batch size (0: 32): the first Batch of 128 built-in
	// ZINC molecules (bench128.npz's, whose first 32 are bench32.npz's),
	// repeated in order where the batch is larger than 128.
	Batch int
	// Smiles, when set, replaces the built-in molecules: the batch is its
	// first Batch, repeated in order where the batch is larger (e.g. the
	// molecules a BO run found, which its retraining draws).
	Smiles []string
	Steps  int // timed steps (after 2 warm-up steps)
	Seed   uint64
	// Profile, when set, is where the operators of the timed steps are
	// written as a Chrome trace (torch.Profile). Profiling slows the steps.
	Profile string
}

// JTVAEStep times training steps of a new JT-VAE (the authors' loop: word +
// topology + assembly + 1e-3 KL, clipping, Adam) on one batch of ZINC
// molecules, and returns the split of every timed step.
func JTVAEStep(opts JTVAEStepOptions) ([]jtvae.StepTimes, error) {
	if opts.Steps < 1 {
		return nil, fmt.Errorf("bench jtvae-step: steps must be at least 1, got %d", opts.Steps)
	}
	if opts.Batch == 0 {
		opts.Batch = 32
	}
	ex, err := jtvaeBatch(opts.Vocab, opts.Batch, opts.Smiles)
	if err != nil {
		return nil, fmt.Errorf("bench jtvae-step: %w", err)
	}
	if err := torch.ManualSeed(opts.Seed); err != nil {
		return nil, err
	}
	cfg := jtvae.DefaultConfig(opts.Vocab)
	if opts.Hidden > 0 {
		cfg.Hidden = opts.Hidden
	}
	m, err := jtvae.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("bench jtvae-step: %w", err)
	}
	defer m.Close()
	if err := m.To(opts.Device); err != nil {
		return nil, fmt.Errorf("bench jtvae-step: %w", err)
	}
	opt := optim.NewAdam(m.Parameters(), optim.DefaultAdam(1e-3))
	steps := func(n int) ([]jtvae.StepTimes, error) {
		times := make([]jtvae.StepTimes, n)
		for i := range times {
			if times[i], err = m.TimedStep(opt, ex, 1e-3); err != nil {
				return nil, fmt.Errorf("bench jtvae-step: %w", err)
			}
		}
		return times, nil
	}
	if _, err := steps(2); err != nil { // warm-up
		return nil, err
	}
	if opts.Profile == "" {
		return steps(opts.Steps)
	}
	var times []jtvae.StepTimes
	err = torch.Profile(opts.Profile, func() (err error) {
		times, err = steps(opts.Steps)
		return err
	})
	return times, err
}

// benchSmiles returns the first n of the 128 built-in molecules (n <= 128).
func benchSmiles(n int) []string {
	return append(SampleSmiles(), benchMoreSmiles...)[:n]
}

// jtvaeBatch featurises the first n of smiles (nil: of the 128 built-in
// molecules) over vocab into a batch (repeated in order beyond their count).
func jtvaeBatch(vocab Vocab, n int, smiles []string) ([]jtvae.Example, error) {
	if n < 1 {
		return nil, fmt.Errorf("batch must be at least 1, got %d", n)
	}
	if smiles == nil {
		smiles = benchSmiles(len(sampleSmiles) + len(benchMoreSmiles))
	}
	if len(smiles) == 0 {
		return nil, fmt.Errorf("no molecules to make a batch of")
	}
	f := NewFeaturiser(vocab)
	var base []jtvae.Example
	for i, s := range smiles[:min(n, len(smiles))] {
		ex, err := f.Featurise(s)
		if err != nil {
			return nil, fmt.Errorf("molecule %d %q: %w", i+1, s, err)
		}
		base = append(base, ex)
	}
	out := make([]jtvae.Example, n)
	for i := range out {
		out[i] = base[i%len(base)]
	}
	return out, nil
}
