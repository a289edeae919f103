#!/usr/bin/python3
"""Fixtures for internal/task/molecule/objectives, with Debian's python3-rdkit (2022.09.3) and numpy.

The objectives are GuacaMol's goal-directed benchmarks (BenevolentAI/guacamol, standard_benchmarks.py,
score_modifier.py, common_scoring_functions.py, utils/fingerprints.py, utils/descriptors.py), which TDC
and the PMO benchmark vendor. GuacaMol itself is not installable here (no PyPI), so the definitions are
written again below over RDKit's Python API, function for function, from GuacaMol's source
(BenevolentAI/guacamol at 60ebe1f; the target SMILES are its strings); QED is rdkit.Chem.QED.qed itself,
BertzCT rdkit.Chem.Descriptors.BertzCT and the PHCO fingerprint rdkit.Chem.Pharm2D's
Gen2DFingerprint(mol, Gobbi_Pharm2D.factory), as GuacaMol calls them.

usage: make_fixtures.py ZINC_TXT OUT.json[.gz] [--n N] [--seed S] [--skip N] [--no-extra]
  ZINC_TXT: one SMILES a line (e.g. shared/data/zinc/jtvae_test.txt); N molecules drawn with seed S
  after the first SKIP lines are left out (held-out sets: a different seed or skip).
"""
import argparse
import gzip
import json
import random
import re
import sys

import numpy as np
from rdkit import Chem, DataStructs, RDLogger, rdBase
from rdkit.Chem import AllChem, Descriptors, QED
from rdkit.Chem.Pharm2D import Generate, Gobbi_Pharm2D

RDLogger.logger().setLevel(RDLogger.CRITICAL)


# guacamol/utils/chemistry.py
def smiles_to_rdkit_mol(smiles):
    mol = Chem.MolFromSmiles(smiles)
    if mol is not None:
        try:
            Chem.SanitizeMol(mol)
        except ValueError:
            return None
    return mol


# guacamol/utils/fingerprints.py
def get_fingerprint(mol, fp_type):
    if fp_type == 'AP':
        return AllChem.GetAtomPairFingerprint(mol, maxLength=10)
    if fp_type == 'PHCO':
        return Generate.Gen2DFingerprint(mol, Gobbi_Pharm2D.factory)
    if fp_type == 'ECFP4':
        return AllChem.GetMorganFingerprint(mol, 2)
    if fp_type == 'ECFP6':
        return AllChem.GetMorganFingerprint(mol, 3)
    if fp_type == 'FCFP4':
        return AllChem.GetMorganFingerprint(mol, 2, useFeatures=True)
    raise ValueError(fp_type)


# guacamol/utils/descriptors.py
def logP(mol):
    return Descriptors.MolLogP(mol)


def tpsa(mol):
    return Descriptors.TPSA(mol)


def bertz(mol):
    return Descriptors.BertzCT(mol)


def num_rings(mol):
    return Chem.rdMolDescriptors.CalcNumRings(mol)


def num_aromatic_rings(mol):
    return Chem.rdMolDescriptors.CalcNumAromaticRings(mol)


def num_atoms(mol):
    return Chem.AddHs(mol).GetNumAtoms()


class AtomCounter:
    def __init__(self, element):
        self.element = element

    def __call__(self, mol):
        if self.element == 'H':
            mol = Chem.AddHs(mol)
        return sum(1 for a in mol.GetAtoms() if a.GetSymbol() == self.element)


def parse_molecular_formula(formula):
    matches = re.findall(r'([A-Z][a-z]*)(\d*)', formula)
    return [(m[0], 1 if len(m[1]) == 0 else int(m[1])) for m in matches]


# guacamol/score_modifier.py
class ClippedScoreModifier:
    def __init__(self, upper_x, lower_x=0.0, high_score=1.0, low_score=0.0):
        self.upper_x, self.lower_x, self.high_score, self.low_score = upper_x, lower_x, high_score, low_score
        self.slope = (high_score - low_score) / (upper_x - lower_x)
        self.intercept = high_score - self.slope * upper_x

    def __call__(self, x):
        y = self.slope * x + self.intercept
        return np.clip(y, self.low_score, self.high_score)


