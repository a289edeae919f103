#!/usr/bin/env bash
# Side-by-side timing of one SGPR bound+gradient evaluation: Go (internal/gp,
# analytic gradient) against PyTorch float64 (autograd), same data, same threads.
# Rounds alternate the two so that both see the same machine load; the medians
# of the per-round medians are reported with their ratio.
#
#   testdata/gp/compare_sgpr.sh [BIN [ROUNDS [THREADS]]]   (BIN defaults to bin/tlbo-native)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-bin/tlbo-native}
ROUNDS=${2:-5}
THREADS=${3:-$(nproc)}
go_ms=() torch_ms=() torch_default_ms=()
for r in $(seq "$ROUNDS"); do
  go_ms+=("$(TLBO_BLAS_THREADS=$THREADS "$BIN" bench sgpr-eval --reps 15 | awk '/^sgpr_eval_ms/ {print $2}')")
  torch_ms+=("$(/usr/bin/python3 testdata/gp/bench_sgpr_torch.py --threads "$THREADS" --reps 7 | awk '/^torch_sgpr_eval_ms/ {print $2}')")
  torch_default_ms+=("$(/usr/bin/python3 testdata/gp/bench_sgpr_torch.py --threads "$THREADS" --reps 7 --coretype none | awk '/^torch_sgpr_eval_ms/ {print $2}')")
  echo "round $r: go ${go_ms[-1]} ms, torch ${torch_ms[-1]} ms, torch (OpenBLAS default kernels) ${torch_default_ms[-1]} ms" >&2
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
g=$(med "${go_ms[@]}") t=$(med "${torch_ms[@]}") td=$(med "${torch_default_ms[@]}")
echo "threads $THREADS, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go_sgpr_eval_ms $g torch_sgpr_eval_ms $t torch_default_kernels_ms $td"
awk -v g="$g" -v t="$t" -v td="$td" 'BEGIN {printf "speedup %.2f (vs torch on the same OpenBLAS kernels), %.2f (vs torch on OpenBLAS default kernels)\n", t/g, td/g}'
