#!/usr/bin/python3
"""Summarise experiment runs: best score after 100, 250 and 500 queries (mean, std over
seeds; in the task's direction, read from each run's config.json) and where the time went.
The best after n queries is the best of the queries alone; the "start" column is the best of
the labelled data set the run started from (results.npz's initial_best), which a query has to
beat to improve the curve of `tlbo-native plot`.

    docs/experiment/summarize.py RUNS_DIR

Reads every RUNS_DIR/<method>-seed<N>/journal.jsonl (or journal.jsonl.gz); wall time per run is the sum of
the journaled stage times (retraining, prior samples, encoding, GP fits, acquisition,
decoding, evaluation) plus query bookkeeping, i.e. everything but start-up and data loading.
"""
import collections
import glob
import gzip
import json
import os
import statistics
import sys

import numpy


CHECKPOINTS = (100, 250, 500)


def run_summary(run):
    """Returns the number of queries, the best score after each checkpoint
    (missing where the run is shorter), the time per stage and the run's
    starting best."""
    with open(os.path.join(run, "config.json")) as f:
        better = max if json.load(f).get("maximize") == "true" else min
    with numpy.load(os.path.join(run, "results.npz")) as r:
        start = float(r["initial_best"][0])
    journal = os.path.join(run, "journal.jsonl")
    if not os.path.exists(journal):  # as collect.sh commits it
        journal += ".gz"
    t = collections.Counter()
    best = None
    at = {}
    n = 0
    for line in (gzip.open(journal, "rt") if journal.endswith(".gz") else open(journal)):
        rec = json.loads(line)
        if "version" in rec:
            v = rec["version"]
            t["retrain"] += v["retrain_s"]
            t["samples"] += v.get("sample_s", 0)
        elif "query" in rec:
            q = rec["query"]
            n += 1
            tm = q["timing"]
            for k in ("encode", "gp_fit", "acq", "decode", "eval"):
                t[k] += tm.get(k, 0)
            t["total_queries"] += tm["total"] + tm.get("encode", 0)
            best = q["score"] if best is None else better(best, q["score"])
            if n in CHECKPOINTS:
                at[n] = best
    t["wall"] = t["retrain"] + t["samples"] + t["total_queries"]
    t["start"] = start
    return n, at, t


def main(root):
    groups = collections.defaultdict(list)
    for d in sorted(glob.glob(os.path.join(root, "*-seed*"))):
        if not os.path.isdir(d):
            continue
        method = os.path.basename(d).rsplit("-seed", 1)[0]
        groups[method].append(run_summary(d))
    cols = " | ".join(f"best after {c}" for c in CHECKPOINTS)
    print(f"| method | runs | queries | start | {cols} | wall s/run | retrain | GP fit | acquisition | decode | encode | eval |")
    print("|---|---|---|---|" + "---|" * len(CHECKPOINTS) + "---|---|---|---|---|---|---|")
    for method, runs in groups.items():
        cells = []
        for c in CHECKPOINTS:
            bests = [at[c] for _, at, _ in runs if c in at]
            if len(bests) < len(runs):
                cells.append("–")
                continue
            sd = statistics.stdev(bests) if len(bests) > 1 else 0.0
            cells.append(f"{statistics.mean(bests):.4f} ± {sd:.4f}")
        starts = sorted({f"{t['start']:.4f}" for _, _, t in runs})
        walls = [t["wall"] for _, _, t in runs]
        tot = collections.Counter()
        for _, _, t in runs:
            tot.update({k: v for k, v in t.items() if k != "start"})
        share = lambda k: f"{100 * tot[k] / tot['wall']:.0f}%"
        print(f"| {method} | {len(runs)} | {runs[0][0]} | {', '.join(starts)} | {' | '.join(cells)} | "
              f"{statistics.mean(walls):.0f} | {share('retrain')} | {share('gp_fit')} | {share('acq')} | "
              f"{share('decode')} | {share('encode')} | {share('eval')} |")


if __name__ == "__main__":
    main(sys.argv[1])
