#!/usr/bin/env bash
# The paper's latent-space analyses (docs/design.md section 10) on VAEs pretrained
# as run.sh pretrains them, one per ELBO: vanilla (lbo), simple (s),
# contrastive (c), log-ratio (lr) and soft triplet (t), the same epochs for
# all. Writes OUT/analyses/gp_loglik.* (Table 1) and
# OUT/analyses/latent_distances.* (Fig. 2).
#
#   [TASK=expression] docs/experiment/analyses.sh OUT_DIR EPOCHS [MAX_POINTS]
#
# OUT_DIR may be run.sh's: its lbo and t checkpoints are reused (resumed to
# EPOCHS, which does nothing when they are there). MAX_POINTS (default 4000)
# is the random subset of labelled points analysed: SGPR with 500 inducing
# points on the whole 40k expressions takes hours per VAE on two cores.
# $TASK_FLAGS and $TRAIN_FLAGS as in run.sh; VAE_LBO and VAE_T, as in run.sh,
# name ready lbo and t checkpoints (e.g. the shipped pretrained/expression-*.pt)
# instead of pretraining them, and VAE_S, VAE_C and VAE_LR ready s, c and lr
# ones (e.g. pretrained/table1/expression-*.pt).
set -euo pipefail
out=${1:?usage: analyses.sh OUT_DIR EPOCHS [MAX_POINTS]}
epochs=${2:?usage: analyses.sh OUT_DIR EPOCHS [MAX_POINTS]}
maxp=${3:-4000}
task=${TASK:-expression}
bin=${TLBO_BIN:-bin/tlbo-native}
data=${TLBO_DATA:-../shared/data}
read -r -a taskf <<<"${TASK_FLAGS:-}"
read -r -a trainf <<<"${TRAIN_FLAGS:-}"
mkdir -p "$out/analyses"

source "$(dirname "$0")/pretrain.sh"
ready() { # ELBO -> the ready checkpoint named by VAE_<ELBO>, or nothing
  local v="VAE_${1^^}"
  echo "${!v:-}"
}
# The three run.sh does not make first, so that run.sh's can finish meanwhile.
for e in s c lr lbo t; do
  [ -n "$(ready "$e")" ] && continue
  pretrain "$e" > /dev/null || exit 1
done
# Table 1's order and names.
args=()
for pair in lbo:vanilla s:simple c:contrastive lr:log-ratio t:triplet; do
  e=${pair%%:*}
  vae=$(ready "$e")
  [ -z "$vae" ] && vae=$(ckpt "$e")
  args+=(--vae "$vae" --name "${pair#*:}")
done
for analysis in gp-loglik latent-distances; do
  "$bin" analyze "$analysis" --task "$task" --data-dir "$data" "${taskf[@]}" "${args[@]}" \
    --max-points "$maxp" --threads 1 --out "$out/analyses"
done
