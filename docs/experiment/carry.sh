#!/bin/sh
# Carries a long training across machines: the checkpoints a run directory
# needs to resume (the best-validation .pt/.json and the latest .last.*
# state with its Adam moments; not the best's .adam.pt, which a resume does
# not read) and its logs, to and from a folder of the repository. A best
# checkpoint that is also the latest is the same file content, which git
# stores once.
#
#   docs/experiment/carry.sh save RUN_DIR CARRY_DIR     # copy the state into CARRY_DIR (commit it)
#   docs/experiment/carry.sh restore CARRY_DIR RUN_DIR  # on a new machine: copy it back, then resume
#
# restore never overwrites a newer state: a file already in RUN_DIR whose
# latest-state header names a later step is kept. Used for
# docs/experiment/carry/expression-full (pretrain-full.sh's OUT).
#
# The BO runs under RUN_DIR (run.sh's and pmo.sh's OUT: subdirectories with
# a journal.jsonl) are carried as their journals (gzipped), config.json,
# initial.npz and run.sh's RUN.log and RUN.done, not their model versions:
# `optimize --resume` rebuilds those from the journal's retrainings. restore
# keeps a run whose journal in RUN_DIR is at least as long as the carried one.
set -eu
mode=${1:?usage: carry.sh save|restore FROM TO}
from=${2:?usage: carry.sh save|restore FROM TO}
to=${3:?usage: carry.sh save|restore FROM TO}
mkdir -p "$to"

# put SRC DST: copies SRC to DST through a temporary file (nothing half-written).
put() { cp -p "$1" "$2.tmp" && mv "$2.tmp" "$2"; }

# step HEADER: the step recorded in a .last.json header (0 if none).
step() {
  [ -f "$1" ] || { echo 0; return; }
  sed -n 's/^ *"step": \([0-9]*\),*$/\1/p' "$1" | head -n 1 | grep . || echo 0
}

for last in "$from"/*.last.json; do
  [ -f "$last" ] || continue
  base=$(basename "${last%.last.json}")
  if [ "$mode" = restore ] && [ "$(step "$to/$base.last.json")" -ge "$(step "$last")" ] && [ -f "$to/$base.last.json" ]; then
    echo "$base: $to is at least as far as $from; kept" >&2
    continue
  fi
  for f in "$base.pt" "$base.json" "$base.last.pt" "$base.last.json" "$base.last.adam.pt"; do
    [ -f "$from/$f" ] && put "$from/$f" "$to/$f"
  done
  echo "$base: $mode $from -> $to (step $(step "$last"))" >&2
done
for log in "$from"/train-*.log; do
  [ -f "$log" ] && cp -p "$log" "$to/"
done

# lines FILE: the line count of a journal, gzipped or not (0 if none).
lines() {
  if [ -f "$1" ]; then cat "$1"; elif [ -f "$1.gz" ]; then gzip -dc "$1.gz"; fi | wc -l
}

for run in "$from"/*/; do
  run=${run%/}
  name=$(basename "$run")
  if [ "$mode" = save ]; then
    [ -f "$run/journal.jsonl" ] || continue
  else
    [ -f "$run/journal.jsonl.gz" ] || continue
    if [ "$(lines "$to/$name/journal.jsonl")" -ge "$(lines "$run/journal.jsonl")" ]; then
      echo "$name: $to/$name is at least as far as $run; kept" >&2
      continue
    fi
  fi
  mkdir -p "$to/$name"
  for f in config.json initial.npz; do
    [ -f "$run/$f" ] && put "$run/$f" "$to/$name/$f"
  done
  if [ "$mode" = save ]; then
    gzip -c "$run/journal.jsonl" > "$to/$name/journal.jsonl.gz.tmp" && mv "$to/$name/journal.jsonl.gz.tmp" "$to/$name/journal.jsonl.gz"
  else
    gzip -dc "$run/journal.jsonl.gz" > "$to/$name/journal.jsonl.tmp" && mv "$to/$name/journal.jsonl.tmp" "$to/$name/journal.jsonl"
  fi
  for f in "$name.log" "$name.done"; do
    [ -f "$from/$f" ] && put "$from/$f" "$to/$f"
  done
  echo "$name: $mode $run -> $to/$name ($(lines "$to/$name/journal.jsonl") journal lines)" >&2
done
exit 0
