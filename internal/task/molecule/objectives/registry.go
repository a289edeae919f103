package objectives

import (
	"errors"
	"fmt"
	"sort"

	"github.com/tlbo-native/tlbo-native/internal/chem"
)

// Objective is one molecule objective: maximised, in [0, 1].
type Objective struct {
	Name string
	// Targets are the molecules the definition names (SMILES as written in it),
	// for tests and reports.
	Targets []string
	s       scorer
}

// Func scores a SMILES string.
type Func func(smiles string) (float64, error)

// Score parses smiles (sanitised, as GuacaMol's smiles_to_rdkit_mol) and scores
// it. An empty, unparsable or unsanitisable SMILES is an error; GuacaMol would
// give it its corrupt score -1 and TDC's oracles 0: the caller picks the task's
// failure score.
func (o *Objective) Score(smiles string) (float64, error) {
	if smiles == "" {
		return 0, errors.New("objectives: empty SMILES")
	}
	m, err := chem.Smiles(smiles)
	if err != nil {
		return 0, err
	}
	defer m.Close()
	return o.ScoreMol(m)
}

// ScoreMol scores a sanitised molecule. It may be called from several
// goroutines at once with distinct molecules.
func (o *Objective) ScoreMol(m *chem.Mol) (float64, error) {
	if m.NumAtoms() == 0 {
		return 0, errors.New("objectives: molecule has no atoms")
	}
	v, err := o.s.score(m)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", o.Name, err)
	}
	return v, nil
}

var registry = map[string]*Objective{}

func define(name string, s scorer, targets ...string) {
	registry[name] = &Objective{Name: name, Targets: targets, s: s}
}

// Names lists the objectives, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the named objective.
func Lookup(name string) (*Objective, error) {
	o, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("objectives: unknown objective %q (known: %v)", name, Names())
	}
	return o, nil
}

// Funcs maps each objective's name to its Score.
func Funcs() map[string]Func {
	out := make(map[string]Func, len(registry))
	for n, o := range registry {
		out[n] = o.Score
	}
	return out
}

// The target molecules, as GuacaMol's standard_benchmarks.py writes them.
const (
	celecoxib    = "CC1=CC=C(C=C1)C1=CC(=NN1C1=CC=C(C=C1)S(N)(=O)=O)C(F)(F)F"
	troglitazone = "Cc1c(C)c2OC(C)(COc3ccc(CC4SC(=O)NC4=O)cc3)CCc2c(C)c1O"
	thiothixene  = "CN(C)S(=O)(=O)c1ccc2Sc3ccccc3C(=CCCN4CCN(C)CC4)c2c1"
	albuterol    = "CC(C)(C)NCC(O)c1ccc(O)c(CO)c1"
	mestranol    = "COc1ccc2[C@H]3CC[C@@]4(C)[C@@H](CC[C@@]4(O)C#C)[C@@H]3CCc2c1"
	camphor      = "CC1(C)C2CCC1(C)C(=O)C2"
	menthol      = "CC(C)C1CCC(C)CC1O"
	tadalafil    = "O=C1N(CC(N2C1CC3=C(C2C4=CC5=C(OCO5)C=C4)NC6=C3C=CC=C6)=O)C"
	sildenafil   = "CCCC1=NN(C2=C1N=C(NC2=O)C3=C(C=CC(=C3)S(=O)(=O)N4CCN(CC4)C)OCC)C"
	osimertinib  = "COc1cc(N(C)CCN(C)C)c(NC(=O)C=C)cc1Nc2nccc(n2)c3cn(C)c4ccccc34"
	fexofenadine = "CC(C)(C(=O)O)c1ccc(cc1)C(O)CCCN2CCC(CC2)C(O)(c3ccccc3)c4ccccc4"
	ranolazine   = "COc1ccccc1OCC(O)CN2CCN(CC(=O)Nc3c(C)cccc3C)CC2"
	perindopril  = "O=C(OCC)C(NC(C(=O)N1C(C(=O)O)CC2CCCCC12)C)CCC"
	amlodipine   = "Clc1ccccc1C2C(=C(/N/C(=C2/C(=O)OCC)COCCN)C)\\C(=O)OC"
	sitagliptin  = "Fc1cc(c(F)cc1F)CC(N)CC(=O)N3Cc2nnc(n2CC3)C(F)(F)F"
	// valsartan_smarts writes sitagliptin so.
	sitagliptinValsartan = "NC(CC(=O)N1CCn2c(nnc2C(F)(F)F)C1)Cc1cc(F)c(F)cc1F"
	zaleplon             = "O=C(C)N(CC)C1=CC=CC(C2=CC=NC3=C(C=NN23)C#N)=C1"
	hopStart             = "CCCOc1cc2ncnc(Nc3ccc4ncsc4c3)c2cc1S(=O)(=O)C(C)(C)C"
)

