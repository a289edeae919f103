#!/usr/bin/env bash
# Reduced expression experiment (docs/experiment/README.md): random search,
# LBO and T-LBO from one pretrained grammar VAE, several seeds, then one plot.
#
#   docs/experiment/run.sh VAE.pt OUT_DIR [BUDGET] [SEEDS...]
#
# Every run is resumable: rerunning the script continues unfinished runs.
set -euo pipefail
vae=${1:?usage: run.sh VAE.pt OUT_DIR [BUDGET] [SEEDS...]}
out=${2:?usage: run.sh VAE.pt OUT_DIR [BUDGET] [SEEDS...]}
budget=${3:-200}
shift 3 || shift $#
seeds=("${@:-0 1 2}")
[ $# -eq 0 ] && seeds=(0 1 2)
bin=${TLBO_BIN:-bin/tlbo-native}
data=${TLBO_DATA:-../shared/data}
# Reduced GP (the reference: 2500 + 500 points, 500 inducing points).
common=(--task expression --data-dir "$data" --vae "$vae" --budget "$budget" --retrain-every 50 --k 1e-3
  --n-best 500 --n-rand 100 --inducing 100 --device cpu --resume)
mkdir -p "$out"
for seed in "${seeds[@]}"; do
  for method in random lbo tlbo; do
    case $method in
      random) args=(--strategy random --elbo lbo) ;;
      lbo) args=(--strategy bo --elbo lbo) ;;
      tlbo) args=(--strategy bo --elbo t) ;;
    esac
    dir="$out/$method-seed$seed"
    start=$(date +%s)
    if "$bin" optimize "${common[@]}" "${args[@]}" --seed "$seed" --run-dir "$dir" > "$dir.log" 2>&1; then
      echo "$method seed $seed: $(( $(date +%s) - start ))s, $(grep '^best score' "$dir.log")"
    else
      echo "$method seed $seed: FAILED, see $dir.log"
    fi
  done
done
"$bin" plot --title "expression task, budget $budget, r = 50, k = 1e-3" --out "$out/expression.png" "$out"/*-seed*/
