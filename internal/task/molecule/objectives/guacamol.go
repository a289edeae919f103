package objectives

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"sync"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// A modifier is one of GuacaMol's score modifiers (guacamol/score_modifier.py).
type modifier func(x float64) float64

// clipped is ClippedScoreModifier(upper_x, lower_x=0, high_score=1, low_score=0).
func clipped(upperX float64) modifier {
	const lowerX, high, low = 0.0, 1.0, 0.0
	slope := (high - low) / (upperX - lowerX)
	intercept := high - float64(slope*upperX)
	return func(x float64) float64 {
		y := float64(slope*x) + intercept
		return math.Min(math.Max(y, low), high)
	}
}

// gaussian is GaussianModifier(mu, sigma): exp(-0.5 ((x - mu) / sigma)^2).
func gaussian(mu, sigma float64) modifier {
	return func(x float64) float64 {
		d := (x - mu) / sigma
		return math.Exp(-0.5 * (d * d))
	}
}

// minGaussian is MinGaussianModifier (MinMaxGaussianModifier, minimize=True):
// 1 at or below mu, the Gaussian above.
func minGaussian(mu, sigma float64) modifier {
	g := gaussian(mu, sigma)
	return func(x float64) float64 { return g(math.Max(x, mu)) }
}

// maxGaussian is MaxGaussianModifier (MinMaxGaussianModifier, minimize=False):
// 1 at or above mu, the Gaussian below.
func maxGaussian(mu, sigma float64) modifier {
	g := gaussian(mu, sigma)
	return func(x float64) float64 { return g(math.Min(x, mu)) }
}

// A scorer is one of GuacaMol's scoring functions on a sanitised molecule,
// its modifier applied.
type scorer interface {
	score(m *chem.Mol) (float64, error)
}

// Fingerprint kinds of guacamol/utils/fingerprints.py.
const (
	ECFP4 = "ECFP4" // GetMorganFingerprint(mol, 2): counts
	ECFP6 = "ECFP6" // GetMorganFingerprint(mol, 3)
	FCFP4 = "FCFP4" // GetMorganFingerprint(mol, 2, useFeatures=True)
	AP    = "AP"    // GetAtomPairFingerprint(mol, maxLength=10): counts
	PHCO  = "PHCO"  // Gen2DFingerprint(mol, Gobbi_Pharm2D.factory): bits
)

// fingerprint is a count vector, or for PHCO the on bits.
type fingerprint struct {
	counts chem.Counts
	bits   []int
}

// Fingerprint computes one of GuacaMol's fingerprints.
func Fingerprint(m *chem.Mol, kind string) (counts chem.Counts, bits []int, err error) {
	fp, err := getFingerprint(m, kind)
	return fp.counts, fp.bits, err
}

func getFingerprint(m *chem.Mol, kind string) (fingerprint, error) {
	var fp fingerprint
	var err error
	switch kind {
	case ECFP4:
		fp.counts, err = m.Morgan(2, chem.MorganOptions{})
	case ECFP6:
		fp.counts, err = m.Morgan(3, chem.MorganOptions{})
	case FCFP4:
		fp.counts, err = m.Morgan(2, chem.MorganOptions{Features: true})
	case AP:
		fp.counts, err = m.AtomPairs(1, 10)
	case PHCO:
		fp.bits, err = Gobbi2D(m)
	default:
		err = fmt.Errorf("objectives: unknown fingerprint %q", kind)
	}
	return fp, err
}

func similarity(kind string, a, b fingerprint) float64 {
	if kind == PHCO {
		return bitTanimoto(a.bits, b.bits)
	}
	return chem.Tanimoto(a.counts, b.counts)
}

// parseTarget is guacamol.utils.chemistry.smiles_to_rdkit_mol for a fixed target.
func parseTarget(smiles string) (*chem.Mol, error) {
	m, err := chem.Smiles(smiles)
	if err != nil {
		return nil, fmt.Errorf("objectives: target %s: %w", smiles, err)
	}
	return m, nil
}

// tanimoto is TanimotoScoringFunction(target, fp_type, score_modifier).
type tanimoto struct {
	target, kind string
	mod          modifier
	ref          func() (fingerprint, error)
}

