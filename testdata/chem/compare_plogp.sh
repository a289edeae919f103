#!/bin/sh
# Penalised logP of the molecules of SMILES_TXT (one a line) by the authors'
# own code (weighted-retraining's chem_utils.penalized_logP, run from their
# checkout with Debian's python3-rdkit and python3-networkx) beside ours
# (`tlbo-native score molecule --objective plogp`); prints every molecule
# that differs by more than 1e-9 relative, then the largest difference
# (testdata/compare/relcompare.awk):
#   testdata/chem/compare_plogp.sh WR_CHECKOUT SMILES_TXT [TLBO_BIN]
# WR_CHECKOUT: git clone https://github.com/cambridge-mlg/weighted-retraining (4b1c783).
set -eu
checkout=$(cd "$1" && pwd)
smiles=$2
bin=${3:-bin/tlbo-native}
. "$(dirname "$0")/../compare/lib.sh"
compare_setup compare_plogp "$smiles"
/usr/bin/python3 - "$checkout" "$out/in.txt" >"$out/ref.txt" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from rdkit import RDLogger
from weighted_retraining.chem.chem_utils import penalized_logP
RDLogger.DisableLog("rdApp.*")
for line in open(sys.argv[2]):
    print(repr(float(penalized_logP(line.strip()))))
PY
"$bin" score molecule --objective plogp <"$out/in.txt" 2>/dev/null | cut -f2 >"$out/ours.txt" || true
paste "$out/in.txt" "$out/ref.txt" "$out/ours.txt" | compare_lines
