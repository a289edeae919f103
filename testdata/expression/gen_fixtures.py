#!/usr/bin/python3
"""Generate the regression fixtures of internal/task/expression, independently of the Go code.

Needs Debian's python3-numpy and python3-nltk. Run from the repository root:

    /usr/bin/python3 testdata/expression/gen_fixtures.py /work/shared/data/expression/equation2_15_dataset.txt

It writes testdata/expression/fixtures.npz with
  x               the evaluation points, numpy.linspace(-10, 10, 1000)
  target_default  the default target 1 / 3 + x + sin( x * x ) at x
  parse_expr      sample expressions of the data set (every 100th line) plus hand-written ones
  parse_onehot    their 15 x 12 one-hot matrices, from nltk's ChartParser on the grammar as in
                  Kusner et al.'s Grammar VAE (first parse tree, productions in preorder, rows after the
                  derivation filled with the last production Nothing -> None)
  score_expr      expressions to score: the samples plus edge cases (overflow, NaN, syntax errors)
  score_default   their scores against the default target, scored as the reference does
                  (numpy eval of the text, numpy.minimum(7, log(1 + MSE)), any exception scores 7;
                  NaN values give NaN there, e.g. sin( exp( x * x * x ) ), where the Go code scores 7)
  score_paper     their scores against the paper's target 1/3 * x * sin(x*x)
  full_onehot_sha256  sha256 of the float32 one-hot array of all 100,000 expressions (C order)
  subset_n, subset_head, subset_sha256
                  the reference's training subset for seed 0 (expr_dataset.py of the T-LBO code: the
                  points scoring at or above the 65th percentile, permuted, plus 5% of N drawn from the
                  (3rd, 65th] percentile band, then permuted): its length, first 20 indices, and the
                  sha256 of the int64 index array
"""
import hashlib
import sys
import warnings

import nltk
import numpy as np
from numpy import exp, sin  # noqa: F401  (names used by eval, as in the reference)

GRAMMAR = """S -> S '+' T
S -> S '*' T
S -> S '/' T
S -> T
T -> '(' S ')'
T -> 'sin(' S ')'
T -> 'exp(' S ')'
T -> 'x'
T -> '1'
T -> '2'
T -> '3'
Nothing -> None"""

MAX_LEN = 15

HAND_WRITTEN = [
    "x",
    "3",
    "x + 1 * 2 / 3",
    "x / x / x",
    "sin( x ) * ( x + 2 )",
    "exp( sin( exp( x ) ) )",
    "( ( ( ( x ) ) ) )",
    "1 / 3 + x + sin( x * x )",
    "1 / exp( exp( x ) )",
]

EDGE_SCORES = [
    "1/3+x+sin(x*x)",
    "sin(x)*2",
    "exp( exp( exp( x ) ) )",  # overflows: Inf everywhere it matters
    "exp( x * x * x )",  # overflows at the ends
    "sin( exp( x * x * x ) )",  # sin(Inf) is NaN
    "x / ( x - x )",  # 0/0 and x/0
    "1 / 0",  # ZeroDivisionError
    "1 / ( 1 / 0 )",  # ZeroDivisionError in the inner division
    "-x + 0.5",
    "2 * -x",
    "--x",
    "1e-3 * x - 2.5",
    "x * x * x * x * x * x * x * x * x * x",  # finite, capped at 7
    "",
    "x +",
    "2x",
    "y",
    "sin x",
    "( x",
]


def kusner_one_hot(parser, prod_index, text):
    """One-hot matrix of a spaced expression, as the Grammar VAE code builds it."""
    tree = next(parser.parse(text.split()))
    rules = [prod_index[p] for p in tree.productions()]
    assert len(rules) <= MAX_LEN, (text, len(rules))
    one_hot = np.zeros((MAX_LEN, len(prod_index)), dtype=np.float32)
    one_hot[np.arange(len(rules)), rules] = 1.0
    one_hot[np.arange(len(rules), MAX_LEN), -1] = 1.0
    return one_hot


def reference_scores(exprs, target):
    """Scores as the reference scores them: numpy evaluates the text without spaces."""
    x = np.linspace(-10, 10, 1000)  # noqa: F841  (used by eval)
    y_target = np.array(eval(target))
    scores = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for text in exprs:
            try:
                y = np.array(eval(text.replace(" ", "")))
                scores.append(np.minimum(7.0, np.log(1 + np.mean((y - y_target) ** 2))))
            except Exception:  # any failure scores 7, as in the reference
                scores.append(7.0)
    return np.array(scores, dtype=np.float64)


def reference_subset(scores, seed=0):
    """Indices of the reference's training subset (expr_dataset.py defaults: 65, 5, top 3% protected)."""
    idx = np.arange(len(scores))
    worst_cut = np.percentile(scores, 65)
    worst = idx[scores >= worst_cut]
    best_cut = np.percentile(scores, 3)
    good = idx[np.logical_and(scores <= worst_cut, scores > best_cut)]
    n_good = int(5 * len(scores) / 100)
    np.random.seed(seed)
    out = worst[np.random.permutation(len(worst))]
    good = good[np.random.choice(np.arange(0, len(good)), size=n_good, replace=False)]
    both = np.concatenate([out, good])
    return both[np.random.permutation(len(both))].astype(np.int64)


def main(data_path, out_path="testdata/expression/fixtures.npz"):
    grammar = nltk.CFG.fromstring(GRAMMAR)
    prod_index = {p: i for i, p in enumerate(grammar.productions())}
    assert len(prod_index) == 12
    parser = nltk.ChartParser(grammar)

    with open(data_path) as f:
        data = [line.strip() for line in f]
    samples = data[::100] + HAND_WRITTEN
    parse_onehot = np.stack([kusner_one_hot(parser, prod_index, e) for e in samples])

    full = np.stack([kusner_one_hot(parser, prod_index, e) for e in data])
    full_sha = hashlib.sha256(np.ascontiguousarray(full).tobytes()).hexdigest()

    score_expr = samples + EDGE_SCORES
    full_scores = reference_scores(data, "1 / 3 + x + sin( x * x )")
    subset = reference_subset(full_scores, seed=0)

    x = np.linspace(-10, 10, 1000)
    np.savez_compressed(
        out_path,
        x=x,
        target_default=1 / 3 + x + np.sin(x * x),
        parse_expr=np.array(samples),
        parse_onehot=parse_onehot,
        score_expr=np.array(score_expr),
        score_default=reference_scores(score_expr, "1 / 3 + x + sin( x * x )"),
        score_paper=reference_scores(score_expr, "1/3 * x * sin(x*x)"),
        full_onehot_sha256=np.array(full_sha),
        subset_n=np.array(len(subset), dtype=np.int64),
        subset_head=subset[:20],
        subset_sha256=np.array(hashlib.sha256(subset.tobytes()).hexdigest()),
    )
    print(f"wrote {out_path}: {len(samples)} parse samples, {len(score_expr)} score cases, "
          f"subset of {len(subset)} ({len(set(subset))} distinct)")


if __name__ == "__main__":
    main(*sys.argv[1:])
