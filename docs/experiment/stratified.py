#!/usr/bin/python3
"""A stratified exact permutation test of two sets of runs over several tasks and methods: are the
second set's runs better or worse than the first's, all strata taken together?

    docs/experiment/stratified.py N|end SET_A SET_B [SET_A SET_B ...]

Each SET_A SET_B pair is two results directories (compare.py's: RUN-seedK subdirectories with a
summary.json), and each method that both hold is a stratum (a task and a method). In each stratum the
runs' best after N distinct evaluations are ranked by quality (lower is better where the runs
minimise), ties taking mid-ranks, and U is the Mann-Whitney U of SET_B's runs (high: SET_B better).
The statistic is the sum of the strata's U; its null distribution is exact: every split of each
stratum's runs into groups of the two sizes is equally likely, independently across strata (the
convolution of the strata's permutation distributions). p is two-sided: the probability of a sum at
least as far from its mean as the observed one. Prints each stratum's values, U and its own exact p,
then the sum and its p. A scale-free test: the tasks' scores never mix, only their ranks.
"""
import itertools
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import best_after, summaries  # noqa: E402
from pvalue import exact_p, ranks  # noqa: E402


def stratum_distribution(a, b):
    """The observed U of b (quality ranks) and U's exact null distribution over the splits."""
    pooled = a + b
    r = ranks(pooled)
    nb = len(b)

    def u(idx):
        return sum(r[i] for i in idx) - nb * (nb + 1) / 2

    observed = u(range(len(a), len(pooled)))
    dist = Counter(u(idx) for idx in itertools.combinations(range(len(pooled)), nb))
    total = sum(dist.values())
    return observed, {k: v / total for k, v in dist.items()}


def convolve(p, q):
    out = Counter()
    for x, px in p.items():
        for y, qy in q.items():
            out[round(x + y, 6)] += px * qy
    return out


def main(n, pairs):
    total, observed, strata = {0.0: 1.0}, 0.0, 0
    print("| stratum | runs (A, B) | A | B | U of B (mean) | stratum p |")
    print("|---|---|---|---|---|---|")
    for set_a, set_b in pairs:
        ga, gb = summaries(set_a), summaries(set_b)
        for m in sorted(set(ga) & set(gb)):
            maximize = ga[m][0]["maximize"]
            at = (lambda s: s["best"]) if n == "end" else (lambda s: best_after(s, n))
            va, vb = [at(s) for s in ga[m]], [at(s) for s in gb[m]]
            if None in va or None in vb:
                sys.exit(f"{m}: a run without a best after {n} distinct evaluations")
            quality = (lambda v: v) if maximize else (lambda v: -v)
            u, dist = stratum_distribution([quality(v) for v in va], [quality(v) for v in vb])
            mean = len(va) * len(vb) / 2
            total = convolve(total, dist)
            observed += u
            strata += 1
            fmt = lambda vs: ", ".join(f"{v:.4g}" for v in vs)
            print(f"| {os.path.basename(set_b.rstrip('/'))} {m} | {len(va)}, {len(vb)} | {fmt(va)} | {fmt(vb)} | "
                  f"{u:g} ({mean:g}) | {exact_p(va, vb)[1]:.3f} |")
    mean = sum(k * v for k, v in total.items())
    dev = abs(observed - mean)
    p = sum(v for k, v in total.items() if abs(k - mean) >= dev - 1e-9)
    print()
    print(f"{strata} strata: sum of U of B {observed:g} (mean under the null {mean:g}); "
          f"exact two-sided p = {min(p, 1):.4f} ({'B better' if observed > mean else 'B worse' if observed < mean else 'level'})")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 3 or len(args) % 2 != 1:
        sys.exit(__doc__)
    main(args[0] if args[0] == "end" else int(args[0]), list(zip(args[1::2], args[2::2])))
