#!/usr/bin/python3
"""Fixture for analysis.TopKAUC: PMO's top-k AUC written as the benchmark's
mol_opt code computes it (main/optimizer.py, top_auc, with finish=True):
the buffer is a dict SMILES -> [score, call index]; every freq_log calls the
mean of the top_n scores so far, trapezoids from 0, the last value carried
to max_oracle_calls. Needs only numpy (Debian's python3-numpy).

    /usr/bin/python3 testdata/pmo/make_auc_fixture.py   # writes testdata/pmo/auc.npz
"""
import os
import numpy as np


def top_auc(buffer, top_n, finish, freq_log, max_oracle_calls):
    total = 0
    prev = 0
    called = 0
    ordered = list(sorted(buffer.items(), key=lambda kv: kv[1][1], reverse=False))
    for idx in range(freq_log, min(len(buffer), max_oracle_calls), freq_log):
        temp = ordered[:idx]
        temp = list(sorted(temp, key=lambda kv: kv[1][0], reverse=True))[:top_n]
        top_n_now = np.mean([item[1][0] for item in temp])
        total += freq_log * (top_n_now + prev) / 2
        prev = top_n_now
        called = idx
    temp = list(sorted(ordered, key=lambda kv: kv[1][0], reverse=True))[:top_n]
    top_n_now = np.mean([item[1][0] for item in temp])
    total += (len(buffer) - called) * (top_n_now + prev) / 2
    if finish and len(buffer) < max_oracle_calls:
        total += (max_oracle_calls - len(buffer)) * top_n_now
    return total / max_oracle_calls


def main():
    rng = np.random.default_rng(24)
    out = {}
    # (calls, budget): short and long runs, a run ending on a multiple of
    # freq_log, one past a record, one that spends its budget exactly.
    cases = [(7, 1000), (100, 1000), (250, 1000), (999, 1000), (1000, 1000), (1234, 10000)]
    for c, (n, budget) in enumerate(cases):
        scores = rng.beta(2, 5, size=n)
        buffer = {"m%d" % i: [float(s), i + 1] for i, s in enumerate(scores)}
        out["scores_%d" % c] = scores
        out["budget_%d" % c] = np.array([budget])
        out["auc_%d" % c] = np.array([top_auc(buffer, k, True, 100, budget) for k in (1, 10, 100)])
    np.savez(os.path.join(os.path.dirname(os.path.abspath(__file__)), "auc.npz"), **out)


if __name__ == "__main__":
    main()
