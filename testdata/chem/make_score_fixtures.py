#!/usr/bin/python3
"""Penalised logP fixtures for internal/task/molecule, with Debian's python3-rdkit,
RDKit Contrib's sascorer (rdkit-data) and python3-networkx.

The score is the weighted-retraining code's (github.com/cambridge-mlg/weighted-retraining,
weighted_retraining/chem/chem_utils/__init__.py at commit 4b1c783793e058ace0b33ff3166c9309ede8994f):
calc_penalized_logP.py scores standardize_smiles(s), re-implemented here verbatim so that the
script needs no checkout.

usage: make_score_fixtures.py ZINC_DIR OUT.npz [--heldout OUT2.npz] [--n N] [--seed S]
"""
import argparse
import gzip
import random
import sys

import networkx as nx
import numpy as np
from rdkit import Chem, RDLogger
from rdkit.Chem import Crippen, rdMolDescriptors, rdmolops

sys.path.insert(0, "/usr/share/RDKit/Contrib/SA_Score")
import sascorer  # noqa: E402

RDLogger.logger().setLevel(RDLogger.CRITICAL)

# Hand-made cases: macrocycles, fused and bridged systems where the fundamental cycle basis
# differs from RDKit's rings, charges, stereo, salts, and inputs that must fail.
EXTRA = [
    "C1CCCCCCCCCCC1",                      # 12-ring
    "C1CCCCCCC2CCCCCC2CCCCCCC1",           # macrocycle fused to a 6-ring
    "C1CC2CCC1CC2",                        # bicyclo[2.2.2]octane
    "C1CC2CC1C1CCCCC21",                   # norbornane fused
    "C12C3C4C1C5C2C3C45",                  # cubane
    "C1CC2CCC3CCCC4CCC1C2C34",             # fused polycycle
    "c1ccc2cc3ccccc3cc2c1",                # anthracene
    "c1cc2ccc3cccc4ccc(c1)c2c34",          # pyrene
    "C1CC2(C1)CCC1(CC2)CC1",               # dispiro
    "O=C1CC[C@@]2(C)[C@H]3CC[C@]4(C)[C@@H](O)CC[C@H]4[C@@H]3CCC2=C1",  # testosterone
    "C[C@H](N)C(=O)O",
    "C/C=C/C(=O)[O-].[Na+]",
    "[NH3+]CC(=O)[O-]",
    "CC[N+](C)(C)C.[Cl-]",
    "C1=CC=CC=C1.C1CCCCCCCC1",             # two components
    "C",
    "[Na+]",
    "O=[N+]([O-])c1ccccc1",
    "C1CC2CC3CC1CC(C2)C3",                 # adamantane-like
    "C1CCC2(CC1)OCCO2",
    "C1CCCC2CCCCC2CC1",
    "c1ccc2c(c1)-c1ccccc1C2",
    "C1CC2CCC1C2",
    "C1C2CC3CC1CC(C2)(C3)C",
    "N1C2CCC1CC(C2)O",
    "C1CCC23CCCC2(C1)CCC3",
]
INVALID = ["", "C1CC", "c1cccc1", "C(C)(C)(C)(C)C", "Xx", "C[N+](C)(C)(C)C"]


def get_mol(smiles):
    if len(smiles) == 0:
        return None
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    try:
        Chem.SanitizeMol(mol)
    except ValueError:
        return None
    return mol


def standardize_smiles(smiles):
    mol = get_mol(smiles)
    if mol is None:
        return None
    return Chem.MolToSmiles(mol, isomericSmiles=False)


def cycle_score(mol):
    cycle_list = nx.cycle_basis(nx.Graph(rdmolops.GetAdjacencyMatrix(mol)))
    cycle_length = max([len(j) for j in cycle_list]) if cycle_list else 0
    return 0 if cycle_length <= 6 else cycle_length - 6


def terms(smiles):
    mol = Chem.MolFromSmiles(smiles)
    logp = Crippen.MolLogP(mol)
    sa = sascorer.calculateScore(mol)
    cyc = cycle_score(mol)
    score = (logp - 2.45777691) / 1.43341767 + (-sa + 3.05352042) / 0.83460587 + (-cyc - -0.04861121) / 0.28746695
    return logp, sa, float(cyc), score


def classify(smiles):
    """Tags of a ZINC molecule used to make the sample cover the hard cases."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return set()
    tags = set()
    ri = mol.GetRingInfo()
    if any(len(r) > 8 for r in ri.AtomRings()):
        tags.add("macro")
    if cycle_score(mol) > 0:
        tags.add("cycle")
    if rdMolDescriptors.CalcNumBridgeheadAtoms(mol) > 0:
        tags.add("bridged")
    if rdMolDescriptors.CalcNumSpiroAtoms(mol) > 0:
        tags.add("spiro")
    if any(a.GetFormalCharge() != 0 for a in mol.GetAtoms()):
        tags.add("charge")
    if "@" in smiles or "/" in smiles or "\\" in smiles:
        tags.add("stereo")
    return tags


def sample(zinc, n, rng, exclude):
    """n molecules: about half drawn at random, the rest spread over the hard-case tags."""
    pool = [s for s in zinc if s not in exclude]
    rng.shuffle(pool)
    picked, seen = [], set()
    quota = {"macro": n // 20, "cycle": n // 10, "bridged": n // 10, "spiro": n // 20, "charge": n // 10,
             "stereo": n // 10}
    for s in pool[: 40 * n]:
        if len(picked) >= n // 2:
            break
        for t in classify(s):
            if quota.get(t, 0) > 0 and s not in seen:
                quota[t] -= 1
                picked.append(s)
                seen.add(s)
    for s in pool:
        if len(picked) >= n:
            break
        if s not in seen:
            picked.append(s)
            seen.add(s)
    return picked


def write(path, smiles):
    std, lp, sa, cy, sc, ok = [], [], [], [], [], []
    for s in smiles:
        c = standardize_smiles(s)
        if c is None:
            std.append("")
            lp.append(0.0), sa.append(0.0), cy.append(0.0), sc.append(-4.0), ok.append(False)
            continue
        t = terms(c)
        std.append(c)
        lp.append(t[0]), sa.append(t[1]), cy.append(t[2]), sc.append(t[3]), ok.append(True)
    np.savez_compressed(path, smiles=np.array(smiles), standard=np.array(std), logp=np.array(lp),
                        sa=np.array(sa), cycle=np.array(cy), score=np.array(sc), valid=np.array(ok))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zinc_dir")
    ap.add_argument("out")
    ap.add_argument("--heldout")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    with gzip.open(f"{a.zinc_dir}/zinc250k.smi.gz", "rt") as f:
        zinc = [line.split()[0] for line in f if line.strip()]
    rng = random.Random(a.seed)
    test = sample(zinc, a.n, rng, set())
    write(a.out, test + EXTRA + INVALID)
    if a.heldout:
        held = sample(zinc, a.n, random.Random(a.seed + 1), set(test))
        write(a.heldout, held)


if __name__ == "__main__":
    main()