// The SMARTS of valsartan_smarts, deco_hop and scaffold_hop.
const (
	valsartanSmarts = "CN(C=O)Cc1ccc(c2ccccc2)cc1"
	hopScaffold     = "[#7]-c1n[c;h1]nc2[c;h1]c(-[#8])[c;h0][c;h1]c12"
	decoSulfone     = "CS([#6])(=O)=O"
	decoBenzothia   = "[#7]-c1ccc2ncsc2c1"
	scaffoldHopDeco = "[#6]-[#6]-[#6]-[#8]-[#6]~[#6]~[#6]~[#6]~[#6]-[#7]-c1ccc2ncsc2c1"
)

func init() {
	define("qed", qedScorer{})

	// similarity(smiles, name, fp_type, threshold, rediscovery): Tanimoto with a
	// ClippedScoreModifier(upper_x=threshold) (the identity for threshold 1).
	define("celecoxib_rediscovery", newTanimoto(celecoxib, ECFP4, clipped(1.0)), celecoxib)
	define("troglitazone_rediscovery", newTanimoto(troglitazone, ECFP4, clipped(1.0)), troglitazone)
	define("thiothixene_rediscovery", newTanimoto(thiothixene, ECFP4, clipped(1.0)), thiothixene)
	define("albuterol_similarity", newTanimoto(albuterol, FCFP4, clipped(0.75)), albuterol)
	define("mestranol_similarity", newTanimoto(mestranol, AP, clipped(0.75)), mestranol)

	define("isomers_c7h8n2o2", isomer("C7H8N2O2"))
	define("isomers_c9h10n2o2pf2cl", isomer("C9H10N2O2PF2Cl"))

	// median_camphor_menthol and median_tadalafil_sildenafil.
	define("median1", geometric{newTanimoto(menthol, ECFP4, nil), newTanimoto(camphor, ECFP4, nil)}, menthol, camphor)
	define("median2", geometric{newTanimoto(tadalafil, ECFP6, nil), newTanimoto(sildenafil, ECFP6, nil)}, tadalafil, sildenafil)

	// hard_osimertinib.
	define("osimertinib_mpo", geometric{
		newTanimoto(osimertinib, FCFP4, clipped(0.8)),
		newTanimoto(osimertinib, ECFP6, minGaussian(0.85, 0.1)),
		descriptor{tpsa, maxGaussian(100, 10)},
		descriptor{logP, minGaussian(1, 1)},
	}, osimertinib)
	// hard_fexofenadine.
	define("fexofenadine_mpo", geometric{
		newTanimoto(fexofenadine, AP, clipped(0.8)),
		descriptor{tpsa, maxGaussian(90, 10)},
		descriptor{logP, minGaussian(4, 1)},
	}, fexofenadine)
	// ranolazine_mpo (its logP term is named logP_under_4 but is MaxGaussian(7, 1)).
	define("ranolazine_mpo", geometric{
		newTanimoto(ranolazine, AP, clipped(0.7)),
		descriptor{logP, maxGaussian(7, 1)},
		descriptor{atomCounter("F"), gaussian(1, 1.0)},
		descriptor{tpsa, maxGaussian(95, 20)},
	}, ranolazine)
	// perindopril_rings.
	define("perindopril_mpo", geometric{
		newTanimoto(perindopril, ECFP4, nil),
		descriptor{numAromaticRings, gaussian(2, 0.5)},
	}, perindopril)
	// amlodipine_rings.
	define("amlodipine_mpo", geometric{
		newTanimoto(amlodipine, ECFP4, nil),
		descriptor{numRings, gaussian(3, 0.5)},
	}, amlodipine)
	// sitagliptin_replacement.
	define("sitagliptin_mpo", geometric{
		newTanimoto(sitagliptin, ECFP4, gaussian(0, 0.1)),
		newAroundTarget(sitagliptin, logP, 0.2),
		newAroundTarget(sitagliptin, tpsa, 5),
		isomer("C16H15F6N5O"),
	}, sitagliptin)
	// zaleplon_with_other_formula.
	define("zaleplon_mpo", geometric{
		newTanimoto(zaleplon, ECFP4, nil),
		isomer("C19H17N3O2"),
	}, zaleplon)
	// valsartan_smarts: smarts_with_other_target(valsartan SMARTS, sitagliptin).
	define("valsartan_smarts", geometric{
		newSmarts(valsartanSmarts, false),
		newAroundTarget(sitagliptinValsartan, logP, 0.2),
		newAroundTarget(sitagliptinValsartan, tpsa, 5),
		newAroundTarget(sitagliptinValsartan, bertz, 30),
	}, sitagliptinValsartan)
	// decoration_hop and scaffold_hop: arithmetic means.
	define("deco_hop", arithmetic{
		newTanimoto(hopStart, PHCO, clipped(0.85)),
		newSmarts(decoSulfone, true),
		newSmarts(decoBenzothia, true),
		newSmarts(hopScaffold, false),
	}, hopStart)
	define("scaffold_hop", arithmetic{
		newTanimoto(hopStart, PHCO, clipped(0.75)),
		newSmarts(scaffoldHopDeco, false),
		newSmarts(hopScaffold, true),
	}, hopStart)
}
