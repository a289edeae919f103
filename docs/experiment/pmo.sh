#!/usr/bin/env bash
# The PMO benchmark (Gao et al., NeurIPS 2022 datasets track) on the molecule
# task: T-LBO and prior sampling on a list of PMO tasks, several seeds each,
# then `analyze pmo` (top-1/10/100 AUC over the budget's oracle calls, the
# top-10 diversity) and `plot --metric top10` per task.
#
#   docs/experiment/pmo.sh VAE.pt OUT_DIR BUDGET [PMO_TASK...]
#
# VAE.pt is a JT-VAE pretrained on ZINC (unlabelled: pretraining makes no
# oracle call): the shipped pretrained/molecule-t.pt (T-LBO's soft-triplet
# fine-tuning of pretrained/molecule-lbo.pt, pretrained/README.md), your own
# (docs/experiment/pretrain-zinc.sh), or the authors' (`checkpoint import
# --task molecule`). BUDGET is PMO's oracle-call budget (the benchmark's 10,000, or
# 1,000 for a short comparison). PMO charges the scoring of a method's
# starting molecules to the budget: each run starts from INITIAL molecules
# drawn at random (with the run's seed) from the training split and scored
# with the task's objective (`optimize --initial`, recorded in
# RUN_DIR/initial.npz), and its loop gets the rest, BUDGET - INITIAL distinct
# evaluations; `analyze pmo --budget BUDGET` counts the initial calls first.
# Default tasks: zaleplon_mpo perindopril_mpo osimertinib_mpo ranolazine_mpo.
#
# Settings (environment): SEEDS (default "0 1 2"), METHODS ("tlbo prior":
# tlbo is T-LBO with the soft triplet retraining, tlbo-tr the same with
# the acquisition kept in a TuRBO trust region around the best point
# (--trust-region, as LOL-BO; T-LBO's own acquisition box is the encoded
# data's, whose corners lie far outside the prior), prior samples the VAE's
# prior N(0, I), the authors' random baseline for molecules, with the same
# retraining; random, uniform draws in the encoded data's box as the
# authors' expression random search, is there too but a poor baseline here,
# measured in docs/experiment/README.md section 4. All from VAE.pt;
# screening, PMO's own baseline, scores BUDGET molecules drawn at random from
# the training split: a run whose initial calls are the whole budget, then
# one prior sample past it, as optimize's loop needs one call, which
# `analyze pmo --budget BUDGET` leaves out; no retraining),
# INITIAL (100), DATA_FLAGS (where
# the data set is, e.g. "--molecules DIR/molecules.npz" or "--data-dir DIR";
# default: the data directory's molecules.npz), OPT_FLAGS (more optimize
# flags, e.g. "--retrain-every 100 --inducing 200"), DEVICE (cpu), THREADS
# (1), TLBO_BIN (bin/tlbo-native).
#
# Resumable: rerunning the script continues unfinished runs (optimize
# --resume), skips finished ones (RUN_DIR.done holds the loop budget they
# finished; a larger BUDGET extends them) and analyses everything again. Two
# copies may run side by side (say, on other task lists): a run that one
# copy holds, the other skips (runonce.sh).
# Output: OUT_DIR/TASK/METHOD-seedS/ (runs, with .log), OUT_DIR/TASK/pmo-METHOD.txt
# (analyze pmo), OUT_DIR/TASK/top10.png, and OUT_DIR/summary.txt (the mean
# AUCs per task and method, and each method's top-10 AUC summed over tasks,
# with the published AUC top-10 of five baselines beside them, from
# docs/experiment/pmo-published.csv: PMO's leaderboard, at 10,000 calls, so
# comparable only when BUDGET is 10000, and only for tasks whose published
# numbers score the definitions ours do: the sums are also given without
# zaleplon_mpo, sitagliptin_mpo and the two isomer tasks, scored on the
# leaderboard with TDC's 2022 code, docs/experiment/pmo-published.md).
set -euo pipefail
source "$(dirname "$0")/runonce.sh"
source "$(dirname "$0")/pmopublished.sh"
usage="usage: pmo.sh VAE.pt OUT_DIR BUDGET [PMO_TASK...]"
vae=${1:?$usage}
out=${2:?$usage}
budget=${3:?$usage}
shift 3
tasks=("$@")
[ ${#tasks[@]} -eq 0 ] && tasks=(zaleplon_mpo perindopril_mpo osimertinib_mpo ranolazine_mpo)
read -r -a seeds <<<"${SEEDS:-0 1 2}"
read -r -a methods <<<"${METHODS:-tlbo prior}"
read -r -a dataf <<<"${DATA_FLAGS:-}"
read -r -a optf <<<"${OPT_FLAGS:-}"
initial=${INITIAL:-100}
bin=${TLBO_BIN:-bin/tlbo-native}
if [ ! -f "$vae" ]; then
  echo "pmo.sh: no checkpoint $vae: give a JT-VAE pretrained on ZINC (e.g. pretrained/molecule-t.pt; see the header of $0)" >&2
  exit 2
fi
loop=$((budget - initial))
if [ "$loop" -lt 1 ]; then
  echo "pmo.sh: BUDGET $budget leaves no oracle call after the $initial initial ones (INITIAL)" >&2
  exit 2
fi
mkdir -p "$out"

for task in "${tasks[@]}"; do
  mkdir -p "$out/$task"
  for method in "${methods[@]}"; do
    case $method in
      tlbo) args=(--strategy bo --elbo t) ;;
      tlbo-tr) args=(--strategy bo --elbo t --trust-region) ;;
      prior) args=(--strategy prior --elbo t) ;;
      random) args=(--strategy random --elbo t) ;;
      screening) args=(--strategy prior --elbo t --initial-retrain-epochs 0) ;;
      *) echo "pmo.sh: unknown method $method (tlbo, tlbo-tr, prior, random, screening)" >&2; exit 2 ;;
    esac
    minitial=$initial mloop=$loop
    [ "$method" = screening ] && minitial=$budget mloop=1
    for seed in "${seeds[@]}"; do
      dir="$out/$task/$method-seed$seed"
      run_once "$dir" "$mloop" "$task $method seed $seed" "$bin" optimize --task molecule --vae "$vae" \
        --objective "$task" --initial "$minitial" --budget "$mloop" --device "${DEVICE:-cpu}" --threads "${THREADS:-1}" \
        $(resume_flag "$dir") "${args[@]}" "${dataf[@]}" "${optf[@]}" --seed "$seed" --run-dir "$dir"
    done
  done
