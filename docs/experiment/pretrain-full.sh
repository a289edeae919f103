#!/bin/sh
# A task's two VAEs at the paper's length (issue 21 items 2 and 3): the plain
# ELBO (lbo) and the soft triplet (t), EPOCHS (300) epochs each, side by side,
# one thread each, seed 0, the task's defaults otherwise (expression: batch
# 256, k 1e-3, beta_metric 10 for t, Adam 1e-3 lowered x0.2 after more than 20
# epochs without a better validation loss, down to 1e-4; topology: batch 1024,
# k 1e-3, beta_metric 1 and nu 0.05 for t, Adam 1e-3 never lowered, no
# augmentation: docs/design.md section 9).
#
#   docs/experiment/pretrain-full.sh OUT [EPOCHS]
#
# Writes OUT/TASK-lbo.pt and OUT/TASK-t.pt (best validation
# epoch; + .json, .adam.pt, and .last.* for the latest state, saved every 200
# steps and after every epoch) and appends to OUT/train-lbo.log and OUT/train-t.log. Resumable: run
# it again after a kill or a reboot and each training continues from its
# .last checkpoint (--resume), exactly as if uninterrupted; a finished one is
# left alone. Environment: BIN (default bin/tlbo-native), DATA (default:
# the binary's own lookup, --data-dir, then $TLBO_DATA, then shared/data),
# NICE (default 19), TASK (default expression), TASK_FLAGS (more train flags,
# e.g. TASK_FLAGS="--designs runs/topology-10k/topology.npz").
set -u
out=${1:?usage: pretrain-full.sh OUT [EPOCHS]}
epochs=${2:-300}
bin=${BIN:-bin/tlbo-native}
task=${TASK:-expression}
mkdir -p "$out" || exit 1

# last_epoch CKPT: the epoch count in CKPT's latest-state header, 0 if none.
last_epoch() {
  h="${1%.pt}.last.json"
  [ -f "$h" ] || { echo 0; return; }
  sed -n 's/^    "epoch": \([0-9]*\),*$/\1/p' "$h" | head -n 1
}

train() { # ELBO
  ckpt="$out/$task-$1.pt"
  log="$out/train-$1.log"
  done_epochs=$(last_epoch "$ckpt")
  if [ "${done_epochs:-0}" -ge "$epochs" ]; then
    echo "$1: $done_epochs of $epochs epochs done, nothing to do" >&2
    return 0
  fi
  resume=""
  [ -f "${ckpt%.pt}.last.json" ] && resume=--resume
  echo "$(date -u +%FT%TZ) $1: starting at epoch ${done_epochs:-0} of $epochs ${resume}" >> "$log"
  # shellcheck disable=SC2086 # $resume and $data are empty or one word; $TASK_FLAGS is split into words
  nice -n "${NICE:-19}" "$bin" train --task "$task" ${TASK_FLAGS:-} --elbo "$1" --epochs "$epochs" --threads 1 --seed 0 \
    --checkpoint-every 200 ${DATA:+--data-dir "$DATA"} --out "$ckpt" $resume >> "$log" 2>&1
}

train lbo &
lbo=$!
train t &
t=$!
status=0
wait "$lbo" || { echo "lbo: FAILED, see $out/train-lbo.log" >&2; status=1; }
wait "$t" || { echo "t: FAILED, see $out/train-t.log" >&2; status=1; }
exit $status
