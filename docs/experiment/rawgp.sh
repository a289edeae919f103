#!/bin/sh
# The molecule GP on raw latent points and scores (the authors') against
# normalised inputs and standardised targets (ours), on the latent points
# and penalised-logP scores of the committed molecule-18k BO runs (random
# search, LBO, T-LBO, seed 0: 1,498 valid queries, 56 dimensions): five
# random 80/20 splits, SGPR with 500 inducing points, the held-out mean
# predictive log-likelihood per point and RMSE on the scores' scale.
#
#   docs/experiment/rawgp.sh OUT     (BIN: default bin/tlbo-native)
set -eu
out=${1:?usage: rawgp.sh OUT}
bin=${BIN:-bin/tlbo-native}
mkdir -p "$out"
/usr/bin/python3 - "$out" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
X, Y = [], []
for m in ["random", "lbo", "tlbo"]:
    z = np.load("docs/experiment/results/molecule-18k/%s-seed0/results.npz" % m)
    ok = np.array([bool(p) for p in z["opt_points"]])
    X.append(z["opt_latents"][ok])
    Y.append(z["opt_point_properties"][ok])
X, Y = np.concatenate(X), np.concatenate(Y)
for s in range(5):
    p = np.random.default_rng(s).permutation(len(Y))
    n = int(0.8 * len(Y))
    for name, a in (("trx", X[p[:n]]), ("try", Y[p[:n]]), ("tex", X[p[n:]]), ("tey", Y[p[n:]])):
        np.save("%s/%s%d.npy" % (out, name, s), a)
PY
for s in 0 1 2 3 4; do
  for mode in normalised raw; do
    flag=""
    [ "$mode" = raw ] && flag=--raw
    printf '%s split %s: ' "$mode" "$s"
    "$bin" gp --train-x "$out/trx$s.npy" --train-y "$out/try$s.npy" --test-x "$out/tex$s.npy" --test-y "$out/tey$s.npy" \
      --inducing 500 --seed "$s" $flag | tail -n 1
  done
done