class GaussianModifier:
    def __init__(self, mu, sigma):
        self.mu, self.sigma = mu, sigma

    def __call__(self, x):
        return np.exp(-0.5 * np.power((x - self.mu) / self.sigma, 2.))


class MinMaxGaussianModifier:
    def __init__(self, mu, sigma, minimize=False):
        self.mu, self.minimize = mu, minimize
        self._full_gaussian = GaussianModifier(mu=mu, sigma=sigma)

    def __call__(self, x):
        mod_x = np.maximum(x, self.mu) if self.minimize else np.minimum(x, self.mu)
        return self._full_gaussian(mod_x)


def MinGaussianModifier(mu, sigma):
    return MinMaxGaussianModifier(mu, sigma, minimize=True)


def MaxGaussianModifier(mu, sigma):
    return MinMaxGaussianModifier(mu, sigma, minimize=False)


class LinearModifier:
    def __call__(self, x):
        return 1.0 * x


# guacamol/common_scoring_functions.py and scoring_function.py
class TanimotoScoringFunction:
    def __init__(self, target, fp_type, score_modifier=None):
        self.fp_type = fp_type
        self.mod = score_modifier or LinearModifier()
        self.ref_fp = get_fingerprint(smiles_to_rdkit_mol(target), fp_type)

    def __call__(self, mol):
        return self.mod(DataStructs.TanimotoSimilarity(get_fingerprint(mol, self.fp_type), self.ref_fp))


class RdkitScoringFunction:
    def __init__(self, descriptor, score_modifier=None):
        self.descriptor = descriptor
        self.mod = score_modifier or LinearModifier()

    def __call__(self, mol):
        return self.mod(self.descriptor(mol))


class SMARTSScoringFunction:
    def __init__(self, target, inverse=False):
        self.inverse = inverse
        self.target = Chem.MolFromSmarts(target)
        assert self.target is not None

    def __call__(self, mol):
        if len(mol.GetSubstructMatches(self.target)) > 0:
            return 0.0 if self.inverse else 1.0
        return 1.0 if self.inverse else 0.0


def geometric_mean(values):
    a = np.array(values)
    return a.prod() ** (1.0 / len(a))


class GeometricMeanScoringFunction:
    def __init__(self, fs):
        self.fs = fs

    def __call__(self, mol):
        return geometric_mean([f(mol) for f in self.fs])


class ArithmeticMeanScoringFunction:
    def __init__(self, fs):
        self.fs = fs
        self.weights = np.ones(len(fs))

    def __call__(self, mol):
        scores = [w * np.array([f(mol)]) for f, w in zip(self.fs, self.weights)]
        return float((np.array(scores).sum(axis=0) / np.sum(self.weights))[0])


class IsomerScoringFunction:
    def __init__(self, formula):
        occ = parse_molecular_formula(formula)
        total = sum(n for _, n in occ)
        self.fs = [RdkitScoringFunction(AtomCounter(e), GaussianModifier(mu=n, sigma=1.0)) for e, n in occ]
        self.fs.append(RdkitScoringFunction(num_atoms, GaussianModifier(mu=total, sigma=2.0)))

    def __call__(self, mol):
        return geometric_mean([f(mol) for f in self.fs])


def similarity(smiles, fp_type, threshold):
    return TanimotoScoringFunction(smiles, fp_type, ClippedScoreModifier(upper_x=threshold))


def smarts_with_other_target(smarts, other):
    om = Chem.MolFromSmiles(other)
    return GeometricMeanScoringFunction([
        SMARTSScoringFunction(smarts),
        RdkitScoringFunction(logP, GaussianModifier(mu=logP(om), sigma=0.2)),
        RdkitScoringFunction(tpsa, GaussianModifier(mu=tpsa(om), sigma=5)),
        RdkitScoringFunction(bertz, GaussianModifier(mu=bertz(om), sigma=30)),
    ])


