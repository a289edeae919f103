#!/bin/sh
# Greedy reconstruction of expressions drawn at random from the data set
# (issue 21's measure): N expressions drawn with SEED, encoded to their
# encoder means, decoded greedily, compared with whitespace removed (the
# grammar is unambiguous, so equal text is an equal derivation). The decodes
# equal the T-LBO authors' decoder's on the shipped networks
# (internal/task/expression TestDecodeMatchesAuthors). The second line splits
# the misses: `wrapper` when only the wrappers ( sin( exp( differ, `invalid`
# when no derivation was complete after 15 rules, `other` otherwise.
#
#   docs/experiment/reconstruct-expression.sh VAE.pt [N] [SEED]
#
# Environment: BIN (default bin/tlbo-native), DATA (default ../shared/data),
# FROM: where the N expressions come from:
#   data            (default) the whole data set, uniformly without replacement
#   train           the training split of the pretraining subset (`data
#                   expression`'s expression_subset.npz after its first 5%,
#                   which validate), uniformly without replacement
#   val             that first 5%, uniformly without replacement
#   train-weighted  the training split drawn with replacement in proportion to
#                   the rank weights 1 / (K n + rank) that pretraining samples
#                   its mini-batches with (K, default 1e-3): what the training
#                   loss sees
set -eu
vae=${1:?usage: reconstruct-expression.sh VAE.pt [N] [SEED]}
n=${2:-1000}
seed=${3:-0}
bin=${BIN:-bin/tlbo-native}
data=${DATA:-../shared/data}
from=${FROM:-data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $from in
data)
	/usr/bin/python3 - "$data/expression/equation2_15_dataset.txt" "$n" "$seed" "$tmp/in.txt" <<'PY'
import random, sys
lines = [l.strip() for l in open(sys.argv[1]) if l.strip()]
random.Random(int(sys.argv[3])).shuffle(lines)
open(sys.argv[4], "w").write("\n".join(lines[: int(sys.argv[2])]) + "\n")
PY
	;;
train | val | train-weighted)
	"$bin" data expression --data-dir "$data" --out "$tmp/data" >/dev/null
	/usr/bin/python3 - "$tmp/data/expression_subset.npz" "$n" "$seed" "$tmp/in.txt" "$from" "${K:-1e-3}" <<'PY'
import random, sys
import numpy as np
d = np.load(sys.argv[1])
exprs, scores = list(d["expr"]), d["scores"]
n, rng, k = int(sys.argv[2]), random.Random(int(sys.argv[3])), float(sys.argv[6])
nv = int(0.05 * len(exprs))  # the trainer's validation split: the first 5%
if sys.argv[5] == "val":
    pool = exprs[:nv]
    rng.shuffle(pool)
    pick = pool[:n]
else:
    pool, y = exprs[nv:], scores[nv:]
    if sys.argv[5] == "train":
        rng.shuffle(pool)
        pick = pool[:n]
    else:  # lower scores are better: rank 0 is the best
        w = 1.0 / (k * len(pool) + np.argsort(np.argsort(y, kind="stable"), kind="stable"))
        pick = rng.choices(pool, weights=w.tolist(), k=n)
open(sys.argv[4], "w").write("\n".join(pick) + "\n")
PY
	;;
*)
	echo "reconstruct-expression: FROM=$from: want data, train, val or train-weighted" >&2
	exit 2
	;;
esac
"$bin" encode --vae "$vae" --in "$tmp/in.txt" --out "$tmp/z.npy" --threads 1 >/dev/null
"$bin" decode --vae "$vae" --in "$tmp/z.npy" --out "$tmp/out.txt" --greedy --threads 1 >/dev/null 2>&1 || true
/usr/bin/python3 - "$tmp/in.txt" "$tmp/out.txt" <<'PY'
import sys
a = [l.replace(" ", "").strip() for l in open(sys.argv[1])]
b = [l.replace(" ", "").strip() for l in open(sys.argv[2])]
if len(a) != len(b):
    sys.exit("reconstruct-expression: %d expressions but %d decodes" % (len(a), len(b)))
same = sum(x == y for x, y in zip(a, b))
print("greedy_reconstruction %.4f (%d of %d)" % (same / len(a), same, len(a)))
bare = lambda e: e.replace("sin(", "(").replace("exp(", "(")
miss = [(x, y) for x, y in zip(a, b) if x != y]
wrapper = sum(y != "" and bare(x) == bare(y) for x, y in miss)
invalid = sum(y == "" for x, y in miss)
print("misses wrapper %d invalid %d other %d" % (wrapper, invalid, len(miss) - wrapper - invalid))
PY
