package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// RecoveryModel is one model version as the domain-recovery protocol sees
// it (task.TargetModel satisfies it).
type RecoveryModel interface {
	LatentDim() int
	// Posterior returns the mean and standard deviation of q(z | target).
	Posterior() (mu, std []float64, err error)
	// Similarities returns the similarities with the target of n
	// stochastic decodings of each latent point of z (row-major); those of
	// point i depend only on (seed, i).
	Similarities(z []float64, n int, seed uint64) ([]float64, error)
	// ModeSimilarities returns the similarity with the target of the
	// decoder's mode at each latent point of z (the task's own,
	// deterministic decode: for topology the rounded probabilities).
	ModeSimilarities(z []float64) ([]float64, error)
	Close()
}

// RecoveryOptions configure the domain-recovery protocol.
type RecoveryOptions struct {
	// Decodes is the number of decodings p is estimated from (0: 100).
	Decodes int
	// Mode decodes each point once, to the decoder's mode, instead of
	// drawing Decodes decodings: p of a point is then 1 when the mode's
	// similarity exceeds Threshold and 0 otherwise.
	Mode bool
	// Threshold is the similarity a decoding must exceed to count.
	Threshold float64
	// Candidates bounds the points drawn from q(z | target) per version (0:
	// none: the encoder mean is carried through the versions).
	Candidates int
	// Seed determines every draw.
	Seed uint64
	// Progress, when set, is told each version's step.
	Progress func(s RecoveryStep)
}

// RecoveryStep is the protocol's outcome at one model version.
type RecoveryStep struct {
	// Version is the run's model version (-1: the pretrained model).
	Version int
	// P is p(l): the fraction of the decodings of the chosen point Z whose
	// similarity exceeds the threshold.
	P float64
	// Carried is p at this version of the point chosen at the previous one
	// (of the encoder mean at the first version); AtMean is p of this
	// version's encoder mean of the target (for reference only).
	Carried, AtMean float64
	// Drawn is the number of candidates examined and Raised whether one
	// raised p, or reached 1 (it is then Z).
	Drawn  int
	Raised bool
	Z      []float64
}

// Stream offsets of the draws of one version (see recoverySeed).
const (
	streamCarried = iota
	streamCandidates
	streamMean
	streamNoise
)

// DomainRecovery runs the domain-recovery protocol (docs/design.md section 10)
// over the model versions of one run, in order; open returns version v's
// model, closed after use. At each version l:
//
//   - the point z carried from version l-1 (at the first version the
//     encoder mean of the target) is decoded o.Decodes times: p_l(z), the
//     fraction of decodings whose similarity exceeds o.Threshold;
//   - unless p_l(z) is 1, candidates are drawn from this version's
//     q(z | target) one at a time, at most o.Candidates, until one's p_l
//     exceeds the p reached so far, max(p(l-1), p_l(z)), or is 1; that
//     candidate becomes the point, else the best of the carried point and
//     the candidates drawn (the carried one on a tie);
//   - p(l) is p_l of the point.
func DomainRecovery(versions []int, open func(v int) (RecoveryModel, error), o RecoveryOptions) ([]RecoveryStep, error) {
	if o.Decodes == 0 {
		o.Decodes = 100
	}
	if o.Decodes < 1 || o.Candidates < 0 || math.IsNaN(o.Threshold) {
		return nil, fmt.Errorf("analysis: %d decodings, %d candidates, threshold %v: want >= 1, >= 0 and a number", o.Decodes, o.Candidates, o.Threshold)
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("analysis: no model versions")
	}
	var steps []RecoveryStep
	var z []float64
	prev := 0.0
	for _, v := range versions {
		m, err := open(v)
		if err != nil {
			return steps, fmt.Errorf("version %d: %w", v, err)
		}
		s, err := recoveryStep(m, v, z, prev, o)
		m.Close()
		if err != nil {
			return steps, fmt.Errorf("version %d: %w", v, err)
		}
		steps = append(steps, s)
		z, prev = s.Z, s.P
		if o.Progress != nil {
			o.Progress(s)
		}
	}
	return steps, nil
}

// recoveryStep runs one version: z is the carried point (nil at the first
// version) and prev is p(l-1).
func recoveryStep(m RecoveryModel, v int, z []float64, prev float64, o RecoveryOptions) (RecoveryStep, error) {
	mu, std, err := m.Posterior()
	if err != nil {
		return RecoveryStep{}, err
	}
	d := m.LatentDim()
	if len(mu) != d || len(std) != d {
		return RecoveryStep{}, fmt.Errorf("posterior of %d means and %d deviations, want %d each", len(mu), len(std), d)
	}
	if z == nil {
		z = mu
	}
	if len(z) != d {
		return RecoveryStep{}, fmt.Errorf("latent size %d, the previous version's is %d", d, len(z))
	}
	p := func(points []float64, stream uint64) ([]float64, error) {
		return recoveryP(m, points, o, recoverySeed(o.Seed, v, stream))
	}
	carried, err := p(z, streamCarried)
	if err != nil {
		return RecoveryStep{}, err
	}
	atMean, err := p(mu, streamMean)
	if err != nil {
		return RecoveryStep{}, err
	}
	s := RecoveryStep{Version: v, P: carried[0], Carried: carried[0], AtMean: atMean[0], Z: z}
	bar := max(prev, carried[0])
	if o.Candidates == 0 || carried[0] >= 1 {
		return s, nil
	}
	cands := drawCandidates(mu, std, o.Candidates, recoverySeed(o.Seed, v, streamNoise))
	ps, err := p(cands, streamCandidates)
	if err != nil {
		return RecoveryStep{}, err
	}
	for k, pk := range ps {
		s.Drawn = k + 1
		if pk > s.P {
			s.P, s.Z = pk, cands[k*d:(k+1)*d]
		}
		if pk > bar || pk >= 1 { // 1 cannot be raised
			s.Raised = true
			break
		}
	}
	return s, nil
}

