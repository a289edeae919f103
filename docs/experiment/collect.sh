#!/usr/bin/env bash
# Copies the small result files of finished runs (config.json, results.npz
# without its latent points, initial.npz and molecules.png where present, and
# summary.json made from the run's journal by `tlbo-native summarize`; not the
# model versions nor the journal) from a run.sh output directory into a
# committed results directory, so that a later session can add seeds and
# summarize.py / `tlbo-native plot` / `analyze pmo` see every run.
#
#   docs/experiment/collect.sh RUNS_DIR DEST_DIR    (env BIN: bin/tlbo-native;
#                                                    KEEP_JOURNALS=1 keeps them, gzipped)
#
# Keep a run's journal only where a claim of README.md needs it (its
# "Committed files" section says which). Only runs whose results.npz holds the
# full budget of their config.json are copied; pretraining logs' summary lines
# go to DEST_DIR/pretraining.txt.
set -euo pipefail
src=${1:?usage: collect.sh RUNS_DIR DEST_DIR}
dst=${2:?usage: collect.sh RUNS_DIR DEST_DIR}
bin=${BIN:-bin/tlbo-native}
mkdir -p "$dst"
for run in "$src"/*-seed*/; do
  run=${run%/}
  name=$(basename "$run")
  [ -f "$run/results.npz" ] || continue
  # The budget counts distinct evaluations (summarize.py's rule: a valid
  # object whose score was not known, not seen before in the run); runs
  # written before opt_known count every query.
  done=$(/usr/bin/python3 -c "
import json, sys, numpy
budget = int(json.load(open(sys.argv[1]))['budget'])
r = numpy.load(sys.argv[2])
points = [str(p) for p in r['opt_points']]
seen, n = set(), 0
if 'opt_known' not in r.files:
    n = len(points)
else:
    for p, k in zip(points, r['opt_known']):
        if p and not k and p not in seen:
            n += 1
        seen.add(p)
print('yes' if n >= budget else 'no')" "$run/config.json" "$run/results.npz")
  [ "$done" = yes ] || { echo "$name: unfinished, skipped"; continue; }
  mkdir -p "$dst/$name"
  cp "$run/config.json" "$run/results.npz" "$dst/$name/"
  # A run with oracle calls at its start (--initial) needs initial.npz for analyze pmo and plot;
  # the molecule task's picture of its best molecules is small.
  for f in initial.npz molecules.png; do
    [ -f "$run/$f" ] && cp "$run/$f" "$dst/$name/"
  done
  # -n: no name or time stamp in the header, and an unchanged journal is
  # left alone, so that collecting again changes no committed file.
  gz="$dst/$name/journal.jsonl.gz"
  if ! [ -f "$gz" ] || ! gunzip -c "$gz" | cmp -s - "$run/journal.jsonl"; then
    gzip -9 -n -c "$run/journal.jsonl" > "$gz.tmp" && mv "$gz.tmp" "$gz"
  fi
  # summary.json from the journal, then results.npz without opt_latents.
  "$bin" summarize --drop-latents "$dst/$name"
  [ -n "${KEEP_JOURNALS:-}" ] || rm "$gz"
done
logs=("$src"/pretrain-*.log)
[ -f "${logs[0]}" ] || exit 0 # ready networks (VAE_LBO, VAE_T): no pretraining to summarise
for log in "${logs[@]}"; do
  echo "== $(basename "$log" .log)"
  tr '\r' '\n' < "$log" | grep -E '^(training |seconds_per_epoch|val_|prior_validity|wall_seconds|cpu_seconds|checkpoint )' || true
done > "$dst/pretraining.txt"