done

summary="$out/summary.txt"
echo "PMO on the molecule task: budget $budget oracle calls ($initial initial), seeds ${seeds[*]}, $vae" >"$summary"
baselines=(gp_bo jt_vae_bo selfies_vae_bo reinvent graph_ga screening)
declare -A total comparable # keys: our methods, and pub:BASELINE for the published ones
ncomparable=0
for task in "${tasks[@]}"; do
  same=1
  scored_by_tdc2022 "$task" && same=0
  ncomparable=$((ncomparable + same))
  dirs=() labels=()
  for method in "${methods[@]}"; do
    mruns=()
    for seed in "${seeds[@]}"; do
      dir="$out/$task/$method-seed$seed"
      if [ -f "$dir/results.npz" ]; then
        mruns+=(--run "$dir")
        dirs+=("$dir")
      fi
    done
    [ ${#mruns[@]} -eq 0 ] && continue
    labels+=(--label "$method")
    "$bin" analyze pmo "${mruns[@]}" --budget "$budget" >"$out/$task/pmo-$method.txt"
    mean=$(grep '^mean of' "$out/$task/pmo-$method.txt")
    echo "$task $method: $mean" | tee -a "$summary"
    auc10=$(awk '{for (i = 1; i < NF; i++) if ($i == "auc_top10") print $(i + 1)}' <<<"$mean")
    total[$method]=$(awk -v a="${total[$method]:-0}" -v b="$auc10" 'BEGIN {printf "%.4f", a + b}')
    [ $same = 1 ] && comparable[$method]=$(awk -v a="${comparable[$method]:-0}" -v b="$auc10" 'BEGIN {printf "%.4f", a + b}')
  done
  line="$task published auc_top10 at 10,000 calls:"
  for b in "${baselines[@]}"; do
    read -r _ v _ <<<"$(published_aucs "$task" "$b")"
    line="$line $b ${v:-?}"
    total[pub:$b]=$(awk -v a="${total[pub:$b]:-0}" -v b="${v:-0}" 'BEGIN {printf "%.4f", a + b}')
    [ $same = 1 ] && comparable[pub:$b]=$(awk -v a="${comparable[pub:$b]:-0}" -v b="${v:-0}" 'BEGIN {printf "%.4f", a + b}')
  done
  [ $same = 0 ] && line="$line (TDC's 2022 definition, not ours: not comparable)"
  echo "$line" | tee -a "$summary"
  if [ ${#dirs[@]} -gt 0 ]; then
    "$bin" plot --metric top10 --title "$task, budget $budget" --out "$out/$task/top10.png" "${labels[@]}" "${dirs[@]}" >/dev/null
  fi
done
for method in "${methods[@]}"; do
  [ -n "${total[$method]:-}" ] && echo "$method: auc_top10 summed over ${#tasks[@]} tasks ${total[$method]}, over the $ncomparable comparable ${comparable[$method]:-0}" | tee -a "$summary"
done
for b in "${baselines[@]}"; do
  echo "$b (published, 10,000 calls): auc_top10 summed over ${#tasks[@]} tasks ${total[pub:$b]}, over the $ncomparable comparable ${comparable[pub:$b]:-0}" | tee -a "$summary"
done
