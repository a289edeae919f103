#!/usr/bin/python3
"""Distinct evaluations each run needed to reach a score: the semi-supervised experiment's measure
(the paper's Sec. 5.3: evaluations until T-LBO and LBO reach the best of the full-data runs) and the
step at which an expression run left the 0.3889 basin.

    docs/experiment/reach.py [--start] THRESHOLD RUN_DIR... [-- RUN_DIR...]

For each run (results.npz and config.json; its direction from config.json's "maximize") it prints
the number n of the first distinct evaluation after which the run's best is at least as good as
THRESHOLD (>= when the run maximises, <= when it minimises), or "not reached in N" when none of its
N distinct evaluations did. The best is of the queries alone, by summarize.py's rule (a known score
counts, an invalid decode or a repeat is no distinct evaluation); with --start the labelled data's
best (results.npz's initial_best) counts too, so that a run that starts at the threshold needs 0.
With two groups (split by "--") it also prints the exact two-sided permutation p of the Mann-Whitney
U of the counts with mid-ranks (pvalue.py's), a run that never reached the threshold ranking after
every run that did (a censored count: tied with the others that did not).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvalue import exact_p  # noqa: E402
from summarize import best_after, read_run  # noqa: E402


def evaluations_to(run, threshold, with_start):
    """The distinct evaluations the run needed to reach threshold (None if never) and how many it made."""
    better, start, points, scores, known = read_run(run)
    curve, _ = best_after(points, scores, known, better)
    reached = (lambda v: v >= threshold) if better is max else (lambda v: v <= threshold)
    if with_start and reached(start):
        return 0, len(curve)
    for n, best in enumerate(curve, 1):
        if reached(best if not with_start else better(best, start)):
            return n, len(curve)
    return None, len(curve)


def group(runs, threshold, with_start):
    counts = []
    for run in runs:
        n, total = evaluations_to(run, threshold, with_start)
        print(f"{run}: {n if n is not None else f'not reached in {total}'}")
        counts.append(n)
    return counts


def main(args):
    with_start = "--start" in args
    args = [a for a in args if a != "--start"]
    if len(args) < 2:
        sys.exit(__doc__)
    threshold = float(args[0])
    runs = args[1:]
    groups = [runs] if "--" not in runs else [runs[:runs.index("--")], runs[runs.index("--") + 1:]]
    if any(not g for g in groups):
        sys.exit(__doc__)
    counts = [group(g, threshold, with_start) for g in groups]
    for i, c in enumerate(counts):
        done = sorted(n for n in c if n is not None)
        print(f"group {i + 1}: {len(done)} of {len(c)} reached {threshold:g}" +
              (f", after {', '.join(map(str, done))} distinct evaluations" if done else ""))
    if len(counts) == 2:
        # Censored counts rank after every reached one, tied among themselves.
        ceiling = 1 + max([n for c in counts for n in c if n is not None] + [0])
        a, b = ([n if n is not None else ceiling for n in c] for c in counts)
        u, p = exact_p(a, b)
        print(f"U = {u:g} (of {len(a) * len(b)}), exact two-sided p = {p:.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
