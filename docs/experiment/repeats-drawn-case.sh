#!/bin/sh
# Issue 19's drawn case: the expression task, a plain-ELBO VAE trained 10
# epochs with seed 6, the task's default GP (2,500 + 500 points, 500
# inducing), 100 evaluations; the authors' repeats against the loop that
# never evaluates a known object, the EI incumbent ablation, and q = 10
# with a trust region. Resumable: rerun after a kill.
#
#   docs/experiment/repeats-drawn-case.sh OUT
#
# Environment: BIN (default bin/tlbo-native), DATA (data directory).
set -eu
out=${1:?usage: repeats-drawn-case.sh OUT}
bin=${BIN:-bin/tlbo-native}
mkdir -p "$out"
data=${DATA:+--data-dir $DATA}
[ -f "$out/vae.pt" ] || "$bin" train --task expression --elbo lbo --epochs 10 --seed 6 --threads 1 --prior-samples 200 \
  $data --out "$out/vae.pt" > "$out/train.log" 2>&1
opt() { # NAME FLAGS...
  name=$1
  shift
  resume=""
  [ -f "$out/$name/config.json" ] && resume=--resume
  /usr/bin/time -v "$bin" optimize --task expression --vae "$out/vae.pt" --elbo lbo --budget 100 --threads 1 $data \
    --run-dir "$out/$name" $resume "$@" > "$out/$name.log" 2> "$out/$name.err"
}
opt authors --seed 0 --repeats authors
opt authors-best1 --seed 0 --repeats authors --best-quantile 1
for s in 0 1 2; do
  opt "skip-s$s" --seed "$s"
  opt "skip-best1-s$s" --seed "$s" --best-quantile 1
done
opt skip-q10-tr --seed 0 --q 10 --trust-region
