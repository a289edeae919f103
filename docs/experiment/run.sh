#!/usr/bin/env bash
# Expression experiment (docs/experiment/README.md): random search, LBO and
# T-LBO, each from a VAE pretrained with its own ELBO (random search and LBO:
# the plain ELBO; T-LBO: the soft triplet loss, beta_metric 10), all with the
# task's defaults (k 1e-3 rank-weighted pretraining, the paper's GP of
# 2500 + 500 points with 500 inducing points, r 50), several seeds, one plot.
#
#   docs/experiment/run.sh OUT_DIR EPOCHS [BUDGET] [SEEDS...]
#
# Everything is resumable: rerunning the script continues unfinished
# pretraining and runs. Extra optimize flags can be passed in $OPT_FLAGS
# (e.g. OPT_FLAGS="--n-best 500 --n-rand 100 --inducing 100" for a reduced GP).
set -euo pipefail
out=${1:?usage: run.sh OUT_DIR EPOCHS [BUDGET] [SEEDS...]}
epochs=${2:?usage: run.sh OUT_DIR EPOCHS [BUDGET] [SEEDS...]}
budget=${3:-500}
shift 3 || shift $#
seeds=("$@")
[ ${#seeds[@]} -eq 0 ] && seeds=(0 1 2 3 4)
bin=${TLBO_BIN:-bin/tlbo-native}
data=${TLBO_DATA:-../shared/data}
read -r -a extra <<<"${OPT_FLAGS:-}"
mkdir -p "$out"

pretrain() { # ELBO -> checkpoint path
  local ckpt="$out/gvae-$1.pt" resume=()
  [ -f "$out/gvae-$1.last.json" ] && resume=(--resume)
  if ! "$bin" train --task expression --data-dir "$data" --elbo "$1" --epochs "$epochs" --threads 1 --seed 0 \
    --out "$ckpt" "${resume[@]}" > "$out/pretrain-$1.log" 2>&1; then
    echo "pretraining $1: FAILED, see $out/pretrain-$1.log" >&2
    return 1
  fi
  echo "pretraining $1: $(grep -E '^(seconds_per_epoch|val_reconstruction_greedy|prior_validity)' "$out/pretrain-$1.log" | tr '\n' ' ')" >&2
  echo "$ckpt"
}
vae_lbo=$(pretrain lbo)
vae_t=$(pretrain t)

for seed in "${seeds[@]}"; do
  for method in random lbo tlbo; do
    case $method in
      random) args=(--strategy random --elbo lbo --vae "$vae_lbo") ;;
      lbo) args=(--strategy bo --elbo lbo --vae "$vae_lbo") ;;
      tlbo) args=(--strategy bo --elbo t --vae "$vae_t") ;;
    esac
    dir="$out/$method-seed$seed"
    start=$(date +%s)
    if "$bin" optimize --task expression --data-dir "$data" --budget "$budget" --device cpu --threads 1 --resume \
      "${args[@]}" "${extra[@]}" --seed "$seed" --run-dir "$dir" > "$dir.log" 2>&1; then
      echo "$method seed $seed: $(( $(date +%s) - start ))s, $(grep '^best score' "$dir.log")"
    else
      echo "$method seed $seed: FAILED, see $dir.log"
    fi
  done
done
"$bin" plot --title "expression task, budget $budget, r = 50, k = 1e-3" --out "$out/expression.png" "$out"/*-seed*/
