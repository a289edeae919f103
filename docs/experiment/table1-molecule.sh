#!/usr/bin/env bash
# Table 1 and Fig. 2 on molecules (issue 53 item 3): the shipped plain ZINC
# JT-VAE (pretrained/molecule-lbo.pt) fine-tuned once per ELBO -- plain
# (vanilla), simple, contrastive, log-ratio -- exactly as the shipped T-LBO
# network (pretrained/molecule-t.pt) was fine-tuned from it with the soft
# triplet (docs/experiment/pretrain-zinc.sh's last step: one epoch of 6,520
# steps at batch 32 on the molecule task's defaults, rank weights k = 1e-3 on
# penalised logP, the same 1% held out, seed 0), so that the five networks
# differ in the ELBO only. The vanilla row is the plain ELBO fine-tuned the
# same way (the same rank-weighted steps); the shipped plain network, which
# was not fine-tuned, is analysed as a sixth row, "pretrained".
# Then `analyze gp-loglik` (Table 1: five random 80/20 splits, SGPR with 500
# inducing points) and `analyze latent-distances` (Fig. 2) on MAX_POINTS
# random training molecules (default 10,000), encoder means.
#
#   docs/experiment/table1-molecule.sh MOLECULES.npz OUT [MAX_POINTS]
#
# MOLECULES.npz is `data molecule`'s (all of ZINC250K's training split). OUT
# receives the four networks (OUT/molecule-E.pt, with .last.* states saved
# every 500 steps and logs OUT/train-E.log) and OUT/analyses/. Rerunning the
# command resumes an unfinished training and skips a finished one.
# Env: TLBO_BIN (default bin/tlbo-native), TLBO_DATA (default ../shared/data),
# THREADS (libtorch threads, default 1), WORKERS (featurisation, default 2),
# ELBOS (default "lbo s c lr"), VAE_T (default pretrained/molecule-t.pt).
set -euo pipefail
source "$(dirname "$0")/finetune.sh"
molecules=${1:?usage: table1-molecule.sh MOLECULES.npz OUT [MAX_POINTS]}
out=${2:?usage: table1-molecule.sh MOLECULES.npz OUT [MAX_POINTS]}
maxp=${3:-10000}
bin=${TLBO_BIN:-bin/tlbo-native}
data=${TLBO_DATA:-../shared/data}
plain=pretrained/molecule-lbo.pt
mkdir -p "$out/analyses"

common=(--task molecule --data-dir "$data" --molecules "$molecules" --workers "${WORKERS:-2}"
  --checkpoint-every 500 --prior-samples 1000 --device "${DEVICE:-cpu}" --threads "${THREADS:-1}" --seed 0
  --val-fraction 0.01)

finetune_each "$out" molecule "$plain" "${ELBOS:-lbo s c lr}" "${common[@]}"

# Table 1's order and names; the un-fine-tuned plain network last.
args=()
for pair in lbo:vanilla s:simple c:contrastive lr:log-ratio; do
  args+=(--vae "$out/molecule-${pair%%:*}.pt" --name "${pair#*:}")
done
args+=(--vae "${VAE_T:-pretrained/molecule-t.pt}" --name triplet --vae "$plain" --name pretrained)
for analysis in gp-loglik latent-distances; do
  "$bin" analyze "$analysis" --task molecule --data-dir "$data" --molecules "$molecules" \
    --workers "${WORKERS:-2}" "${args[@]}" --max-points "$maxp" --threads 1 --out "$out/analyses"
done
