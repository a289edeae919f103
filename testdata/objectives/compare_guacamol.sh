#!/bin/sh
# Scores the molecules of SMILES_TXT (one a line) with GuacaMol's own code
# (check_guacamol.py) and with ours (`tlbo-native score molecule`), every
# objective of issue 24, and prints per objective the largest relative
# difference, then the molecules that differ by more than 1e-9 relative
# (testdata/compare/relcompare.awk):
#   testdata/objectives/compare_guacamol.sh GUACAMOL_CHECKOUT SMILES_TXT [TLBO_BIN]
# GUACAMOL_CHECKOUT: git clone https://github.com/BenevolentAI/guacamol (60ebe1f).
# TLBO_BIN defaults to bin/tlbo-native; OBJECTIVES (comma-separated) picks
# some objectives (default all). The last line is "mismatches N".
set -eu
checkout=$1
smiles=$2
bin=${3:-bin/tlbo-native}
. "$(dirname "$0")/../compare/lib.sh"
compare_setup compare_guacamol "$smiles"
/usr/bin/python3 "$(dirname "$0")/check_guacamol.py" "$checkout" "$out/in.txt" "$out/ref.tsv" ${OBJECTIVES:+--objectives "$OBJECTIVES"}
compare_objectives "$out/ref.tsv" "$bin"
grep -v "$(printf '\ttheirs ')" "$out/report.txt" || true
grep "$(printf '\ttheirs ')" "$out/report.txt" || true
echo "mismatches $(grep -c "$(printf '\ttheirs ')" "$out/report.txt" || true)"
