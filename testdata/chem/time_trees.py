#!/usr/bin/python3
"""Reference timing of the authors' decomposition with candidate enumeration (MolTree, recover,
assemble: what their preprocessing's tensorize does) on a file of SMILES, one process.

Code: github.com/cambridge-mlg/weighted-retraining, weighted_retraining/chem/jtnn at commit
4b1c783793e058ace0b33ff3166c9309ede8994f, loaded as in make_tree_fixtures.py.

usage: time_trees.py CHECKOUT SMILES_FILE            prints molecules per wall and per CPU second
       time_trees.py --sample ZINC_DIR N SEED OUT     writes N random training-split molecules to OUT
"""
import gzip
import random
import sys
import time

from rdkit import RDLogger

RDLogger.logger().setLevel(RDLogger.CRITICAL)


def sample(zinc_dir, n, seed, out):
    with gzip.open(f"{zinc_dir}/zinc250k.smi.gz", "rt") as f:
        zinc = [line.split()[0] for line in f if line.strip()]
    held = set()
    for name in ("jtvae_valid.txt", "jtvae_test.txt"):
        with open(f"{zinc_dir}/{name}") as f:
            held |= {line.split()[0] for line in f if line.strip()}
    train = [s for s in zinc if s not in held]
    with open(out, "w") as f:
        f.write("\n".join(random.Random(seed).sample(train, n)) + "\n")


def main():
    if sys.argv[1] == "--sample":
        sample(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        return
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from make_tree_fixtures import load
    _, mt = load(sys.argv[1])
    with open(sys.argv[2]) as f:
        mols = [line.split()[0] for line in f if line.strip()]
    w0, c0 = time.perf_counter(), time.process_time()
    failed = 0
    for s in mols:
        try:
            t = mt.MolTree(s)
            t.recover()
            t.assemble()
        except Exception:
            failed += 1
    w, c = time.perf_counter() - w0, time.process_time() - c0
    print(f"python molecules {len(mols)} failed {failed} wall_s {w:.1f} cpu_s {c:.1f} "
          f"per_wall_s {len(mols) / w:.2f} per_cpu_s {len(mols) / c:.2f}")


if __name__ == "__main__":
    main()
