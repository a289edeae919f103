#!/usr/bin/env bash
# Sets a method's PMO results beside the leaderboard's numbers for the same method name
# (pmo-published.csv, 10,000 calls): a markdown table, one row per task of OUT_DIR that has
# OUT_DIR/TASK/pmo-METHOD.txt (pmo.sh's analyses), with our mean AUC top-1/10/100 over the runs,
# the published ones, and our minus published. Meaningful where the budget is the leaderboard's
# 10,000 and the method is the same (screening); tasks the leaderboard scores with TDC's 2022 code
# are marked (pmo-published.md, "Which oracle code the numbers score").
#
#   docs/experiment/pmo-vs-published.sh OUT_DIR METHOD
set -euo pipefail
source "$(dirname "$0")/pmopublished.sh"
out=${1:?usage: pmo-vs-published.sh OUT_DIR METHOD}
method=${2:?usage: pmo-vs-published.sh OUT_DIR METHOD}
echo "| task | runs | ours auc_top1 / top10 / top100 | published | ours - published |"
echo "|---|---|---|---|---|"
for f in "$out"/*/pmo-"$method".txt; do
  [ -f "$f" ] || continue
  task=$(basename "$(dirname "$f")")
  mean=$(grep '^mean of' "$f")
  pub=$(published_aucs "$task" "$method")
  note=""
  if scored_by_tdc2022 "$task"; then note=" (published: TDC's 2022 definition)"; fi
  awk -v task="$task$note" -v mean="$mean" -v pub="$pub" 'BEGIN {
    n = split(mean, w, " ")
    for (i = 1; i < n; i++) {
      if (w[i] == "of") runs = w[i + 1]
      if (w[i] ~ /^auc_top(1|10|100)$/) ours[w[i]] = w[i + 1]
    }
    split(pub, p, " ")
    if (p[1] == "") {
      printf "| %s | %s | %.3f / %.3f / %.3f | none | |\n", task, runs, ours["auc_top1"], ours["auc_top10"], ours["auc_top100"]
      exit
    }
    printf "| %s | %s | %.3f / %.3f / %.3f | %s / %s / %s | %+.3f / %+.3f / %+.3f |\n", task, runs,
      ours["auc_top1"], ours["auc_top10"], ours["auc_top100"], p[1], p[2], p[3],
      ours["auc_top1"] - p[1], ours["auc_top10"] - p[2], ours["auc_top100"] - p[3]
  }'
done
