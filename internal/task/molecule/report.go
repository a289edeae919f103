package molecule

import (
	"fmt"
	"math/rand/v2"

	"github.com/tlbo-native/tlbo-native/internal/task"
	"github.com/tlbo-native/tlbo-native/models"
	"github.com/tlbo-native/tlbo-native/models/jtvae"
)

// ReportMolecules caps the molecules that the report after training
// decodes, for the reconstruction and for the prior validity each: a JT-VAE
// decoding takes up to a second on a CPU core.
const ReportMolecules = 200

// report prints the greedy reconstruction accuracy of validation molecules
// (decoded from their encoder means, compared as canonical SMILES without
// stereochemistry, which the decoder does not assemble) and the validity of
// greedy decodings of prior samples.
func (b *binding) report(env *task.Env, net models.VAE[jtvae.Example], val []jtvae.Example, opts task.ReportOptions) error {
	m, ok := net.(*jtvae.Model)
	if !ok {
		return fmt.Errorf("molecule report: network %T is not the JT-VAE", net)
	}
	d, err := NewDecoder(m, nil)
	if err != nil {
		return err
	}
	d.Workers = b.decodeWorkers()
	if val = val[:min(len(val), ReportMolecules)]; len(val) > 0 {
		acc, err := reconstruction(m, d, val)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "val_reconstruction_greedy %.4f (%d molecules, stereochemistry ignored)\n", acc, len(val))
	}
	if n := min(opts.PriorSamples, ReportMolecules); n > 0 {
		valid, distinct, err := priorValidity(d, m.LatentDim(), n, env.Seed)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "prior_validity %.4f (%d samples, %d distinct valid)\n", valid, n, distinct)
	}
	return nil
}

// reconstruction is the share of examples whose encoder mean decodes to
// their own molecule.
func reconstruction(m *jtvae.Model, d *Decoder, val []jtvae.Example) (float64, error) {
	mu, err := models.EncodeMeans[jtvae.Example](m, val)
	if err != nil {
		return 0, err
	}
	smiles, errs, err := d.Decode(float32s(mu))
	if err != nil {
		return 0, err
	}
	same := 0
	for i, ex := range val {
		if errs[i] == nil && sameMolecule(smiles[i], ex.Smiles) {
			same++
		}
	}
	return float64(same) / float64(len(val)), nil
}

// priorValidity decodes n draws of N(0, I) greedily and returns the share
// that gives a molecule and the number of distinct ones.
func priorValidity(d *Decoder, latent, n int, seed uint64) (valid float64, distinct int, err error) {
	rng := rand.New(rand.NewPCG(seed, 0x7072696f72))
	z := make([]float32, n*latent)
	for i := range z {
		z[i] = float32(rng.NormFloat64())
	}
	smiles, errs, err := d.Decode(z)
	if err != nil {
		return 0, 0, err
	}
	seen := map[string]bool{}
	ok := 0
	for i, s := range smiles {
		if errs[i] == nil && s != "" {
			ok++
			seen[s] = true
		}
	}
	return float64(ok) / float64(n), len(seen), nil
}

// sameMolecule reports whether two SMILES are one molecule, stereochemistry
// aside.
func sameMolecule(a, b string) bool {
	ka, errA := Standardize(a)
	kb, errB := Standardize(b)
	return errA == nil && errB == nil && ka == kb
}

func float32s(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}
