# Sourced by pmo.sh and pmo-vs-published.sh: PMO's leaderboard (pmo-published.csv,
# 10,000 calls; pmo-published.md says where it comes from).
#
# published_aucs TASK METHOD
#   prints the leaderboard's auc_top1, auc_top10 and auc_top100 of METHOD on TASK
#   (nothing when it has none).
# scored_by_tdc2022 TASK
#   succeeds for the tasks whose published numbers score TDC's definitions of
#   2022, not GuacaMol's (ours): pmo-published.md, "Which oracle code the numbers
#   score". They are not comparable with ours.
pmo_published_csv=$(dirname "${BASH_SOURCE[0]}")/pmo-published.csv
published_aucs() { awk -F, -v t="$1" -v m="$2" '$1 == t && $2 == m {print $5, $4, $3}' "$pmo_published_csv"; }
scored_by_tdc2022() { [[ " zaleplon_mpo sitagliptin_mpo isomers_c7h8n2o2 isomers_c9h10n2o2pf2cl " == *" $1 "* ]]; }
