package molecule

import (
	"fmt"
	"math"
	"slices"

	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// newNetwork returns a JT-VAE over the bound vocabulary with --hidden.
func newNetwork(env *task.Env, latent int) (models.VAE[jtvae.Example], error) {
	v, _, err := vocabulary(env)
	if err != nil {
		return nil, err
	}
	cfg := jtvae.DefaultConfig(v)
	if h := env.Opts.Int(optHidden); h > 0 {
		cfg.Hidden = h
	}
	if latent > 0 {
		if latent%2 != 0 {
			return nil, fmt.Errorf("latent %d: the JT-VAE splits it evenly between tree and graph", latent)
		}
		cfg.Latent, cfg.LatentTree = latent, latent/2
	}
	return jtvae.New(cfg)
}

// decode decodes latent points with the checkpoint's vocabulary (Decoder):
// greedily by default and with opts.Greedy (the authors' decode_deterministic,
// which their BO uses); with opts.Attempts > 0 and not Greedy, that many
// stochastic decodings (their prob_decode) from seed, keeping each point's
// most frequent molecule.
func (b *binding) decode(net models.VAE[jtvae.Example], z []float64, opts task.DecodeOptions, seed uint64) ([]string, []bool, error) {
	m, ok := net.(*jtvae.Model)
	if !ok {
		return nil, nil, fmt.Errorf("molecule decode: network %T is not the JT-VAE", net)
	}
	d, err := NewDecoder(m, nil)
	if err != nil {
		return nil, nil, err
	}
	attempts := 1
	if !opts.Greedy && opts.Attempts > 0 {
		attempts = opts.Attempts
		d.Sampled, d.Seed = true, seed
	}
	d.Workers = b.decodeWorkers()
	lat := m.LatentDim()
	n := len(z) / lat
	smiles, errs, err := d.Decode(slices.Repeat(float32s(z), attempts))
	if err != nil {
		return nil, nil, err
	}
	out, valid := make([]string, n), make([]bool, n)
	for i := range n {
		counts := map[string]int{}
		for a := range attempts {
			k := a*n + i
			if errs[k] != nil || smiles[k] == "" {
				continue
			}
			if counts[smiles[k]]++; counts[smiles[k]] > counts[out[i]] || !valid[i] {
				out[i], valid[i] = smiles[k], true
			}
		}
	}
	return out, valid, nil
}

// decodeWidth is the number of molecules a greedy decoding handles at
// once, its workers: each molecule costs its own tree search and assembly,
// and greedy molecules depend on nothing but their latent point. Sampled
// decoding draws each row from the seed's stream for its place in the call,
// so it reports 0.
func (b *binding) decodeWidth(opts task.DecodeOptions) int {
	if !opts.Greedy && opts.Attempts > 0 {
		return 0
	}
	return workerCount(b.decodeWorkers(), math.MaxInt)
}

// importCheckpoint converts the authors' JT-VAE checkpoint with the
// vocabulary of --vocab (or the data directory's).
func importCheckpoint(env *task.Env, req task.ImportRequest) error {
	v, _, err := vocabulary(env)
	if err != nil {
		return err
	}
	net, notes, err := jtvae.ImportModel(req.From, v)
	if err != nil {
		return err
	}
	defer net.Close()
	for _, n := range notes {
		fmt.Fprintf(env.Stderr, "import %s: %s\n", req.From, n)
	}
	if err := models.SaveNetwork(req.Out, net); err != nil {
		return err
	}
	cfg := net.Config()
	fmt.Fprintf(env.Stdout, "imported %s (hidden %d, latent %d, %d clusters) from %s: %s (+ %s)\n", jtvae.NetworkKind,
		cfg.Hidden, cfg.Latent, cfg.VocabSize, req.From, req.Out, models.HeaderPath(req.Out))
	return nil
}
