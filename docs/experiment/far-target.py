#!/usr/bin/python3
"""Pick a topology target that the data set does not nearly contain (issue 53 item 2).

    docs/experiment/far-target.py DATA.npz CANDIDATES.npz MAX_SIMILARITY OUT.npy

DATA.npz is the training set (`data topology -n 10000 --seed 0`), CANDIDATES.npz designs drawn from the same
generator with another seed (`data topology -n N --seed 1`): problems of the data's own kind, which the VAE can
represent, but not in the data. For each candidate, in index order, prints the cosine similarity of its nearest
design in DATA (the best score the data set already holds for that target: the objective is the same cosine
similarity, internal/task/topology.Similarity, a design without material scoring 0), and writes the FIRST candidate
whose nearest data design is at most MAX_SIMILARITY to OUT.npy (40 x 40, uint8), for `optimize --target OUT.npy`.
The first in index order, not the farthest: the farthest designs are the generator's oddities (a load on a support,
a sliver of material), and "first below the bound" is a rule fixed before looking at the candidates.
"""
import sys

import numpy


def nearest_similarity(data, cands):
    """Max cosine similarity of each candidate to the data designs (0/1 images, flattened)."""
    d = data.reshape(len(data), -1).astype(numpy.float64)
    c = cands.reshape(len(cands), -1).astype(numpy.float64)
    dn, cn = d.sum(1), c.sum(1)  # 0/1 pixels: the squared norm is the count
    dots = c @ d.T
    denom = numpy.sqrt(numpy.outer(cn, dn))
    sims = numpy.divide(dots, denom, out=numpy.zeros_like(dots), where=denom > 0)
    return sims.max(1), sims.argmax(1)


def main(data_path, cand_path, bound, out):
    with numpy.load(data_path) as z:
        data = z["designs"]
    with numpy.load(cand_path) as z:
        cands, vol = z["designs"], z["volfrac"]
    best, arg = nearest_similarity(data, cands)
    chosen = None
    for i, (s, j) in enumerate(zip(best, arg)):
        mark = ""
        if chosen is None and s <= bound and cands[i].any():
            chosen, mark = i, "  <- chosen"
        print(f"candidate {i}: volfrac {vol[i]:.3f}, nearest data design {j} at cosine {s:.4f}{mark}")
    print(f"candidates at or below {bound}: {int((best <= bound).sum())} of {len(best)}; "
          f"nearest-design similarity median {numpy.median(best):.4f}, min {best.min():.4f}")
    if chosen is None:
        sys.exit(f"no candidate's nearest data design is at or below {bound}")
    numpy.save(out, cands[chosen].astype(numpy.uint8))
    print(f"target: candidate {chosen} of {cand_path}, nearest data design {arg[chosen]} at {best[chosen]:.4f}; wrote {out}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4])