# guacamol/standard_benchmarks.py (the PMO names).
HOP = 'CCCOc1cc2ncnc(Nc3ccc4ncsc4c3)c2cc1S(=O)(=O)C(C)(C)C'
SITAGLIPTIN = 'Fc1cc(c(F)cc1F)CC(N)CC(=O)N3Cc2nnc(n2CC3)C(F)(F)F'
TARGETS = {
    'celecoxib': 'CC1=CC=C(C=C1)C1=CC(=NN1C1=CC=C(C=C1)S(N)(=O)=O)C(F)(F)F',
    'troglitazone': 'Cc1c(C)c2OC(C)(COc3ccc(CC4SC(=O)NC4=O)cc3)CCc2c(C)c1O',
    'thiothixene': 'CN(C)S(=O)(=O)c1ccc2Sc3ccccc3C(=CCCN4CCN(C)CC4)c2c1',
    'albuterol': 'CC(C)(C)NCC(O)c1ccc(O)c(CO)c1',
    'mestranol': 'COc1ccc2[C@H]3CC[C@@]4(C)[C@@H](CC[C@@]4(O)C#C)[C@@H]3CCc2c1',
    'camphor': 'CC1(C)C2CCC1(C)C(=O)C2',
    'menthol': 'CC(C)C1CCC(C)CC1O',
    'tadalafil': 'O=C1N(CC(N2C1CC3=C(C2C4=CC5=C(OCO5)C=C4)NC6=C3C=CC=C6)=O)C',
    'sildenafil': 'CCCC1=NN(C2=C1N=C(NC2=O)C3=C(C=CC(=C3)S(=O)(=O)N4CCN(CC4)C)OCC)C',
    'osimertinib': 'COc1cc(N(C)CCN(C)C)c(NC(=O)C=C)cc1Nc2nccc(n2)c3cn(C)c4ccccc34',
    'fexofenadine': 'CC(C)(C(=O)O)c1ccc(cc1)C(O)CCCN2CCC(CC2)C(O)(c3ccccc3)c4ccccc4',
    'ranolazine': 'COc1ccccc1OCC(O)CN2CCN(CC(=O)Nc3c(C)cccc3C)CC2',
    'perindopril': 'O=C(OCC)C(NC(C(=O)N1C(C(=O)O)CC2CCCCC12)C)CCC',
    'amlodipine': 'Clc1ccccc1C2C(=C(/N/C(=C2/C(=O)OCC)COCCN)C)\\C(=O)OC',
    'sitagliptin': SITAGLIPTIN,
    'sitagliptin_valsartan': 'NC(CC(=O)N1CCn2c(nnc2C(F)(F)F)C1)Cc1cc(F)c(F)cc1F',
    'zaleplon': 'O=C(C)N(CC)C1=CC=CC(C2=CC=NC3=C(C=NN23)C#N)=C1',
    'hop_start': HOP,
}
T = TARGETS


