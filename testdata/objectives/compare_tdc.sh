#!/bin/sh
# Scores the molecules of SMILES_TXT (one a line) with TDC's oracles at the
# version PMO's published numbers used (check_tdc.py: PyTDC 0.3.6, f8349f62;
# COMMIT picks another) and with ours (`tlbo-native score molecule`), every
# objective of issue 24, and prints per objective the largest relative
# difference and how many molecules differ by more than 1e-9 relative
# (testdata/compare/relcompare.awk); the differing molecules are in
# ${TMPDIR:-/tmp}/compare_tdc/report.txt. Ours follow GuacaMol's definitions
# (compare_guacamol.sh), so a difference here is TDC departing from GuacaMol:
#   testdata/objectives/compare_tdc.sh TDC_CHECKOUT SMILES_TXT [TLBO_BIN]
# TDC_CHECKOUT: git clone https://github.com/mims-harvard/TDC.
# TLBO_BIN defaults to bin/tlbo-native; OBJECTIVES (comma-separated) picks
# some objectives (default all).
set -eu
checkout=$1
smiles=$2
bin=${3:-bin/tlbo-native}
. "$(dirname "$0")/../compare/lib.sh"
compare_setup compare_tdc "$smiles"
/usr/bin/python3 "$(dirname "$0")/check_tdc.py" "$checkout" "$out/in.txt" "$out/ref.tsv" \
	${COMMIT:+--commit "$COMMIT"} ${OBJECTIVES:+--objectives "$OBJECTIVES"}
compare_objectives "$out/ref.tsv" "$bin"
grep -v "$(printf '\ttheirs ')" "$out/report.txt" || true
echo "molecules that differ: $(grep -c "$(printf '\ttheirs ')" "$out/report.txt" || true) (objective, SMILES, theirs, ours: $out/report.txt)"
