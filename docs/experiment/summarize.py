#!/usr/bin/python3
"""Summarise experiment runs: distinct evaluations, repeats avoided, the best score after 100,
250 and 500 distinct evaluations (mean, std over seeds; in the task's direction, read from each
run's config.json) and where the time went, one row per method, then one row per run.

    docs/experiment/summarize.py RUNS_DIR
    docs/experiment/summarize.py --versions RUNS_DIR

Reads every RUNS_DIR/<method>-seed<N>/ (results.npz, config.json and summary.json, which
`tlbo-native summarize RUN_DIR` writes from the run's journal; a committed run keeps it when its
journal goes: docs/run-directory.md, "summary.json").

A query is a distinct evaluation when its object is valid (results.npz's opt_points holds the task's
key, "" for an invalid decode), its score was not known (opt_known is 0: the loop did not reuse a
score from the data or an earlier query; runs written before opt_known have none), and no earlier
query of the run holds the same object. "distinct" is the mean number of distinct evaluations per
run, "repeats avoided" the mean number of known queries per run (the loop's repeats that cost no
evaluation). "best after n" is the best after n distinct evaluations, the rule of `tlbo-native plot`:
the best of every evaluated query (known scores left out) up to the n-th distinct one; a "–" says
that some run evaluated fewer distinct objects. "best at end" is the best of all evaluated queries.
These bests are of the queries alone; the "start" column is the best of the labelled data set the
run started from (results.npz's initial_best), which a query has to beat to improve the curve of
`tlbo-native plot`.

Wall time per run is summary.json's wall_s: the journal's timed stages (retraining, prior samples,
encoding, GP fits, acquisition, decoding, evaluation, and the authors' loop's query bookkeeping as
"other"), i.e. everything but start-up and data loading. The stage columns (retrain ... eval) are
each stage's share of that wall time, not of the CPU time, so other jobs slowing one stage shift
them (`tlbo-native bench loop` and summary.json have the CPU time by stage). In rounds of q > 1 the
evaluations run concurrently, so their sum exceeds the time they took. CPU time per run is
summary.json's cpu_s, the sum of the journal lines' cpu_s (the process's CPU time between lines,
across resumes, with the evaluation programs it ran and waited for; a "–" says that some run's
journal was written before cpu_s was kept).

--versions prints instead one row per run with its CPU time, that of its retraining (summary.json's
retraining stage) and each model version's from summary.json's version_costs: the CPU seconds of the
version's journal line (its retraining and prior samples, and for a process's first line the start-up
before it, such as data loading) and the distinct evaluations made before it.
"""
import collections
import glob
import json
import os
import statistics
import sys

import numpy


CHECKPOINTS = (100, 250, 500)

# summarize.py's stage columns: summary.json's stage names (bench loop's).
STAGES = {"retrain": "retraining", "gp_fit": "gp_fit", "acq": "acquisition", "decode": "decoding",
          "encode": "encoding", "eval": "evaluation", "samples": "prior_samples", "other": "other"}


def best_after(points, scores, known, better):
    """Returns the best of the evaluated queries after each distinct evaluation (element n - 1:
    after n distinct evaluations; see the module doc) and the best of all evaluated queries."""
    seen = set()
    best = None
    curve = []
    for p, s, k in zip(points, scores, known):
        if k:
            continue
        best = s if best is None else better(best, s)
        if p != "" and p not in seen:
            seen.add(p)
            curve.append(best)
    return curve, best


def read_run(run):
    """Returns a run's direction (max or min, from config.json), its starting best and its queries'
    points, scores and known flags (results.npz)."""
    with open(os.path.join(run, "config.json")) as f:
        better = max if json.load(f).get("maximize") == "true" else min
    with numpy.load(os.path.join(run, "results.npz")) as r:
        start = float(r["initial_best"][0])
        points = [str(p) for p in r["opt_points"]]
        scores = [float(s) for s in r["opt_point_properties"]]
        known = [int(k) for k in r["opt_known"]] if "opt_known" in r.files else [0] * len(scores)
    if not len(points) == len(scores) == len(known):
        sys.exit(f"{run}/results.npz: {len(points)} opt_points, {len(scores)} opt_point_properties, "
                 f"{len(known)} opt_known")
    return better, start, points, scores, known


