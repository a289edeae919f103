#!/bin/sh
# Carries a long training across machines: the checkpoints a run directory
# needs to resume (the best-validation .pt/.json/.adam.pt and the latest
# .last.* state) and its logs, to and from a folder of the repository.
#
#   docs/experiment/carry.sh save RUN_DIR CARRY_DIR     # copy the state into CARRY_DIR (commit it)
#   docs/experiment/carry.sh restore CARRY_DIR RUN_DIR  # on a new machine: copy it back, then resume
#
# restore never overwrites a newer state: a file already in RUN_DIR whose
# latest-state header names a later step is kept. Used for
# docs/experiment/carry/expression-full (pretrain-full.sh's OUT).
set -eu
mode=${1:?usage: carry.sh save|restore FROM TO}
from=${2:?usage: carry.sh save|restore FROM TO}
to=${3:?usage: carry.sh save|restore FROM TO}
mkdir -p "$to"

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
  for f in "$base.pt" "$base.json" "$base.adam.pt" "$base.last.pt" "$base.last.json" "$base.last.adam.pt"; do
    [ -f "$from/$f" ] && cp -p "$from/$f" "$to/$f.tmp" && mv "$to/$f.tmp" "$to/$f"
  done
  echo "$base: $mode $from -> $to (step $(step "$last"))" >&2
done
for log in "$from"/train-*.log; do
  [ -f "$log" ] && cp -p "$log" "$to/"
done
exit 0
