#!/bin/sh
# Issue 22's measures of a JT-VAE checkpoint, on molecules its training never
# saw:
#   - greedy reconstruction (the authors' measure: decode_deterministic of the
#     encoder means): N molecules drawn with SEED from ZINC's JT-VAE test split
#     (jtvae_test.txt; SPLIT below), encoded (`encode --skip-invalid`), decoded greedily,
#     compared as RDKit canonical SMILES without stereochemistry (as the
#     training report compares). Reported twice: among the molecules the
#     network can take, and among all N (a molecule RDKit cannot kekulize, or
#     with a cluster outside the vocabulary, counts as a miss);
#   - prior validity and distinct molecules: N latent points drawn from
#     N(0, I) with SEED, decoded greedily.
#
#   docs/experiment/reconstruct-molecule.sh VAE.pt [N] [SEED]
#
# Environment: BIN (default bin/tlbo-native), DATA (default ../shared/data),
# SPLIT (default test: ZINC's jtvae_test.txt; valid reads jtvae_valid.txt, for
# choices about the training, so that the test split stays unseen by them).
# Decoding runs on all CPUs.
set -eu
vae=${1:?usage: reconstruct-molecule.sh VAE.pt [N] [SEED]}
n=${2:-1000}
seed=${3:-0}
bin=${BIN:-bin/tlbo-native}
data=${DATA:-../shared/data}
split=${SPLIT:-test}
case $split in test | valid) ;; *) echo "reconstruct-molecule.sh: SPLIT=$split: want test or valid" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 - "$data/zinc/jtvae_$split.txt" "$n" "$seed" "$tmp/in.smi" <<'PY'
import random, sys
lines = [l.split()[0] for l in open(sys.argv[1]) if l.strip()]
n, seed = int(sys.argv[2]), int(sys.argv[3])
random.Random(seed).shuffle(lines)
open(sys.argv[4], "w").write("\n".join(lines[:n]) + "\n")
PY
fail() { cat "$tmp/err" >&2; exit 1; }
"$bin" encode --vae "$vae" --in "$tmp/in.smi" --out "$tmp/z.npy" --skip-invalid 2>"$tmp/err" >/dev/null || fail
/usr/bin/python3 - "$tmp/z.npy" "$tmp/zok.npy" "$tmp/rows.txt" "$tmp/prior.npy" "$seed" <<'PY'
import sys
import numpy as np
z = np.load(sys.argv[1])
ok = ~np.isnan(z).any(axis=1)
np.save(sys.argv[2], z[ok])
open(sys.argv[3], "w").write("\n".join(str(i) for i in np.flatnonzero(ok)) + "\n")
np.save(sys.argv[4], np.random.default_rng(int(sys.argv[5])).standard_normal(z.shape))
PY
"$bin" decode --vae "$vae" --in "$tmp/zok.npy" --out "$tmp/rec.smi" --greedy 2>"$tmp/err" >/dev/null || fail
"$bin" decode --vae "$vae" --in "$tmp/prior.npy" --out "$tmp/prior.smi" --greedy 2>"$tmp/err" >/dev/null || fail
/usr/bin/python3 - "$tmp/in.smi" "$tmp/rows.txt" "$tmp/rec.smi" "$tmp/prior.smi" "$vae" "$n" "$seed" "$split" <<'PY'
import sys
from rdkit import Chem, RDLogger
RDLogger.DisableLog("rdApp.*")

def canon(s):
    m = Chem.MolFromSmiles(s) if s else None
    if m is None:
        return None
    Chem.RemoveStereochemistry(m)
    return Chem.MolToSmiles(m)

inp = open(sys.argv[1]).read().split()
rows = [int(r) for r in open(sys.argv[2]).read().split()]
rec = open(sys.argv[3]).read().split("\n")[: len(rows)]
prior = open(sys.argv[4]).read().split("\n")[: int(sys.argv[6])]
hits = sum(canon(inp[i]) == canon(r) for i, r in zip(rows, rec))
valid = [canon(p) for p in prior]
ok = [v for v in valid if v]
n = len(inp)
print(f"{sys.argv[5]}: {n} {sys.argv[8]} molecules (seed {sys.argv[7]}), {len(rows)} encodable")
print(f"reconstruction_greedy {hits / max(1, len(rows)):.4f} ({hits} of {len(rows)} encodable; "
      f"{hits / n:.4f} of all {n})")
print(f"prior_validity {len(ok) / len(prior):.4f} ({len(ok)} of {len(prior)}), distinct {len(set(ok))}")
PY