def run_summary(run):
    """Returns a run's counts (queries, distinct, known), its best after each checkpoint (missing
    where the run evaluated fewer distinct objects), its best at the end, the time per stage and
    its starting best."""
    better, start, points, scores, known = read_run(run)
    curve, end = best_after(points, scores, known, better)
    at = {c: curve[c - 1] for c in CHECKPOINTS if c <= len(curve)}
    summary = os.path.join(run, "summary.json")  # `tlbo-native summarize RUN` writes it from the journal
    if not os.path.exists(summary):
        sys.exit(f"{run}: no summary.json: run `tlbo-native summarize {run}` while its journal is there")
    with open(summary) as f:
        s = json.load(f)
    wall = {st["stage"]: st["wall_s"] for st in s["stages"]}
    t = {k: wall[stage] for k, stage in STAGES.items()}
    t["wall"] = s["wall_s"]
    cpu = s["cpu_s"]  # None for journals written before cpu_s was kept
    counts = {"queries": len(scores), "distinct": len(curve), "known": sum(1 for k in known if k)}
    return {"name": os.path.basename(run), "counts": counts, "at": at, "end": end, "t": t, "cpu": cpu, "start": start}


def mean_cell(values):
    """"mean" of counts, with one decimal unless it is whole."""
    m = statistics.mean(values)
    return f"{m:.0f}" if m == int(m) else f"{m:.1f}"


def score_cell(values):
    if not values or any(v is None for v in values):
        return "–"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.4f} ± {sd:.4f}"


def cpu_cell(runs):
    """Mean CPU seconds a run (the journals' cpu_s), "–" when a run's journal predates them."""
    if any(r["cpu"] is None for r in runs):
        return "–"
    return f"{statistics.mean(r['cpu'] for r in runs):.0f}"


def main(root):
    groups = collections.defaultdict(list)
    for d in sorted(glob.glob(os.path.join(root, "*-seed*"))):
        if not os.path.isdir(d):
            continue
        method = os.path.basename(d).rsplit("-seed", 1)[0]
        groups[method].append(run_summary(d))
    cols = " | ".join(f"best after {c}" for c in CHECKPOINTS)
    print(f"| method | runs | queries | distinct | repeats avoided | start | {cols} | best at end | wall s/run | "
          "CPU s/run | retrain | GP fit | acquisition | decode | encode | eval |")
    print("|---|---|---|---|---|---|" + "---|" * len(CHECKPOINTS) + "---|---|---|---|---|---|---|---|---|")
    for method, runs in groups.items():
        cells = [score_cell([r["at"].get(c) for r in runs]) for c in CHECKPOINTS]
        count = lambda k: mean_cell([r["counts"][k] for r in runs])
        starts = sorted({f"{r['start']:.4f}" for r in runs})
        tot = collections.Counter()
        for r in runs:
            tot.update(r["t"])
        share = lambda k: f"{100 * tot[k] / tot['wall']:.0f}%" if tot["wall"] else "–"
        print(f"| {method} | {len(runs)} | {count('queries')} | {count('distinct')} | {count('known')} | "
              f"{', '.join(starts)} | {' | '.join(cells)} | {score_cell([r['end'] for r in runs])} | "
              f"{statistics.mean(r['t']['wall'] for r in runs):.0f} | {cpu_cell(runs)} | {share('retrain')} | {share('gp_fit')} | "
              f"{share('acq')} | {share('decode')} | {share('encode')} | {share('eval')} |")
    print()
    print(f"| run | queries | distinct | repeats avoided | {cols} | best at end |")
    print("|---|---|---|---|" + "---|" * len(CHECKPOINTS) + "---|")
    for runs in groups.values():
        for r in runs:
            c = r["counts"]
            cells = [f"{r['at'][n]:.4f}" if n in r["at"] else "–" for n in CHECKPOINTS]
            end = "–" if r["end"] is None else f"{r['end']:.4f}"
            print(f"| {r['name']} | {c['queries']} | {c['distinct']} | {c['known']} | {' | '.join(cells)} | {end} |")


def versions(root):
    """Prints each run's CPU time, its retraining's and each model version's (summary.json)."""
    rows = []
    for d in sorted(glob.glob(os.path.join(root, "*-seed*"))):
        if not os.path.isdir(d):
            continue
        with open(os.path.join(d, "summary.json")) as f:
            s = json.load(f)
        vs = s.get("version_costs")
        if not vs:
            sys.exit(f"{d}/summary.json: no version_costs: run `tlbo-native summarize {d}` while its journal is there")
        fmt = lambda v: "–" if v is None else f"{v:,.0f}"
        retrain = next(st["cpu_s"] for st in s["stages"] if st["stage"] == "retraining")
        costs = ", ".join(fmt(v["cpu_s"]) for v in vs)
        before = ", ".join(str(v["evaluations"]) for v in vs)
        rows.append(f"| {os.path.basename(d)} | {fmt(s['cpu_s'])} | {fmt(retrain)} | {costs} | {before} |")
    print("| run | CPU s | retraining CPU s | CPU s of each version | distinct evaluations before each |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--versions":
        versions(args[1])
    elif len(args) == 1 and not args[0].startswith("-"):
        main(args[0])
    else:
        sys.exit("usage: summarize.py [--versions] RUNS_DIR")