def objectives():
    sit = Chem.MolFromSmiles(SITAGLIPTIN)
    hop_scaffold = '[#7]-c1n[c;h1]nc2[c;h1]c(-[#8])[c;h0][c;h1]c12'
    return {
        'qed': QED.qed,
        'celecoxib_rediscovery': similarity(T['celecoxib'], 'ECFP4', 1.0),
        'troglitazone_rediscovery': similarity(T['troglitazone'], 'ECFP4', 1.0),
        'thiothixene_rediscovery': similarity(T['thiothixene'], 'ECFP4', 1.0),
        'albuterol_similarity': similarity(T['albuterol'], 'FCFP4', 0.75),
        'mestranol_similarity': similarity(T['mestranol'], 'AP', 0.75),
        'isomers_c7h8n2o2': IsomerScoringFunction('C7H8N2O2'),
        'isomers_c9h10n2o2pf2cl': IsomerScoringFunction('C9H10N2O2PF2Cl'),
        'median1': GeometricMeanScoringFunction([
            TanimotoScoringFunction(T['menthol'], 'ECFP4'), TanimotoScoringFunction(T['camphor'], 'ECFP4')]),
        'median2': GeometricMeanScoringFunction([
            TanimotoScoringFunction(T['tadalafil'], 'ECFP6'), TanimotoScoringFunction(T['sildenafil'], 'ECFP6')]),
        'osimertinib_mpo': GeometricMeanScoringFunction([
            TanimotoScoringFunction(T['osimertinib'], 'FCFP4', ClippedScoreModifier(upper_x=0.8)),
            TanimotoScoringFunction(T['osimertinib'], 'ECFP6', MinGaussianModifier(mu=0.85, sigma=0.1)),
            RdkitScoringFunction(tpsa, MaxGaussianModifier(mu=100, sigma=10)),
            RdkitScoringFunction(logP, MinGaussianModifier(mu=1, sigma=1))]),
        'fexofenadine_mpo': GeometricMeanScoringFunction([
            TanimotoScoringFunction(T['fexofenadine'], 'AP', ClippedScoreModifier(upper_x=0.8)),
            RdkitScoringFunction(tpsa, MaxGaussianModifier(mu=90, sigma=10)),
            RdkitScoringFunction(logP, MinGaussianModifier(mu=4, sigma=1))]),
        'ranolazine_mpo': GeometricMeanScoringFunction([
            TanimotoScoringFunction(T['ranolazine'], 'AP', ClippedScoreModifier(upper_x=0.7)),
            RdkitScoringFunction(logP, MaxGaussianModifier(mu=7, sigma=1)),
            RdkitScoringFunction(AtomCounter('F'), GaussianModifier(mu=1, sigma=1.0)),
            RdkitScoringFunction(tpsa, MaxGaussianModifier(mu=95, sigma=20))]),
        'perindopril_mpo': GeometricMeanScoringFunction([
            TanimotoScoringFunction(T['perindopril'], 'ECFP4'),
            RdkitScoringFunction(num_aromatic_rings, GaussianModifier(mu=2, sigma=0.5))]),
        'amlodipine_mpo': GeometricMeanScoringFunction([
            TanimotoScoringFunction(T['amlodipine'], 'ECFP4'),
            RdkitScoringFunction(num_rings, GaussianModifier(mu=3, sigma=0.5))]),
        'sitagliptin_mpo': GeometricMeanScoringFunction([
            TanimotoScoringFunction(SITAGLIPTIN, 'ECFP4', GaussianModifier(mu=0, sigma=0.1)),
            RdkitScoringFunction(logP, GaussianModifier(mu=logP(sit), sigma=0.2)),
            RdkitScoringFunction(tpsa, GaussianModifier(mu=tpsa(sit), sigma=5)),
            IsomerScoringFunction('C16H15F6N5O')]),
        'zaleplon_mpo': GeometricMeanScoringFunction([
            TanimotoScoringFunction(T['zaleplon'], 'ECFP4'), IsomerScoringFunction('C19H17N3O2')]),
        'valsartan_smarts': smarts_with_other_target('CN(C=O)Cc1ccc(c2ccccc2)cc1', T['sitagliptin_valsartan']),
        'deco_hop': ArithmeticMeanScoringFunction([
            TanimotoScoringFunction(HOP, 'PHCO', ClippedScoreModifier(upper_x=0.85)),
            SMARTSScoringFunction('CS([#6])(=O)=O', inverse=True),
            SMARTSScoringFunction('[#7]-c1ccc2ncsc2c1', inverse=True),
            SMARTSScoringFunction(hop_scaffold, inverse=False)]),
        'scaffold_hop': ArithmeticMeanScoringFunction([
            TanimotoScoringFunction(HOP, 'PHCO', ClippedScoreModifier(upper_x=0.75)),
            SMARTSScoringFunction('[#6]-[#6]-[#6]-[#8]-[#6]~[#6]~[#6]~[#6]~[#6]-[#7]-c1ccc2ncsc2c1', inverse=False),
            SMARTSScoringFunction(hop_scaffold, inverse=True)]),
    }


