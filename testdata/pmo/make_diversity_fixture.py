#!/usr/bin/python3
"""Fixture for molecule.Diversity (analyze pmo's diversity_top10): TDC's
internal diversity, which the PMO benchmark reports for its top molecules
(tdc.Evaluator("diversity")), written as TDC computes it over Debian's
python3-rdkit (2022.09.3): the distinct SMILES strings of the set, Morgan
bit fingerprints AllChem.GetMorganFingerprintAsBitVect(mol, 2, nBits=2048,
useChirality=False), the Tanimoto similarity of every distinct pair, and
1 - their mean. The pairwise similarities are computed twice, with
DataStructs.TanimotoSimilarity pair by pair and DataStructs.
BulkTanimotoSimilarity row by row, and must agree.

    /usr/bin/python3 testdata/pmo/make_diversity_fixture.py ZINC_TXT [OUT.json]

ZINC_TXT: one SMILES a line (e.g. ../shared/data/zinc/jtvae_test.txt); the
sets are drawn from it with a fixed seed, plus hand-made ones (duplicates,
stereo and charges, two molecules, tiny molecules). OUT defaults to
testdata/pmo/diversity.json beside this script. Each molecule's on bits are
written too, so that the Go side checks the fingerprints exactly.
"""
import json
import os
import random
import sys

import numpy as np
from rdkit import Chem, DataStructs, RDLogger
from rdkit.Chem import AllChem

RDLogger.logger().setLevel(RDLogger.CRITICAL)


def fingerprint(smiles):
    return AllChem.GetMorganFingerprintAsBitVect(Chem.MolFromSmiles(smiles), 2, nBits=2048, useChirality=False)


def diversity(smiles):
    unique = list(set(smiles))
    fps = [fingerprint(s) for s in unique]
    pairwise, bulk = [], []
    for i, fp in enumerate(fps):
        for fp2 in fps[i + 1:]:
            pairwise.append(DataStructs.TanimotoSimilarity(fp, fp2))
        bulk.extend(DataStructs.BulkTanimotoSimilarity(fp, fps[i + 1:]))
    assert pairwise == bulk, "TanimotoSimilarity and BulkTanimotoSimilarity disagree"
    return float(1 - np.mean(pairwise))


def main():
    zinc = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "diversity.json")
    with open(zinc) as f:
        pool = [line.split()[0] for line in f if line.strip()]
    rng = random.Random(24)
    sets = [rng.sample(pool, 10) for _ in range(6)]
    sets.append(rng.sample(pool, 100))
    sets += [
        # duplicates count once (TDC takes set(list_of_smiles))
        ["CCO", "CCO", "c1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "c1ccccc1"],
        # stereo and charges (fingerprints without chirality)
        ["C[C@H](N)C(=O)O", "C[C@@H](N)C(=O)O", "CC(N)C(=O)[O-]", "C[NH3+]", "O=[N+]([O-])c1ccccc1"],
        # two molecules, one pair
        ["CC(C)Cc1ccc(cc1)C(C)C(=O)O", "CN1C=NC2=C1C(=O)N(C(=O)N2C)C"],
        # tiny molecules and a salt
        ["C", "O", "N", "[Na+].[Cl-]", "C#N"],
        # identical fingerprints only: diversity 0
        ["CCCCCCCCCCCC", "CCCCCCCCCCCCC"],
    ]
    cases = [{"smiles": s, "diversity": diversity(s)} for s in sets]
    bits = {}
    for s in sets:
        for smi in s:
            bits[smi] = list(fingerprint(smi).GetOnBits())
    with open(out, "w") as f:
        json.dump({"rdkit": Chem.rdBase.rdkitVersion, "cases": cases, "bits": bits}, f, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
