#!/bin/sh
# The expression objective of the expressions of EXPR_TXT (one a line) by the
# authors' own code (weighted-retraining's expr_data.score_function, its
# source taken from their checkout and run as it is, in a namespace with what
# its module imports for it: numpy as np, and numpy's exp and sin; the module
# itself imports PyTorch Lightning and h5py, which the score does not use)
# beside ours
# (`tlbo-native score expression`, the default target 1 / 3 + x + sin( x * x ));
# prints every expression that differs by more than 1e-9 relative or where
# one side is NaN, then the largest difference (testdata/compare/relcompare.awk):
#   testdata/expression/compare_score.sh WR_CHECKOUT EXPR_TXT [TLBO_BIN]
# WR_CHECKOUT: git clone https://github.com/cambridge-mlg/weighted-retraining (4b1c783).
# Measured on 2026-11-27: 3,000 expressions of the data set (Python's
# random.Random(5) shuffle, the first 3,000) within 3.1e-16 relative, and the
# 7,923 distinct expressions of the committed expression BO runs within 1e-15;
# the one kind of difference is by design: an expression whose values are NaN
# (e.g. sin( exp( x * x * x ) )) scores NaN in theirs and the worst score, 7,
# in ours, as a failure with its reason.
set -eu
checkout=$(cd "$1" && pwd)
exprs=$2
bin=${3:-bin/tlbo-native}
. "$(dirname "$0")/../compare/lib.sh"
compare_setup compare_expression_score "$exprs"
/usr/bin/python3 - "$checkout/weighted_retraining/expr/expr_data.py" "$out/in.txt" >"$out/ref.txt" <<'PY'
import ast
import sys
import warnings
import numpy as np
from numpy import exp, sin
warnings.filterwarnings("ignore")
tree = ast.parse(open(sys.argv[1]).read())
fn = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "score_function"]
exec(compile(ast.Module(body=fn, type_ignores=[]), sys.argv[1], "exec"))
exprs = [line.rstrip("\n") for line in open(sys.argv[2])]
for v in score_function(exprs):
    print(repr(float(v)))
PY
# ours: the score, then for a failure a tab and its reason
"$bin" score expression <"$out/in.txt" 2>/dev/null | cut -f1 >"$out/ours.txt" || true
paste "$out/in.txt" "$out/ref.txt" "$out/ours.txt" | compare_lines
