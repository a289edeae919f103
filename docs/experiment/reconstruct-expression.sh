#!/bin/sh
# Greedy reconstruction of expressions drawn at random from the data set
# (issue 21's measure): N expressions drawn with SEED, encoded to their
# encoder means, decoded greedily, compared with whitespace removed.
#
#   docs/experiment/reconstruct-expression.sh VAE.pt [N] [SEED]
#
# Environment: BIN (default bin/tlbo-native), DATA (default ../shared/data).
set -eu
vae=${1:?usage: reconstruct-expression.sh VAE.pt [N] [SEED]}
n=${2:-1000}
seed=${3:-0}
bin=${BIN:-bin/tlbo-native}
data=${DATA:-../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$data/expression/equation2_15_dataset.txt" "$n" "$seed" "$tmp/in.txt" <<'PY'
import random, sys
lines = [l.strip() for l in open(sys.argv[1]) if l.strip()]
random.Random(int(sys.argv[3])).shuffle(lines)
open(sys.argv[4], "w").write("\n".join(lines[: int(sys.argv[2])]) + "\n")
PY
"$bin" encode --vae "$vae" --in "$tmp/in.txt" --out "$tmp/z.npy" --threads 1 >/dev/null
"$bin" decode --vae "$vae" --in "$tmp/z.npy" --out "$tmp/out.txt" --greedy --threads 1 >/dev/null 2>&1 || true
/usr/bin/python3 - "$tmp/in.txt" "$tmp/out.txt" <<'PY'
import sys
a = [l.replace(" ", "").strip() for l in open(sys.argv[1])]
b = [l.replace(" ", "").strip() for l in open(sys.argv[2])]
same = sum(x == y for x, y in zip(a, b))
print("greedy_reconstruction %.4f (%d of %d)" % (same / len(a), same, len(a)))
PY
