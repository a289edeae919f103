package jtvae

import (
	"fmt"
	"strings"

	"github.com/tlbo-native/tlbo-native/torch"
)

// Prefixes of the authors' checkpoints: a Lightning .ckpt holds the model
// under state_dict (torch.Load joins nested names with dots), and their
// Lightning class JTVAE holds JTNNVAE as jtnn_vae beside BaseVAE's prior
// buffers.
const (
	lightningPrefix = "state_dict."
	modulePrefix    = "jtnn_vae."
)

// Import reads the authors' checkpoint — a Lightning .ckpt of their JTVAE,
// its bare state dict (jtnn_vae.-prefixed), or a bare state dict of
// JTNNVAE — and returns the network's tensors under this package's names
// (the authors' JTNNVAE names), in file order. Notes list what was dropped
// (prior_mu, prior_sigma, anything that is not a JT-VAE tensor). The caller
// owns the tensors (torch.CloseNamed).
func Import(from string) (state []torch.Named, notes []string, err error) {
	sd, err := torch.Load(from)
	if err != nil {
		return nil, nil, fmt.Errorf("jtvae import: %w", err)
	}
	lightning := false
	for _, n := range sd {
		lightning = lightning || strings.HasPrefix(n.Name, lightningPrefix)
	}
	var dropped []string
	for _, n := range sd {
		name := n.Name
		if lightning {
			var ok bool
			if name, ok = strings.CutPrefix(name, lightningPrefix); !ok {
				n.Tensor.Close() // optimiser states, loops, callbacks
				continue
			}
		}
		name = strings.TrimPrefix(name, modulePrefix)
		if !isNetworkTensor(name) {
			dropped = append(dropped, name)
			n.Tensor.Close()
			continue
		}
		state = append(state, torch.Named{Name: name, Tensor: n.Tensor})
	}
	if len(state) == 0 {
		return nil, nil, fmt.Errorf("jtvae import %s: no JT-VAE tensors (names like jtnn.embedding.weight, optionally prefixed %q or %q)",
			from, lightningPrefix+modulePrefix, modulePrefix)
	}
	if len(dropped) > 0 {
		notes = append(notes, fmt.Sprintf("dropped %d tensors that the network does not use: %s", len(dropped), strings.Join(dropped, ", ")))
	}
	return state, notes, nil
}

// networkModules are the first components of the JT-VAE's tensor names.
var networkModules = []string{"jtnn.", "decoder.", "jtmpn.", "mpn.", "A_assm.", "T_mean.", "T_var.", "G_mean.", "G_var."}

func isNetworkTensor(name string) bool {
	for _, p := range networkModules {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ConfigFromState returns the configuration whose shapes the imported
// tensors have, with the authors' depths (20, 3) and compatibility switches;
// vocab, when given, must have as many entries as the embedding has rows.
func ConfigFromState(state []torch.Named, vocab []string) (Config, error) {
	shape := map[string][]int64{}
	for _, n := range state {
		shape[n.Name] = n.Tensor.Shape()
	}
	emb, tm, gm := shape["jtnn.embedding.weight"], shape["T_mean.weight"], shape["G_mean.weight"]
	if len(emb) != 2 || len(tm) != 2 || len(gm) != 2 {
		return Config{}, fmt.Errorf("jtvae import: jtnn.embedding.weight %v, T_mean.weight %v, G_mean.weight %v: want matrices", emb, tm, gm)
	}
	cfg := Config{Vocab: vocab, VocabSize: int(emb[0]), Hidden: int(emb[1]), LatentTree: int(tm[0]),
		Latent: int(tm[0] + gm[0]), DepthT: 20, DepthG: 3}
	if vocab != nil && len(vocab) != cfg.VocabSize {
		return Config{}, fmt.Errorf("jtvae import: the vocabulary has %d clusters, the checkpoint's embedding %d", len(vocab), cfg.VocabSize)
	}
	return cfg, cfg.Validate()
}

// ImportModel imports the authors' checkpoint (Import) into a new network
// whose configuration follows the tensors' shapes (ConfigFromState).
func ImportModel(from string, vocab []string) (*Model, []string, error) {
	state, notes, err := Import(from)
	if err != nil {
		return nil, nil, err
	}
	defer torch.CloseNamed(state)
	cfg, err := ConfigFromState(state, vocab)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", from, err)
	}
	m, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := m.LoadStateDict(state); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("jtvae import %s: %w", from, err)
	}
	return m, notes, nil
}