# Hand-made cases: charges, explicit and isotopic hydrogens, salts, alerts, phosphorus and
# halogens for the isomer tasks, an isomer of each formula, tiny molecules, stereo.
EXTRA = [
    'C', 'O', 'CC', '[Na+].[Cl-]', 'C[N+](C)(C)C', '[2H]C([2H])([2H])O', '[H]OC([H])([H])C', 'c1ccccc1',
    'Nc1ccc(cc1)C(=O)NN', 'CC(=O)Oc1ccccc1C(=O)O', 'O=[N+]([O-])c1ccccc1', 'C1CC1N=C=O', 'OP(=O)(O)O',
    'Cc1ccc(N)c([N+](=O)[O-])c1', 'NC(=O)c1ccccc1C(N)=O', 'Nc1ncccc1C(=O)O',  # C7H8N2O2 and near
    'NC(=O)c1cc(Cl)c(OP(F)F)c(C)c1C(C)=N', 'CC(C)(OP(F)F)c1cc(Cl)ccc1C(N)=O',  # near C9H10N2O2PF2Cl
    'C[C@H](N)C(=O)O', 'F/C=C/F', 'C1=CC2=CC=CC2=C1', 'c1ccc2c(c1)c1ccccc1c1ccccc21', 'S=C=S', 'C#CC#C',
    'CCCCCCCCCCCCCCCCCC(=O)O', 'O=C1NC(=O)C(=O)N1', '[O-]S(=O)(=O)[O-].[Mg+2]', 'ClC(Cl)(Cl)Cl', 'IC',
    'c1ccc2ncsc2c1', 'CS(C)(=O)=O', 'COc1cc2ncnc(Nc3ccc4ncsc4c3)c2cc1O',  # hop fragments
    'CN(C=O)Cc1ccc(-c2ccccc2)cc1', 'CC[C@@H](C)[C@H](NC(=O)C)C(=O)N[C@@H](Cc1ccccc1)C(=O)O',
    'C1CCC2(CC1)CCCC2', 'C1CC2CCC1C2', 'c1ccc2cc3ccccc3cc2c1', 'OC(=O)CCc1ccccc1[Si](C)(C)C',
    'FC(F)(F)c1nnc2n1CCNC2', 'O=C(O)C1CC2CCCCC2N1',
    'CCCCC(=O)N(Cc1ccc(-c2ccccc2-c2nnn[nH]2)cc1)[C@@H](C(C)C)C(=O)O',  # valsartan
    'NC(=O)N(Cc1ccc(-c2ccc(F)cc2)cc1)CC(F)(F)F', 'O=CN(CCn1cnnc1)Cc1ccc(-c2ccccc2O)cc1',
]

# Per-molecule internals checked too (beyond the objectives).
FP_KINDS = ['ECFP4', 'ECFP6', 'FCFP4', 'AP']


def sparse(fp):
    d = fp.GetNonzeroElements()
    return [[int(k), int(v)] for k, v in sorted(d.items())]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('zinc')
    ap.add_argument('out')
    ap.add_argument('--n', type=int, default=50)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--skip', type=int, default=0)
    ap.add_argument('--no-extra', action='store_true')
    a = ap.parse_args()
    lines = [l.strip() for l in open(a.zinc) if l.strip()][a.skip:]
    random.Random(a.seed).shuffle(lines)
    smiles = lines[:a.n]
    if not a.no_extra:
        smiles += EXTRA + list(dict.fromkeys(TARGETS.values()))
    objs = objectives()
    mols = []
    for s in smiles:
        m = smiles_to_rdkit_mol(s)
        if m is None:
            print('skipping', s, file=sys.stderr)
            continue
        rec = {'smiles': s}
        rec['qed_props'] = list(QED.properties(m))
        rec['bertz'] = bertz(m)
        rec['descriptors'] = {
            'amw': Descriptors.MolWt(m), 'tpsa': tpsa(m), 'crippen_logp': logP(m),
            'num_hbd': float(Chem.rdMolDescriptors.CalcNumHBD(m)),
            'num_rotatable_bonds_strict': float(Chem.rdMolDescriptors.CalcNumRotatableBonds(
                m, Chem.rdMolDescriptors.NumRotatableBondsOptions.Strict)),
            'num_rings': float(num_rings(m)), 'num_aromatic_rings': float(num_aromatic_rings(m)),
            'num_atoms_h': float(num_atoms(m)),
        }
        rec['fps'] = {k: sparse(get_fingerprint(m, k)) for k in FP_KINDS}
        rec['phco'] = list(get_fingerprint(m, 'PHCO').GetOnBits())
        rec['scores'] = {name: float(f(m)) for name, f in objs.items()}
        mols.append(rec)
    out = {
        'rdkit': rdBase.rdkitVersion, 'numpy': np.__version__, 'zinc': a.zinc, 'n': a.n, 'seed': a.seed,
        'skip': a.skip, 'targets': TARGETS, 'phco_size': Gobbi_Pharm2D.factory.GetSigSize(), 'molecules': mols,
    }
    with (gzip.open(a.out, 'wt') if a.out.endswith('.gz') else open(a.out, 'w')) as f:
        json.dump(out, f, indent=None, separators=(',', ':'))
        f.write('\n')
    print(f'{len(mols)} molecules -> {a.out}', file=sys.stderr)


if __name__ == '__main__':
    main()
