#!/bin/sh
# Issue 21's measure of a topology VAE on designs its training never saw:
# the designs of DESIGNS.npz (`data topology -n N --seed S` with a seed other
# than the training set's), encoded (encoder means), decoded as the task
# decodes (pixels rounded), and compared with the originals by the task's
# cosine similarity (internal/task/topology Similarity: 0 when either design
# is empty). Prints the mean, the quartiles and the share of designs at
# >= 0.8 (the paper's domain-recovery threshold) and >= 0.9.
#
#   docs/experiment/reconstruct-topology.sh VAE.pt DESIGNS.npz
#
# e.g. the held-out set of pretrained/README.md:
#   bin/tlbo-native data topology -n 500 --seed 1 --out runs/topology-test-s1
#   docs/experiment/reconstruct-topology.sh pretrained/topology-t.pt runs/topology-test-s1/topology.npz
#
# Environment: BIN (default bin/tlbo-native).
set -eu
vae=${1:?usage: reconstruct-topology.sh VAE.pt DESIGNS.npz}
designs=${2:?usage: reconstruct-topology.sh VAE.pt DESIGNS.npz}
bin=${BIN:-bin/tlbo-native}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 - "$designs" "$tmp/in.npy" <<'PY'
import sys
import numpy as np
with np.load(sys.argv[1]) as f:
    if "designs" not in f.files:
        sys.exit(f"{sys.argv[1]}: no array 'designs' (not written by `data topology`)")
    np.save(sys.argv[2], f["designs"].astype(np.uint8))
PY
fail() { cat "$tmp/err" >&2; exit 1; }
"$bin" encode --vae "$vae" --in "$tmp/in.npy" --out "$tmp/z.npy" 2>"$tmp/err" >/dev/null || fail
"$bin" decode --vae "$vae" --in "$tmp/z.npy" --out "$tmp/out.npy" 2>"$tmp/err" >/dev/null || fail
/usr/bin/python3 - "$vae" "$designs" "$tmp/in.npy" "$tmp/out.npy" <<'PY'
import sys
import numpy as np
a = np.load(sys.argv[3]).reshape(-1, 1600).astype(np.int64)
b = np.load(sys.argv[4]).reshape(-1, 1600).astype(np.int64)
if a.shape != b.shape:
    sys.exit(f"decoded {b.shape[0]} designs for {a.shape[0]}")
na, nb = a.sum(1), b.sum(1)
dot = (a * b).sum(1)
sim = np.where((na > 0) & (nb > 0), dot / np.sqrt(np.maximum(na * nb, 1)), 0.0)
q = np.quantile(sim, [0.25, 0.5, 0.75])
print(f"{sys.argv[1]}: {len(sim)} designs of {sys.argv[2]}")
print(f"similarity_mean {sim.mean():.4f} (rounded decodes of the encoder means; quartiles {q[0]:.4f} {q[1]:.4f} {q[2]:.4f})")
print(f"share_at_0.8 {np.mean(sim >= 0.8):.4f}")
print(f"share_at_0.9 {np.mean(sim >= 0.9):.4f}")
PY
