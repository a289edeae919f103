#!/usr/bin/python3
"""Junction-tree fixtures for internal/chem: runs the authors' JT-VAE code with Debian's RDKit.

The code is fast_jtnn as weighted retraining ships it: github.com/cambridge-mlg/weighted-retraining,
weighted_retraining/chem/jtnn/{chemutils,mol_tree,vocab}.py at commit
4b1c783793e058ace0b33ff3166c9309ede8994f (the T-LBO version; chemutils and mol_tree there match
github.com/wengong-jin/icml18-jtnn fast_jtnn). Their package __init__ imports torch modules, so
the script loads the three modules under a stub package instead of editing the checkout.

For each molecule: tree_decomp's clusters (in the order it makes them) and spanning-tree edges,
then MolTree's nodes (root first) with their kekulé SMILES, labels after recover() and candidate
SMILES after assemble() (before tensorize appends a missing label).

usage: make_tree_fixtures.py CHECKOUT ZINC_DIR OUT.json.gz [--n N] [--seed S] [--exclude FIXTURE.json.gz]
       [--time]   (CHECKOUT: the weighted-retraining work tree)
"""
import argparse
import gzip
import importlib
import json
import os
import random
import sys
import time
import types

from rdkit import RDLogger

RDLogger.logger().setLevel(RDLogger.CRITICAL)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_score_fixtures import sample  # noqa: E402

EXTRA = [
    "C1CCCCCCCCCCC1", "C1CC2CCC1CC2", "C12C3C4C1C5C2C3C45", "c1cc2ccc3cccc4ccc(c1)c2c34",
    "C1CC2(C1)CCC1(CC2)CC1", "O=C1CC[C@@]2(C)[C@H]3CC[C@]4(C)[C@@H](O)CC[C@H]4[C@@H]3CCC2=C1",
    "C[C@H](N)C(=O)O", "[NH3+]CC(=O)[O-]", "C", "CC", "O=[N+]([O-])c1ccccc1", "C1CC2CC3CC1CC(C2)C3",
    "CC(C)(C)C", "CC(C)(C)c1ccc(C(C)(C)C)cc1", "C1CCC23CCCC2(C1)CCC3", "c1ccc2c(c1)-c1ccccc1C2",
    "O=C1[C@@H]2C=C[C@@H](C=CC2)C1(c1ccccc1)c1ccccc1", "O=C([O-])CC[C@@]12CCCC[C@]1(O)OC(=O)CC2",
    "ON=C1C[C@H]2CC3(C[C@@H](C1)c1ccccc12)OCCO3",
    "C[C@H]1CC(=O)[C@H]2[C@@]3(O)C(=O)c4cccc(O)c4[C@@H]4O[C@@]43[C@@H](O)C[C@]2(O)C1",
    "O=c1c2ccc3c(=O)n(-c4nccs4)c(=O)c4ccc(c(=O)n1-c1nccs1)c2c34",
]


def load(checkout):
    src = os.path.join(checkout, "weighted_retraining", "chem", "jtnn")
    pkg = types.ModuleType("jtnn")
    pkg.__path__ = [src]
    sys.modules["jtnn"] = pkg
    return importlib.import_module("jtnn.chemutils"), importlib.import_module("jtnn.mol_tree")


def record(cu, mt, smiles):
    try:
        cliques, edges = cu.tree_decomp(cu.get_mol(smiles))
        tree = mt.MolTree(smiles)
        index = {tuple(c): i for i, c in enumerate(cliques)}
        nodes = [{"cluster": index[tuple(n.clique)], "smiles": n.smiles} for n in tree.nodes]
        tree.recover()
        tree.assemble()
        for d, n in zip(nodes, tree.nodes):
            d["label"], d["cands"] = n.label, list(n.cands)
        return {"smiles": smiles, "clusters": [list(map(int, c)) for c in cliques],
                "edges": [[int(a), int(b)] for a, b in edges], "nodes": nodes}
    except Exception as e:  # the molecule fails in their code: record that
        return {"smiles": smiles, "error": f"{type(e).__name__}: {e}"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkout")
    ap.add_argument("zinc_dir")
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exclude", help="a fixture file whose molecules to leave out (held-out sets)")
    ap.add_argument("--time", action="store_true", help="print molecules per second (decomposition + candidates)")
    a = ap.parse_args()
    cu, mt = load(a.checkout)
    with gzip.open(f"{a.zinc_dir}/zinc250k.smi.gz", "rt") as f:
        zinc = [line.split()[0] for line in f if line.strip()]
    exclude = set()
    if a.exclude:
        with gzip.open(a.exclude, "rt") as f:
            exclude = {json.loads(line)["smiles"] for line in f}
    mols = sample(zinc, a.n, random.Random(a.seed), exclude)
    if not a.exclude:
        mols += EXTRA
    t0 = time.perf_counter()
    out = [record(cu, mt, s) for s in mols]
    dt = time.perf_counter() - t0
    if a.time:
        print(f"python_mols_per_s {len(mols) / dt:.2f} ({len(mols)} molecules, {dt:.1f} s)")
    with gzip.open(a.out, "wt") as f:
        for r in out:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