func newTanimoto(target, kind string, mod modifier) *tanimoto {
	t := &tanimoto{target: target, kind: kind, mod: mod}
	t.ref = sync.OnceValues(func() (fingerprint, error) {
		m, err := parseTarget(target)
		if err != nil {
			return fingerprint{}, err
		}
		defer m.Close()
		return getFingerprint(m, kind)
	})
	return t
}

func (t *tanimoto) score(m *chem.Mol) (float64, error) {
	ref, err := t.ref()
	if err != nil {
		return 0, err
	}
	fp, err := getFingerprint(m, t.kind)
	if err != nil {
		return 0, err
	}
	s := similarity(t.kind, fp, ref)
	if t.mod != nil {
		s = t.mod(s)
	}
	return s, nil
}

// descriptor is RdkitScoringFunction(descriptor, score_modifier).
type descriptor struct {
	f   func(m *chem.Mol) (float64, error)
	mod modifier
}

func (d descriptor) score(m *chem.Mol) (float64, error) {
	x, err := d.f(m)
	if err != nil {
		return 0, err
	}
	return d.mod(x), nil
}

// The descriptors of guacamol/utils/descriptors.py.
func logP(m *chem.Mol) (float64, error)  { return m.Descriptor(chem.MolLogP) }
func tpsa(m *chem.Mol) (float64, error)  { return m.Descriptor(chem.TPSA) }
func bertz(m *chem.Mol) (float64, error) { return BertzCT(m) }
func numRings(m *chem.Mol) (float64, error) {
	return m.Descriptor(chem.NumRings)
}
func numAromaticRings(m *chem.Mol) (float64, error) {
	return m.Descriptor(chem.NumAromaticRings)
}

// numAtoms is guacamol's num_atoms: AddHs(mol).GetNumAtoms().
func numAtoms(m *chem.Mol) (float64, error) {
	h, err := m.AddHs()
	if err != nil {
		return 0, err
	}
	defer h.Close()
	return float64(h.NumAtoms()), nil
}

// atomCounter is guacamol's AtomCounter(element): the atoms of that element,
// after AddHs for hydrogen.
func atomCounter(symbol string) func(m *chem.Mol) (float64, error) {
	z, ok := atomicNumbers[symbol]
	return func(m *chem.Mol) (float64, error) {
		if !ok {
			return 0, fmt.Errorf("objectives: unknown element %q", symbol)
		}
		src := m
		if z == 1 {
			h, err := m.AddHs()
			if err != nil {
				return 0, err
			}
			defer h.Close()
			src = h
		}
		atoms, err := src.Atoms()
		if err != nil {
			return 0, err
		}
		n := 0
		for _, a := range atoms {
			if a.AtomicNum == z {
				n++
			}
		}
		return float64(n), nil
	}
}

// atomicNumbers maps the element symbols GuacaMol's formulas use (and a few more).
var atomicNumbers = map[string]int{
	"H": 1, "B": 5, "C": 6, "N": 7, "O": 8, "F": 9, "Si": 14, "P": 15, "S": 16, "Cl": 17,
	"Se": 34, "Br": 35, "I": 53,
}

// targetDescriptor evaluates a descriptor on a fixed target molecule once.
func targetDescriptor(smiles string, f func(*chem.Mol) (float64, error)) func() (float64, error) {
	return sync.OnceValues(func() (float64, error) {
		m, err := parseTarget(smiles)
		if err != nil {
			return 0, err
		}
		defer m.Close()
		return f(m)
	})
}

// aroundTarget is RdkitScoringFunction(descriptor=f, GaussianModifier(mu=f(target), sigma)).
type aroundTarget struct {
	f     func(*chem.Mol) (float64, error)
	mu    func() (float64, error)
	sigma float64
}

func newAroundTarget(target string, f func(*chem.Mol) (float64, error), sigma float64) aroundTarget {
	return aroundTarget{f: f, mu: targetDescriptor(target, f), sigma: sigma}
}

