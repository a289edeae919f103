package models

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tlbo-native/tlbo-native/torch"
)

// NetworkBuilder makes an untrained network of a kind from the configuration
// recorded in a checkpoint header.
type NetworkBuilder func(config json.RawMessage) (Network, error)

var (
	networksMu sync.RWMutex
	networks   = map[string]NetworkBuilder{}
)

// RegisterNetwork makes a network kind loadable by Load; each network
// package registers itself in an init function. It panics on a duplicate
// kind, a programming error.
func RegisterNetwork(kind string, build NetworkBuilder) {
	networksMu.Lock()
	defer networksMu.Unlock()
	if _, dup := networks[kind]; dup {
		panic("models: network kind " + kind + " registered twice")
	}
	networks[kind] = build
}

// NetworkKinds lists the registered network kinds, sorted.
func NetworkKinds() []string {
	networksMu.RLock()
	defer networksMu.RUnlock()
	kinds := make([]string, 0, len(networks))
	for k := range networks {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// describe returns a header holding net's kind and configuration.
func describe(path string, net Network) (Header, error) {
	kind, cfg := net.Describe()
	raw, err := json.Marshal(cfg)
	if err != nil {
		return Header{}, fmt.Errorf("checkpoint %s: model configuration: %w", path, err)
	}
	return Header{Network: kind, Model: raw}, nil
}

// SaveNetwork writes a network alone (no training state) as a checkpoint:
// path (state dict) and its JSON header.
func SaveNetwork(path string, net Network) error {
	h, err := describe(path, net)
	if err != nil {
		return err
	}
	return SaveCheckpoint(path, h, net.StateDict(), nil)
}

// Load reads a checkpoint of a registered network kind onto dev: the
// header names the kind and its configuration, the state dict fills the
// weights. When kinds are given, a checkpoint of another kind is refused. A
// checkpoint whose tensors do not fit its configuration is an error naming
// the file.
func Load(path string, dev torch.Device, kinds ...string) (Network, Header, error) {
	h, err := ReadHeader(path, "")
	if err != nil {
		return nil, Header{}, err
	}
	if len(kinds) > 0 && !slices.Contains(kinds, h.Network) {
		return nil, h, fmt.Errorf("checkpoint %s is for network %q, not %q", path, h.Network, strings.Join(kinds, `" or "`))
	}
	networksMu.RLock()
	build, ok := networks[h.Network]
	networksMu.RUnlock()
	if !ok {
		return nil, h, fmt.Errorf("checkpoint configuration %s: field network is %q, which this program does not know (known: %v)",
			HeaderPath(path), h.Network, NetworkKinds())
	}
	net, err := build(h.Model)
	if err != nil {
		return nil, h, fmt.Errorf("checkpoint configuration %s: field model: %w", HeaderPath(path), err)
	}
	state, pred, err := LoadState(path)
	if err != nil {
		net.Close()
		return nil, h, err
	}
	defer torch.CloseNamed(state)
	torch.CloseNamed(pred)
	if err := net.LoadStateDict(state); err != nil {
		net.Close()
		return nil, h, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if err := net.To(dev); err != nil {
		net.Close()
		return nil, h, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return net, h, nil
}

// LoadVAE loads a checkpoint (Load) and checks that it holds a VAE on
// examples of type E, i.e. a network of one of the kinds given (none: any).
func LoadVAE[E any](path string, dev torch.Device, kinds ...string) (VAE[E], Header, error) {
	net, h, err := Load(path, dev, kinds...)
	if err != nil {
		return nil, h, err
	}
	v, ok := net.(VAE[E])
	if !ok {
		net.Close()
		return nil, h, fmt.Errorf("checkpoint %s holds network %q, which this task cannot use (want %v)", path, h.Network, kinds)
	}
	return v, h, nil
}

// LoadTrainer reads a checkpoint written by a trainer and returns the network
// with a trainer on dev that resumes it: same ELBO, schedules, seed and batch
// size, Adam's state (opts says whether it may be missing), step and epoch
// counters, label range and sampler state. A checkpoint written before the
// sampler state was kept gets a sampler seeded from the seed plus the epoch,
// as then (h.Training.ExactResume says which).
func LoadTrainer[E any](path string, dev torch.Device, opts ResumeOptions, kinds ...string) (VAE[E], *Trainer[E], error) {
	v, h, err := LoadVAE[E](path, dev, kinds...)
	if err != nil {
		return nil, nil, err
	}
	if h.Training == nil {
		v.Close()
		return nil, nil, fmt.Errorf("checkpoint configuration %s: field training is missing (not written by a trainer)", HeaderPath(path))
	}
	st := *h.Training
	tr, err := NewTrainer(v, TrainOptions{ELBO: st.ELBO, Beta: st.Beta, LR: st.LR, BatchSize: st.BatchSize,
		GradClip: st.GradClip, Device: dev, Seed: st.Seed})
	if err == nil {
		if len(st.Sampler) == 0 {
			tr.seedSampler(st.Seed + uint64(st.Epoch))
		}
		err = tr.Resume(path, st, opts)
	}
	if err != nil {
		v.Close()
		return nil, nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return v, tr, nil
}

// RegisterConfig registers a network kind whose builder takes its
// configuration as a C, decoded from the checkpoint header's JSON.
func RegisterConfig[C any, N Network](kind string, build func(C) (N, error)) {
	RegisterNetwork(kind, func(raw json.RawMessage) (Network, error) {
		var cfg C
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, err
		}
		n, err := build(cfg)
		if err != nil {
			return nil, err
		}
		return n, nil
	})
}

// LoadNetwork loads a checkpoint of one network kind (Load) as that
// network's own type N.
func LoadNetwork[N Network](path string, dev torch.Device, kind string) (N, Header, error) {
	var zero N
	net, h, err := Load(path, dev, kind)
	if err != nil {
		return zero, h, err
	}
	n, ok := net.(N)
	if !ok {
		net.Close()
		return zero, h, fmt.Errorf("checkpoint %s: network %q is a %T, not a %T", path, kind, net, zero)
	}
	return n, h, nil
}
