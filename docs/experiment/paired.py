#!/usr/bin/python3
"""The exact two-sided sign-flip test of two arms of PMO runs paired by task and seed, on a metric of
`analyze pmo` (auc_top10 unless --metric says otherwise), read from each arm's OUT/TASK/pmo-METHOD.txt.

    docs/experiment/paired.py [--metric M] [--method tlbo] ARM_A ARM_B TASK...

ARM_A and ARM_B are pmo.sh output directories. A pair is the same task and seed in both arms (the same starting
molecules); pairs missing in either arm are left out and named. The statistic is the sum of the pairs'
differences A - B; under the null hypothesis that the arms are exchangeable within a pair, each difference's
sign is as likely flipped, and p is the share of the 2^n sign assignments whose sum is at least as far from 0 as
the observed one (2 / 2^n at the smallest, when every difference has the same sign). Prints each pair's values,
each arm's mean per task and over all pairs, and p.
"""
import argparse
import itertools
import os
import re
import sys

LINE = re.compile(r"^(\S+)-seed(\d+)\s+calls")


def read_arm(arm, task, method, metric):
    """{seed: value} of METHOD's runs of TASK in ARM, from its pmo-METHOD.txt."""
    path = os.path.join(arm, task, f"pmo-{method}.txt")
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        sys.exit(f"paired.py: {e}")
    values = {}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        fields = line.split()
        if metric not in fields:
            sys.exit(f"paired.py: {path}: no {metric} in the line of {m.group(1)}-seed{m.group(2)}")
        values[int(m.group(2))] = float(fields[fields.index(metric) + 1])
    if not values:
        sys.exit(f"paired.py: {path}: no run lines")
    return values


def sign_flip_p(diffs):
    """Exact two-sided p of the sign-flip test of the sum of diffs."""
    observed = abs(sum(diffs))
    eps = 1e-12 * max(1.0, sum(abs(d) for d in diffs))  # sums equal but for rounding count as equal
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        if abs(sum(s * d for s, d in zip(signs, diffs))) >= observed - eps:
            hits += 1
    return hits / 2 ** len(diffs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--metric", default="auc_top10")
    ap.add_argument("--method", default="tlbo")
    ap.add_argument("arm_a")
    ap.add_argument("arm_b")
    ap.add_argument("tasks", nargs="+")
    args = ap.parse_args()
    diffs, all_a, all_b = [], [], []
    for task in args.tasks:
        a = read_arm(args.arm_a, task, args.method, args.metric)
        b = read_arm(args.arm_b, task, args.method, args.metric)
        seeds = sorted(set(a) & set(b))
        for s in sorted(set(a) ^ set(b)):
            print(f"{task} seed {s}: in one arm only, left out")
        for s in seeds:
            print(f"{task} seed {s}: {a[s]:.4f} {b[s]:.4f} difference {a[s] - b[s]:+.4f}")
            diffs.append(a[s] - b[s])
            all_a.append(a[s])
            all_b.append(b[s])
        if seeds:
            ma = sum(a[s] for s in seeds) / len(seeds)
            mb = sum(b[s] for s in seeds) / len(seeds)
            print(f"{task}: mean {ma:.4f} against {mb:.4f} over {len(seeds)} seeds")
    if not diffs:
        sys.exit("paired.py: no pair found in both arms")
    n = len(diffs)
    print(f"all {n} pairs: {args.metric} mean {sum(all_a) / n:.4f} ({args.arm_a}) against {sum(all_b) / n:.4f} "
          f"({args.arm_b}); {sum(d > 0 for d in diffs)} of {n} differences positive; "
          f"exact two-sided sign-flip p = {sign_flip_p(diffs):.4g}")


if __name__ == "__main__":
    main()