func (a aroundTarget) score(m *chem.Mol) (float64, error) {
	mu, err := a.mu()
	if err != nil {
		return 0, err
	}
	x, err := a.f(m)
	if err != nil {
		return 0, err
	}
	return gaussian(mu, a.sigma)(x), nil
}

// smarts is SMARTSScoringFunction(target, inverse): 1 when the pattern
// matches (0 when inverse), else 0 (1).
type smarts struct {
	q       func() (*chem.Query, error)
	inverse bool
}

func newSmarts(pattern string, inverse bool) smarts {
	return smarts{q: sync.OnceValues(func() (*chem.Query, error) { return chem.Smarts(pattern) }), inverse: inverse}
}

func (s smarts) score(m *chem.Mol) (float64, error) {
	q, err := s.q()
	if err != nil {
		return 0, err
	}
	ok, err := m.HasMatch(q)
	if err != nil {
		return 0, err
	}
	if ok != s.inverse {
		return 1, nil
	}
	return 0, nil
}

// geometric is GeometricMeanScoringFunction: (prod s_i)^(1/n).
type geometric []scorer

func (g geometric) score(m *chem.Mol) (float64, error) {
	s, err := scoreAll(g, m)
	if err != nil {
		return 0, err
	}
	return geometricMean(s), nil
}

// geometricMean is guacamol.utils.math.geometric_mean: a.prod() ** (1 / len(a)).
func geometricMean(s []float64) float64 {
	p := 1.0
	for _, v := range s {
		p *= v
	}
	return pow(p, 1/float64(len(s)))
}

// pow is math.Pow, but accurate for a subnormal x, where math.Pow (Go 1.26) is
// wrong (Go 1.26: 3.2426108660367e-310 ** 0.2 gives 2.57e-62 for 1.27e-62); the
// Gaussian modifiers far from their means make such products.
func pow(x, y float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		frac, exp := math.Frexp(x)
		return math.Pow(frac, y) * math.Exp2(float64(exp)*y)
	}
	return math.Pow(x, y)
}

// arithmetic is ArithmeticMeanScoringFunction with unit weights: sum s_i / n.
type arithmetic []scorer

func (a arithmetic) score(m *chem.Mol) (float64, error) {
	s, err := scoreAll(a, m)
	if err != nil {
		return 0, err
	}
	t := 0.0
	for _, v := range s {
		t += v
	}
	return t / float64(len(s)), nil
}

func scoreAll(fs []scorer, m *chem.Mol) ([]float64, error) {
	out := make([]float64, len(fs))
	for i, f := range fs {
		v, err := f.score(m)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

var formulaRe = regexp.MustCompile(`([A-Z][a-z]*)(\d*)`)

// ElementCount is one element of a molecular formula.
type ElementCount struct {
	Symbol string
	Count  int
}

// ParseFormula is guacamol's parse_molecular_formula: (element, count) in the
// formula's order, a missing count meaning 1.
func ParseFormula(formula string) ([]ElementCount, error) {
	var out []ElementCount
	for _, m := range formulaRe.FindAllStringSubmatch(formula, -1) {
		n := 1
		if m[2] != "" {
			v, err := strconv.Atoi(m[2])
			if err != nil {
				return nil, err
			}
			n = v
		}
		out = append(out, ElementCount{m[1], n})
	}
	return out, nil
}

// isomer is IsomerScoringFunction(formula, mean_function='geometric'): a
// Gaussian (sigma 1) on each element's count, one (sigma 2) on the total number
// of atoms with hydrogens, geometric mean.
func isomer(formula string) scorer {
	els, err := ParseFormula(formula)
	if err != nil {
		panic(err)
	}
	var g geometric
	total := 0
	for _, e := range els {
		total += e.Count
		g = append(g, descriptor{f: atomCounter(e.Symbol), mod: gaussian(float64(e.Count), 1.0)})
	}
	g = append(g, descriptor{f: numAtoms, mod: gaussian(float64(total), 2.0)})
	return g
}

// qedScorer is RDKit's QED as a scorer (TDC's qed oracle).
type qedScorer struct{}

func (qedScorer) score(m *chem.Mol) (float64, error) { return QED(m) }
