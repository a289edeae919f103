#!/bin/sh
# docs/experiment/external.sh OUT: issue 23's measurement, a program as the objective.
#
#   1. a user's library: the first N (2000) molecules of zinc250k.smi.gz, imported with
#      `data molecule --smiles` (the library's own vocabulary);
#   2. a small JT-VAE trained on it for the demonstration only (hidden 64, EPOCHS epochs);
#   3. a molecule run whose objective is examples/qed.py (QED with RDKit in Python), started
#      from INITIAL molecules of the library scored by the program, --q 4 --evaluators 4,
#      on this machine (--executor local);
#   4. the same on Slurm (--executor slurm), killed with SIGKILL while a round's job array
#      runs, then resumed with --resume;
#   4b. the same killed while its labelled start is being scored (12 initial calls, budget 4);
#   5. each run's check: the program counted its calls (QED_COUNT): every object it was
#      asked for is asked once, and the calls are the run's initial calls plus its
#      distinct evaluations.
#
# Needs bin/tlbo-native (./build.sh build), Debian's python3-rdkit, and for step 4 a Slurm
# cluster (testdata/slurm/start.sh start makes a one-node one here). QED_SLEEP seconds per
# evaluation stand in for an expensive objective (SLEEP locally, SLURM_SLEEP on Slurm).
# Every step is skipped when its output exists, so a rerun continues. Results: OUT/*.log,
# OUT/summary.txt.
set -eu
OUT=${1:?usage: $0 OUT}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/bin/tlbo-native}
N=${N:-2000}
EPOCHS=${EPOCHS:-4}
INITIAL=${INITIAL:-20}
BUDGET=${BUDGET:-16}
SLEEP=${SLEEP:-1}
SLURM_SLEEP=${SLURM_SLEEP:-10}
PY=${PY:-/usr/bin/python3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$ROOT" # the program's path, examples/qed.py, is relative to the checkout

if [ -z "${TLBO_DATA:-}" ]; then
	for d in "$ROOT/shared/data" "$ROOT/../shared/data"; do
		[ -f "$d/zinc/zinc250k.smi.gz" ] && TLBO_DATA=$d && break
	done
fi
ZINC=${TLBO_DATA:?give TLBO_DATA, the data directory with zinc/zinc250k.smi.gz}/zinc/zinc250k.smi.gz

# 1. The library and its data set.
if [ ! -f "$OUT/data/molecules.npz" ]; then
	gzip -dc "$ZINC" | head -n "$N" | awk '{print $1}' >"$OUT/library.smi"
	"$BIN" data molecule --smiles "$OUT/library.smi" --out "$OUT/data" 2>&1 | tee "$OUT/data.log"
fi

# 2. A small JT-VAE, for this demonstration only.
if [ ! -f "$OUT/vae.pt" ]; then
	"$BIN" train --task molecule --molecules "$OUT/data/molecules.npz" --vocab "$OUT/data/vocab.txt" --hidden 64 \
		--epochs "$EPOCHS" --elbo lbo --prior-samples 50 --seed 0 --out "$OUT/vae.pt" >"$OUT/train.log" 2>&1
	tail -n 6 "$OUT/train.log"
fi

PROGRAM="command:$PY examples/qed.py"
run() { # run DIR EXTRA...: the molecule run with the QED program (with RUN_EXEC=1, exec'd)
	dir=$1
	shift
	# --failure-score is required with a program: QED is in [0, 1], maximised, so a failure scores 0.
	${RUN_EXEC:+exec} "$BIN" optimize --vae "$OUT/vae.pt" --molecules "$OUT/data/molecules.npz" --objective "$PROGRAM" \
		--failure-score 0 --initial "$INITIAL" --budget "$BUDGET" --q 4 --evaluators 4 --retrain-every 8 --initial-retrain-epochs 0.2 \
		--retrain-epochs 0.2 --n-best 200 --n-rand 200 --inducing 50 --raw-samples 256 --restarts 8 --seed 0 \
		--run-dir "$OUT/$dir" "$@"
}

# check DIR COUNT: every object the program was asked for once; the calls are the run's
# initial calls plus its distinct evaluations.
check() {
	"$PY" - "$OUT/$1" "$2" <<'EOF'
import collections, json, sys
run, count = sys.argv[1], sys.argv[2]
calls = [l.rstrip("\n") for l in open(count)]
twice = [s for s, n in collections.Counter(calls).items() if n > 1]
initial = [json.loads(l) for l in open(run + "/initial.jsonl")]
objects, evals, failed, jobs = {}, {}, [], []
for l in open(run + "/journal.jsonl"):
    r = json.loads(l)
    if r.get("job", {}).get("id"):  # a submission (an intent, before sbatch, has a token only)
        jobs.append(r["job"]["id"])
    for q in r.get("round", {}).get("queries", []):
        objects[q["i"]] = q["object"]
    if "eval" in r:
        evals[r["eval"]["i"]] = objects[r["eval"]["i"]]
        if r["eval"].get("failure"):
            failed.append(r["eval"]["failure"])
print(f"{run}: program calls {len(calls)}, distinct {len(set(calls))}, asked twice {len(twice)}; "
      f"initial calls {len(initial)} + distinct evaluations {len(evals)} = {len(initial) + len(evals)}; "
      f"failed evaluations {len(failed)}; job arrays journaled {len(jobs)}")
sys.exit(0 if not twice and len(calls) == len(initial) + len(evals) else 1)
EOF
}

# 3. On this machine.
if [ ! -f "$OUT/local.time" ]; then
	rm -rf "$OUT/local" "$OUT/local.count"
	start=$(date +%s)
	QED_COUNT="$OUT/local.count" QED_SLEEP=$SLEEP run local >"$OUT/local.log" 2>&1
	echo "local: $(($(date +%s) - start)) s wall" >"$OUT/local.time"
fi

# 4. On Slurm, killed with SIGKILL while a round's array runs, then resumed.
if [ ! -f "$OUT/slurm.done" ]; then
	rm -rf "$OUT/slurm" "$OUT/slurm.count"
	# The subshell becomes the optimizer (exec), so that $! is its pid.
	(
		export QED_COUNT="$OUT/slurm.count" QED_SLEEP=$SLURM_SLEEP
		RUN_EXEC=1 run slurm --executor slurm
	) >"$OUT/slurm-1.log" 2>&1 &
	pid=$!
	start=$(date +%s)
	# The loop journals each array it submits (its intent, then its id); wait for the second
	# round's id and for one of its tasks to run, so that the kill falls inside a round.
	until n=$(grep -c '"job":{"id"' "$OUT/slurm/journal.jsonl" 2>/dev/null) && [ "$n" -ge 2 ] &&
		[ -n "$(squeue -h -t R -o %i 2>/dev/null)" ]; do
		kill -0 $pid 2>/dev/null || { echo "the Slurm run ended before the kill" >&2; exit 1; }
		sleep 1
	done
	sleep 2
	{
		echo "killed at $(date -u +%T) with the queue:"
		squeue -r -o '%i %T %M'
		echo "program calls so far: $(wc -l <"$OUT/slurm.count")"
	} >"$OUT/slurm-kill.txt"
	ps -o pid=,args= -p $pid | cut -c1-60 >>"$OUT/slurm-kill.txt"
	kill -9 $pid
	wait $pid 2>/dev/null || true
	echo "evaluations journaled at the kill: $(grep -c '^{"eval"' "$OUT/slurm/journal.jsonl" || true)" >>"$OUT/slurm-kill.txt"
	cat "$OUT/slurm-kill.txt"
	echo "slurm: killed after $(($(date +%s) - start)) s" >"$OUT/slurm.time"
	start=$(date +%s)
	QED_COUNT="$OUT/slurm.count" QED_SLEEP=$SLURM_SLEEP run slurm --executor slurm --resume >"$OUT/slurm-2.log" 2>&1
	echo "slurm: resumed run $(($(date +%s) - start)) s wall" >>"$OUT/slurm.time"
	touch "$OUT/slurm.done"
fi

# 4b. On Slurm, killed while the labelled start is being scored (no journal yet: the start's
#     arrays are found again in RUN_DIR/slurm, its scores so far in RUN_DIR/initial.jsonl).
if [ ! -f "$OUT/start.done" ]; then
	rm -rf "$OUT/start" "$OUT/start.count"
	(
		export QED_COUNT="$OUT/start.count" QED_SLEEP=$SLURM_SLEEP
		RUN_EXEC=1 run start --executor slurm --budget 4 --initial 12 --seed 3
	) >"$OUT/start-1.log" 2>&1 &
	pid=$!
	until n=$(cat "$OUT/start/initial.jsonl" 2>/dev/null | wc -l) && [ "$n" -ge 4 ] && [ -n "$(squeue -h -t R -o %i 2>/dev/null)" ]; do
		kill -0 $pid 2>/dev/null || { echo "the start ended before the kill" >&2; exit 1; }
		sleep 1
	done
	sleep 2
	{
		echo "killed at $(date -u +%T) with $(wc -l <"$OUT/start/initial.jsonl") start scores journaled, the queue:"
		squeue -r -o '%i %T %M'
		echo "program calls so far: $(wc -l <"$OUT/start.count")"
	} >"$OUT/start-kill.txt"
	kill -9 $pid
	wait $pid 2>/dev/null || true
	cat "$OUT/start-kill.txt"
	QED_COUNT="$OUT/start.count" QED_SLEEP=$SLURM_SLEEP run start --executor slurm --budget 4 --initial 12 --seed 3 --resume \
		>"$OUT/start-2.log" 2>&1
	touch "$OUT/start.done"
fi

# 5. The checks and the summaries.
{
	check local "$OUT/local.count"
	cat "$OUT/local.time" 2>/dev/null || true
	check slurm "$OUT/slurm.count"
	cat "$OUT/slurm.time" 2>/dev/null || true
	check start "$OUT/start.count"
	for f in local.log slurm-2.log; do
		echo "== $f"
		sed -n '/^best of the start/,$p' "$OUT/$f"
	done
} | tee "$OUT/summary.txt"
