#!/usr/bin/env bash
# Table 1 and Fig. 2 on topology (issue 53 item 3): the shipped plain conv VAE
# (pretrained/topology-lbo.pt, 300 epochs of the plain ELBO) fine-tuned once per
# ELBO -- plain (vanilla), simple, contrastive, log-ratio, soft triplet -- for
# the same EPOCHS (default 20) on the same designs, on the task's defaults
# (batch 1024, Adam 1e-3, rank weights k = 1e-3, the triplet's beta_metric 1,
# eta 0.1, nu 0.05: docs/design.md section 9), seed 0, so that the five
# networks differ in the ELBO of their last EPOCHS epochs only. Training the
# three missing losses from scratch at the paper's 300 epochs would cost 3-5
# CPU-hours each (pretrained/README.md); the fine-tuning is the molecule
# table's protocol (table1-molecule.sh) on this task. The shipped T-LBO network
# (pretrained/topology-t.pt, 300 epochs of the soft triplet from scratch) and
# the un-fine-tuned plain one are analysed as two more rows, "triplet-300" and
# "pretrained". Then `analyze gp-loglik` (Table 1: five random 80/20 splits,
# SGPR with 500 inducing points) and `analyze latent-distances` (Fig. 2) on
# MAX_POINTS random designs (default 0: all), encoder means.
#
#   docs/experiment/table1-topology.sh DESIGNS.npz OUT [EPOCHS] [MAX_POINTS]
#
# DESIGNS.npz is `data topology -n 10000 --seed 0`'s (the shipped networks'
# data). OUT receives the networks (OUT/topology-E.pt, with .last.* states
# after every epoch, logs OUT/train-E.log) and OUT/analyses/. Rerunning the
# command resumes an unfinished training and skips a finished one.
# Env: TLBO_BIN (default bin/tlbo-native), THREADS (default 1), ELBOS (default
# "lbo s c lr t").
set -euo pipefail
source "$(dirname "$0")/finetune.sh"
designs=${1:?usage: table1-topology.sh DESIGNS.npz OUT [EPOCHS] [MAX_POINTS]}
out=${2:?usage: table1-topology.sh DESIGNS.npz OUT [EPOCHS] [MAX_POINTS]}
epochs=${3:-20}
maxp=${4:-0}
bin=${TLBO_BIN:-bin/tlbo-native}
plain=pretrained/topology-lbo.pt
mkdir -p "$out/analyses"

common=(--task topology --designs "$designs" --epochs "$epochs" --threads "${THREADS:-1}" --seed 0)

finetune_each "$out" topology "$plain" "${ELBOS:-lbo s c lr t}" "${common[@]}"

# Table 1's order and names; the shipped networks last.
args=()
for pair in lbo:vanilla s:simple c:contrastive lr:log-ratio t:triplet; do
  args+=(--vae "$out/topology-${pair%%:*}.pt" --name "${pair#*:}")
done
args+=(--vae pretrained/topology-t.pt --name triplet-300 --vae "$plain" --name pretrained)
for analysis in gp-loglik latent-distances; do
  "$bin" analyze "$analysis" --task topology --designs "$designs" "${args[@]}" --max-points "$maxp" \
    --threads 1 --out "$out/analyses"
done
