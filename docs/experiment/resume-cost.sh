#!/bin/sh
# The CPU a resume costs before its first new round, with and without the GP
# warm start (gp-warm.npz): resumes a copy of a BO run twice, each killed
# after its first new round, the first without the file (it refits the
# version's GP fits), the second with the file the first left.
#
#   docs/experiment/resume-cost.sh RUN_DIR WORK_DIR OPTIMIZE_FLAGS...
#
# OPTIMIZE_FLAGS are the run's own (task, VAE, seed, ...), without --run-dir
# and --resume. The run itself is not touched.
set -e
[ $# -ge 3 ] || { sed -n 2,10p "$0"; exit 2; }
src=$1 work=$2; shift 2
B=${TLBO_BIN:-bin/tlbo-native}
D=$work/run
rm -rf "$D"; mkdir -p "$work"; cp -r "$src" "$D"; rm -f "$D/gp-warm.npz"
resume() {
  name=$1; shift
  n0=$(grep -c '"round"' "$D/journal.jsonl")
  l0=$(wc -l < "$D/journal.jsonl")
  start=$(date +%s)
  "$B" optimize "$@" --resume --run-dir "$D" > "$work/$name.out" 2> "$work/$name.log" &
  pid=$!
  while [ "$(grep -c '"round"' "$D/journal.jsonl")" -le "$n0" ]; do
    kill -0 $pid 2>/dev/null || { echo "$name: the run ended; see $work/$name.log"; exit 1; }
    sleep 2
  done
  sleep 1; kill $pid 2>/dev/null || true; wait $pid || true
  cpu=$(tail -n +$((l0+1)) "$D/journal.jsonl" | /usr/bin/python3 -c '
import json, sys
t = 0
for line in sys.stdin:
    d = json.loads(line); t += d.get("cpu_s", 0)
    if "round" in d: break
print(round(t, 1))')
  how=$(grep -m1 'restored\|replaying' "$work/$name.log" || true)
  echo "$name: $cpu CPU s, $(( $(date +%s) - start )) s wall to the first new round ($how)"
}
resume replay "$@"
resume warm "$@"
