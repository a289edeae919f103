# Sourced by table1-molecule.sh and table1-topology.sh: one fine-tuning loop.
#
#   finetune_each OUT TASK PLAIN "ELBOS" TRAIN_ARGS...
#
# fine-tunes the network PLAIN once per ELBO of ELBOS into OUT/TASK-E.pt
# (log OUT/train-E.log) with `$bin train TRAIN_ARGS... --elbo E`, resuming an
# unfinished training (its .last.json) and skipping a finished one (its log's
# checkpoint line).
finetune_each() {
  local out=$1 task=$2 plain=$3 elbos=$4
  shift 4
  local e ckpt log from
  for e in $elbos; do
    ckpt=$out/$task-$e.pt
    log=$out/train-$e.log
    grep -q '^checkpoint ' "$log" 2>/dev/null && continue # finished
    if [ -f "${ckpt%.pt}.last.json" ]; then
      from=(--resume)
    else
      from=(--init "$plain")
    fi
    echo "fine-tuning $e: $log" >&2
    "$bin" train "$@" --elbo "$e" --out "$ckpt" "${from[@]}" >> "$log" 2>&1
  done
}
