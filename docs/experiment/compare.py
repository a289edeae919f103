#!/usr/bin/python3
"""Compare two sets of runs of the same methods (e.g. two GP schedules): for each method found in both,
the best after 100, 250 and 500 distinct evaluations (mean ± std over seeds) of each set, the exact
two-sided Mann-Whitney p between them (pvalue.py's permutation test, ties at mid-ranks), then CPU
seconds per distinct evaluation by stage.

    docs/experiment/compare.py A_DIR B_DIR

Each DIR holds <method>-seed<N>/ run directories with a summary.json (`tlbo-native summarize`).
"""
import collections
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvalue import exact_p  # noqa: E402

CHECKPOINTS = (100, 250, 500)
STAGES = ("retraining", "encoding", "featurisation", "gp_fit", "gp_update", "acquisition", "decoding", "evaluation",
          "other")
# A stage listed only where some run has it (summary.json lists featurisation on demand and the rounds'
# conditioning of their GP only then).
OPTIONAL_STAGES = ("featurisation", "gp_update")


def summaries(root):
    """The runs' summaries by method."""
    groups = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(root, "*-seed*", "summary.json"))):
        with open(path) as f:
            s = json.load(f)
        groups[os.path.basename(os.path.dirname(path)).rsplit("-seed", 1)[0]].append(s)
    return groups


def best_after(s, n):
    return next((c["best"] for c in s["best_after"] if c["evaluations"] == n), None)


def cell(values):
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.4f}"
    return f"{statistics.mean(values):.4f} ± {statistics.stdev(values):.4f}"


def main(a, b):
    ga, gb = summaries(a), summaries(b)
    la, lb = os.path.basename(a.rstrip("/")), os.path.basename(b.rstrip("/"))
    shared = sorted(set(ga) & set(gb))
    print("| method | runs | " + " | ".join(f"after {c}: {la} | {lb} | p" for c in CHECKPOINTS) + " |")
    print("|---|---|" + "---|---|---|" * len(CHECKPOINTS))
    for m in shared:
        cells = []
        for c in CHECKPOINTS:
            va = [v for v in (best_after(s, c) for s in ga[m]) if v is not None]
            vb = [v for v in (best_after(s, c) for s in gb[m]) if v is not None]
            p = f"{exact_p(va, vb)[1]:.3f}" if va and vb else "–"
            cells.append(f"{cell(va)} | {cell(vb)} | {p}")
        print(f"| {m} | {len(ga[m])}, {len(gb[m])} | " + " | ".join(cells) + " |")
    print()
    every = [s for g in (ga, gb) for m in shared for s in g[m]]
    stages = [st for st in STAGES if st not in OPTIONAL_STAGES or
              any(x["stage"] == st for s in every for x in s.get("stages") or [])]
    print("| method | set | runs with CPU | " + " | ".join(stages) + " | total CPU s per evaluation | CPU h per run |")
    print("|---|---|---|" + "---|" * (len(stages) + 2))
    for m in shared:
        for label, runs in ((la, ga[m]), (lb, gb[m])):
            timed = [s for s in runs if s.get("cpu_s")]
            if not timed:
                print(f"| {m} | {label} | 0 | " + " | ".join("–" for _ in stages) + " | – | – |")
                continue
            per = lambda st: statistics.mean(
                next((x["cpu_s_per_evaluation"] for x in s["stages"] if x["stage"] == st), 0) for s in timed)
            total = statistics.mean(s["cpu_s"] / s["distinct_evaluations"] for s in timed)
            hours = statistics.mean(s["cpu_s"] for s in timed) / 3600
            print(f"| {m} | {label} | {len(timed)} | " + " | ".join(f"{per(st):.2f}" for st in stages) +
                  f" | {total:.2f} | {hours:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