// recoveryP returns p of each point: the fraction of its decodings whose
// similarity exceeds the threshold (with o.Mode, its one decoding: the
// decoder's mode).
func recoveryP(m RecoveryModel, z []float64, o RecoveryOptions, seed uint64) ([]float64, error) {
	n := len(z) / m.LatentDim()
	if o.Mode {
		o.Decodes = 1
	}
	var sims []float64
	var err error
	if o.Mode {
		sims, err = m.ModeSimilarities(z)
	} else {
		sims, err = m.Similarities(z, o.Decodes, seed)
	}
	if err != nil {
		return nil, err
	}
	if len(sims) != n*o.Decodes {
		return nil, fmt.Errorf("%d similarities for %d points of %d decodings", len(sims), n, o.Decodes)
	}
	out := make([]float64, n)
	for i := range out {
		hits := 0
		for _, s := range sims[i*o.Decodes : (i+1)*o.Decodes] {
			if s > o.Threshold {
				hits++
			}
		}
		out[i] = float64(hits) / float64(o.Decodes)
	}
	return out, nil
}

// drawCandidates returns n draws of N(mu, diag(std²)), row-major.
func drawCandidates(mu, std []float64, n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0xca7d))
	out := make([]float64, 0, n*len(mu))
	for range n {
		for j := range mu {
			out = append(out, mu[j]+std[j]*rng.NormFloat64())
		}
	}
	return out
}

// recoverySeed derives the seed of one kind of draw at one version, so that
// a version's numbers do not depend on which versions came before.
func recoverySeed(seed uint64, version int, stream uint64) uint64 {
	x := seed ^ (uint64(version+1)<<8 | stream)
	// splitmix64's finaliser
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// MethodLabel names a BO run's method from its configuration's strategy,
// ELBO and warp fields: LBO, T-LBO, W-LBO (the plain ELBO with a warped GP),
// "T-LBO, warped" for a metric ELBO with a warped GP ("random search" and
// "prior sampling" for the strategies without a GP).
func MethodLabel(strategy, elbo string, warp bool) string {
	switch {
	case strategy == "random":
		return "random search"
	case strategy == "prior":
		return "prior sampling"
	case strategy != "bo" && strategy != "":
		return strategy
	case elbo == "w" || (warp && (elbo == "lbo" || elbo == "")):
		return "W-LBO"
	}
	label := "LBO"
	if elbo != "lbo" && elbo != "" {
		label = strings.ToUpper(elbo) + "-LBO"
	}
	if warp {
		label += ", warped"
	}
	return label
}

// RecoveryRun is one run's outcome.
type RecoveryRun struct {
	// Name and Method label the run; Seed is its seed.
	Name, Method string
	Seed         uint64
	Steps        []RecoveryStep
}

// RecoveryTable is the outcome over several runs, by version: Versions
// are the model versions of any run, sorted (-1, the pretrained model,
// first); Methods the methods in order of first appearance.
type RecoveryTable struct {
	Versions []int
	Runs     []RecoveryRun
	Methods  []string
	// P[r][i] is run r's p at Versions[i] (NaN where the run lacks it).
	P [][]float64
	// Mean, Std and Count are, per method and version, the mean, the
	// sample standard deviation (0 for one run) and the number of runs
	// that have the version.
	Mean, Std [][]float64
	Count     [][]int
}

// TabulateRecovery gathers runs into a table by version and method.
func TabulateRecovery(runs []RecoveryRun) RecoveryTable {
	t := RecoveryTable{Runs: runs}
	for _, r := range runs {
		for _, s := range r.Steps {
			if !slices.Contains(t.Versions, s.Version) {
				t.Versions = append(t.Versions, s.Version)
			}
		}
		if !slices.Contains(t.Methods, r.Method) {
			t.Methods = append(t.Methods, r.Method)
		}
	}
	slices.Sort(t.Versions)
	t.P = make([][]float64, len(runs))
	for i, r := range runs {
		t.P[i] = make([]float64, len(t.Versions))
		for j := range t.P[i] {
			t.P[i][j] = math.NaN()
		}
		for _, s := range r.Steps {
			t.P[i][slices.Index(t.Versions, s.Version)] = s.P
		}
	}
	for _, m := range t.Methods {
		mean, std, count := t.methodStats(m)
		t.Mean, t.Std, t.Count = append(t.Mean, mean), append(t.Std, std), append(t.Count, count)
	}
	return t
}

// methodStats returns the mean, sample std and count per version of the
// runs of method m.
func (t RecoveryTable) methodStats(m string) (mean, std []float64, count []int) {
	nv := len(t.Versions)
	mean, std, count = make([]float64, nv), make([]float64, nv), make([]int, nv)
	for j := range nv {
		var vals []float64
		for i, r := range t.Runs {
			if r.Method == m && !math.IsNaN(t.P[i][j]) {
				vals = append(vals, t.P[i][j])
			}
		}
		count[j] = len(vals)
		mean[j], std[j] = sampleMeanStd(vals)
	}
	return mean, std, count
}

// sampleMeanStd returns the mean and the sample standard deviation (0 for
// one value, NaN for none).
func sampleMeanStd(v []float64) (mean, std float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}
