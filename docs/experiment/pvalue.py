#!/usr/bin/python3
"""The exact two-sided p-value of the Mann-Whitney U test between two groups of runs, on their best
score after N distinct evaluations (or at the end), read from each run's summary.json.

    docs/experiment/pvalue.py [--beyond X] N|end RUN_DIR... -- RUN_DIR...

The p-value is the permutation test's: every split of the pooled runs into groups of the two sizes
is enumerated (252 for five against five), ties take mid-ranks, and p is the share of splits whose
U is at least as far from its mean as the observed one. scipy's exact Mann-Whitney assumes no ties,
which the runs have (several reach the same expression or design), so its p differs where they do.
Prints the two groups' values, U of the first group and p. With --beyond X it also counts the runs of
each group whose best is better than X (below X when the runs minimise, above when they maximise) and
prints Fisher's exact two-sided p of the two shares (the sum of the hypergeometric probabilities of
the tables no more probable than the observed one).
"""
import itertools
import json
import math
import os
import sys


def best(run, n):
    """A run's best after n distinct evaluations (n "end": at its end), and its direction."""
    with open(os.path.join(run, "summary.json")) as f:
        s = json.load(f)
    if n == "end":
        return s["best"], s["maximize"]
    for c in s["best_after"]:
        if c["evaluations"] == int(n):
            return c["best"], s["maximize"]
    sys.exit(f"{run}: no best after {n} distinct evaluations in its summary.json")


def ranks(values):
    """Mid-ranks (1-based) of values."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def exact_p(a, b):
    """U of a and the exact two-sided permutation p-value with mid-ranks."""
    pooled = a + b
    r = ranks(pooled)
    na = len(a)
    mean = na * len(b) / 2

    def u(idx):
        return sum(r[i] for i in idx) - na * (na + 1) / 2

    observed = u(range(na))
    splits = list(itertools.combinations(range(len(pooled)), na))
    extreme = sum(1 for s in splits if abs(u(s) - mean) >= abs(observed - mean) - 1e-9)
    return observed, extreme / len(splits)


def fisher_p(hits_a, n_a, hits_b, n_b):
    """Fisher's exact two-sided p of hits_a of n_a against hits_b of n_b."""
    hits, n = hits_a + hits_b, n_a + n_b

    def prob(k):
        return math.comb(hits, k) * math.comb(n - hits, n_a - k) / math.comb(n, n_a)

    observed = prob(hits_a)
    support = range(max(0, n_a - (n - hits)), min(hits, n_a) + 1)
    return min(1.0, sum(prob(k) for k in support if prob(k) <= observed * (1 + 1e-9)))


def main(args):
    beyond = None
    if args[:1] == ["--beyond"]:
        if len(args) < 2:
            sys.exit(__doc__)
        beyond, args = float(args[1]), args[2:]
    if len(args) < 4 or "--" not in args[1:]:
        sys.exit(__doc__)
    n, rest = args[0], args[1:]
    cut = rest.index("--")
    groups = [rest[:cut], rest[cut + 1:]]
    values = [[best(run, n) for run in g] for g in groups]
    if len({m for g in values for _, m in g}) != 1:
        sys.exit("the runs optimise in different directions")
    a, b = ([v for v, _ in g] for g in values)
    u, p = exact_p(a, b)
    print("first: " + ", ".join(f"{v:.4f}" for v in a))
    print("second: " + ", ".join(f"{v:.4f}" for v in b))
    print(f"U = {u:g} (of {len(a) * len(b)}), exact two-sided p = {p:.4f}")
    if beyond is not None:
        maximize = values[0][0][1]
        better = (lambda v: v > beyond) if maximize else (lambda v: v < beyond)
        ha, hb = sum(map(better, a)), sum(map(better, b))
        side = "above" if maximize else "below"
        print(f"{side} {beyond:g}: first {ha} of {len(a)}, second {hb} of {len(b)}, "
              f"Fisher's exact two-sided p = {fisher_p(ha, len(a), hb, len(b)):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
