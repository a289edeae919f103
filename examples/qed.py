#!/usr/bin/env python3
"""examples/qed.py: QED drug-likeness (Bickerton et al. 2012) as an objective for tlbo-native.

    tlbo-native optimize --task molecule ... --objective 'command:python3 examples/qed.py' --failure-score 0 --initial 100

Reads {"id": ..., "object": SMILES} lines on standard input and writes
{"id": ..., "score": QED} (between 0 and 1, higher is better) or
{"id": ..., "error": ...} for a SMILES that RDKit cannot parse. Needs RDKit
(Debian: apt-get install python3-rdkit). With QED_COUNT=FILE set, every
object it is asked for is appended to FILE, to check that nothing is
evaluated twice; with QED_SLEEP=S it sleeps S seconds per object, to stand
in for an expensive objective (docs/experiment/external.sh).
"""
import fcntl
import json
import os
import sys
import time

from rdkit import Chem, RDLogger
from rdkit.Chem import QED

RDLogger.DisableLog("rdApp.*")  # parse errors become error replies, not stderr noise


def score(smiles):
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise ValueError(f"RDKit cannot parse {smiles!r}")
    return QED.qed(mol)


def main():
    count = os.environ.get("QED_COUNT")
    pause = float(os.environ.get("QED_SLEEP", "0"))
    for line in sys.stdin:
        req = json.loads(line)
        if count:
            with open(count, "a") as f:  # several copies append at once
                fcntl.flock(f, fcntl.LOCK_EX)
                f.write(req["object"] + "\n")
        time.sleep(pause)
        try:
            out = {"id": req["id"], "score": score(req["object"])}
        except Exception as e:  # one bad molecule must not stop the program
            out = {"id": req["id"], "error": str(e)}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
