#!/usr/bin/env bash
# gpu-check.sh: CUDA end to end, and CUDA beside the CPU on the same machine.
#
#   scripts/gpu-check.sh pack    (here, after ./build.sh build) bundle what a GPU machine
#                                lacks into .gpu/bundle.tar.xz: the tlbo-native binary, the
#                                test binaries of the packages with CUDA tests, the RDKit and
#                                OpenBLAS shared libraries (libtlbo_chem's closure), a small
#                                data directory, the SA score's fragment table (read through
#                                $TLBO_SA_FRAGMENTS there) and the shipped molecule network
#   scripts/gpu-check.sh OUT     run the checks and write their logs and OUT/summary.tsv
#
# On a machine with a GPU and PyTorch (no network needed), OUT builds native/ against
# PyTorch's libtorch (-DTLBO_CHEM=OFF; libtlbo_chem and RDKit come from the bundle), runs
# the CUDA tests, `train` and `optimize` of the three tasks on --device cuda, and times,
# on cuda and on cpu of the same machine: a grammar-VAE step, a conv-VAE epoch, a JT-VAE
# step at batch 32 and 128, 100 greedy molecule decodes, and an SGPR fit at N 10,000,
# M 500 (ours, on the CPU's cores: the GP has no CUDA path) against GPyTorch's on the GPU
# and on the CPU. Without a GPU it says so and runs the CPU part alone, from the
# checkout's bin/ and build/ when there is no bundle.
#
# Each step has its own time limit and the whole run a deadline (GPU_CHECK_DEADLINE
# seconds, default 540), so that it ends inside a 10-minute lease; a failed step is
# recorded and the next one runs. summary.tsv: step, device, status, seconds, result.
# GPU_CHECK_PARTS (default "cuda_tests benches tasks sgpr") runs some parts only;
# GPU_CHECK_TOPOLOGY_N (default 300) and GPU_CHECK_MOLECULES (default 1000) set the
# topology and molecule data sets' sizes.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
START=$(date +%s)
DEADLINE=${GPU_CHECK_DEADLINE:-540}

say() { echo "gpu-check: $*" >&2; }

# ---------------------------------------------------------------- pack (here)
pack() {
  local stage=.gpu/stage
  [ -x bin/tlbo-native ] && [ -f build/libtlbo_chem.so ] || { say "run ./build.sh build first"; exit 1; }
  rm -rf "$stage" && mkdir -p "$stage"/{bin,tests,lib,data/expression,data/zinc,nets}
  export CGO_LDFLAGS="-L$ROOT/build" GOFLAGS=-tags=tlbo_libdir
  local flags="-s -w -extldflags=-Wl,-rpath,\$ORIGIN/../lib"
  go build -ldflags="$flags" -o "$stage/bin/tlbo-native" ./cmd/tlbo-native || exit 1
  local p
  for p in torch models models/jtvae internal/task/molecule; do
    go test -c -ldflags="$flags" -o "$stage/tests/$(echo "$p" | tr / _).test" "./$p" || exit 1
  done
  # libtlbo_chem and what it and the binary need, less glibc, the C++ runtime and
  # libtorch (the GPU machine has its own, and its libtlbo_native is built there).
  local skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libstdc\+\+|libgcc_s|libtorch|libc10|libtlbo_native)'
  cp build/libtlbo_chem.so "$stage/lib/"
  { ldd build/libtlbo_chem.so; ldd "$(ldconfig -p | awk '/libopenblas.so.0 /{print $NF; exit}')";
    ldd "$(ldconfig -p | awk '/libtcmalloc_minimal.so.4 /{print $NF; exit}')"; } |
    awk '$3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
      [[ $name =~ $skip ]] || cp -L "$path" "$stage/lib/$name"
    done
  for p in libopenblas.so.0 libtcmalloc_minimal.so.4 liblapacke.so.3; do
    cp -L "$(ldconfig -p | awk -v n="$p" '$1 == n {print $NF; exit}')" "$stage/lib/$p" 2>/dev/null || true
  done
  local data
  data=$(bin/tlbo-native version >/dev/null 2>&1; echo "${TLBO_DATA:-$ROOT/../shared/data}")
  head -n 5000 "$data/expression/equation2_15_dataset.txt" >"$stage/data/expression/equation2_15_dataset.txt"
  cp "$data/zinc/jtvae_vocab.txt" "$stage/data/zinc/"
  # 1,000 molecules of the JT-VAE validation split: enough for a retraining and a GP.
  head -n 1000 "$data/zinc/jtvae_valid.txt" >"$stage/data/zinc/small.smi"
  cp pretrained/molecule-t.pt pretrained/molecule-t.json "$stage/nets/"
  cp /usr/share/RDKit/Contrib/SA_Score/fpscores.pkl.gz "$stage/data/"
  tar -C "$stage" -cJf .gpu/bundle.tar.xz . && rm -rf "$stage"
  say "wrote .gpu/bundle.tar.xz ($(du -h .gpu/bundle.tar.xz | cut -f1))"
}

# ---------------------------------------------------------------- checks
OUT= BIN= TESTS= HAVE_GPU=0 DEVICES=cpu PY= DATA= SMI= MOLNET= THREADS=$(nproc)

# pick_python: a python3 with numpy (a GPU machine's holds PyTorch), or none.
pick_python() {
  local p
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then
      PY=$p
      return
    fi
  done
}

# step NAME DEVICE LIMIT CMD...: runs CMD with its output in OUT/NAME-DEVICE.log and a
# summary line; the result column is the log's last line that matches $PATTERN.
PATTERN='_ms |seconds_per_epoch|best score|fit_s|loglik|^ok|^FAIL|^PASS|decoded|invalid'
step() {
  local name=$1 dev=$2 limit=$3 log t0 rc secs left
  shift 3
  left=$((DEADLINE - ($(date +%s) - START)))
  if [ "$left" -lt 20 ]; then
    printf '%s\t%s\tskipped (deadline)\t0\t\n' "$name" "$dev" >>"$OUT/summary.tsv"
    return 1
  fi
  [ "$limit" -le "$left" ] || limit=$left
  log=$OUT/$name-$dev.log
  say "$name ($dev, at most ${limit}s)"
  t0=$(date +%s%N)
  timeout -k 5 "$limit" "$@" >"$log" 2>&1
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  local status=ok
  [ $rc -eq 0 ] || status="failed ($rc)"
  [ $rc -eq 124 ] && status="timed out"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$dev" "$status" "$secs" \
    "$(grep -E "$PATTERN" "$log" | tail -n 1 | tr '\t' ' ' | cut -c1-200)" >>"$OUT/summary.tsv"
  return $rc
}

setup() {
  OUT=$1
  mkdir -p "$OUT"
  : >"$OUT/summary.tsv"
  pick_python
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >"$OUT/gpu.txt" 2>&1; then
    HAVE_GPU=1
  fi
  local b=/tmp/gpu-check-bundle src
  if [ -f .gpu/bundle.tar.xz ]; then
    rm -rf "$b" && mkdir -p "$b" && tar -C "$b" -xJf .gpu/bundle.tar.xz
    BIN=$b/bin/tlbo-native TESTS=$b/tests DATA=$b/data MOLNET=$b/nets/molecule-t.pt
    export LD_LIBRARY_PATH=$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} TLBO_SA_FRAGMENTS=$b/data/fpscores.pkl.gz
  else
    BIN=$ROOT/bin/tlbo-native TESTS= DATA=${TLBO_DATA:-$ROOT/../shared/data} MOLNET=$ROOT/pretrained/molecule-t.pt
  fi
  export TLBO_DATA=$DATA
  mkdir -p "$OUT/work"
  SMI=$OUT/work/small.smi
  if [ -f "$DATA/zinc/small.smi" ]; then src=$DATA/zinc/small.smi; else src=$DATA/zinc/jtvae_valid.txt; fi
  head -n "${GPU_CHECK_MOLECULES:-1000}" "$src" >"$SMI"
  head -n 120 "$SMI" >"$OUT/work/small120.smi"
  [ -x "$BIN" ] || { say "no tlbo-native binary: run ./build.sh build (and scripts/gpu-check.sh pack for a GPU machine)"; exit 1; }
  if [ "$HAVE_GPU" = 1 ]; then
    say "GPU found: $(head -n 1 "$OUT/gpu.txt")"
    build_cuda || { say "native/ did not build against this machine's libtorch: CPU part only"; HAVE_GPU=0; }
  else
    say "no GPU found (nvidia-smi sees none): running the CPU part only"
    echo "no GPU found" >"$OUT/gpu.txt"
  fi
  [ "$HAVE_GPU" = 1 ] && DEVICES="cuda cpu"
  "$BIN" version >"$OUT/version.txt" 2>&1
  cat "$OUT/version.txt" >&2
  { echo "host $(uname -n) cores $(nproc)"; grep -m1 'model name' /proc/cpuinfo; cat "$OUT/gpu.txt"; } >"$OUT/machine.txt"
}

# build_cuda builds libtlbo_native against the libtorch of the machine's PyTorch.
build_cuda() {
  local tdir
  tdir=$(python3 -c 'import os, torch; print(os.path.join(torch.utils.cmake_prefix_path, "Torch"))' 2>/dev/null) || return 1
  step build-native cuda 240 bash -c "cmake -S . -B build-cuda -DCMAKE_BUILD_TYPE=Release -DTLBO_CHEM=OFF \
    -DTorch_DIR='$tdir' $(command -v ninja >/dev/null && echo -G Ninja) && cmake --build build-cuda -j $(nproc)" || return 1
  export LD_LIBRARY_PATH=$ROOT/build-cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

cuda_tests() {
  [ "$HAVE_GPU" = 1 ] && [ -n "$TESTS" ] || return 0
  local t
  for t in "$TESTS"/*.test; do
    # The package's own directory, for its testdata.
    local pkg
    pkg=$(basename "$t" .test | tr _ /)
    step "test-$(basename "$t" .test)" cuda 120 bash -c "cd '$ROOT/$pkg' && '$t' -test.run 'CUDA|Cuda' -test.v" || true
  done
}

benches() {
  local d
  for d in $DEVICES; do
    step gvae-step "$d" 60 "$BIN" bench gvae-step --threads "$THREADS" --device "$d" --steps 50 --batch 256
    step jtvae-step-b32 "$d" 90 "$BIN" bench jtvae-step --threads "$THREADS" --device "$d" --steps 5 --batch 32
    step jtvae-step-b128 "$d" 120 "$BIN" bench jtvae-step --threads "$THREADS" --device "$d" --steps 3 --batch 128
  done
}

# sgpr: our SGPR fit (CPU, every core) against GPyTorch's (GPU and CPU) on the same data.
sgpr() {
  local w=$OUT/work/sgpr
  mkdir -p "$w"
  if [ -z "$PY" ] || ! "$PY" testdata/gp/gpytorch_sgpr.py data --out "$w" --n 10000 --m 500 --d 25 >"$OUT/sgpr-data.log" 2>&1; then
    printf 'sgpr\tany\tskipped (no python3 with numpy)\t0\t\n' >>"$OUT/summary.tsv"
    return 0
  fi
  step sgpr-fit-ours cpu 180 "$BIN" gp --train-x "$w/train_x.npy" --train-y "$w/train_y.npy" \
    --test-x "$w/test_x.npy" --test-y "$w/test_y.npy" --inducing 500
  if ! "$PY" -c 'import gpytorch' 2>/dev/null; then
    printf 'sgpr-fit-gpytorch\tany\tskipped (no gpytorch)\t0\t\n' >>"$OUT/summary.tsv"
    return 0
  fi
  local d
  for d in $DEVICES; do
    step sgpr-fit-gpytorch "$d" 180 "$PY" testdata/gp/gpytorch_sgpr.py fit --dir "$w" --m 500 --device "$d"
  done
}

# tasks: data, train and optimize of each task, then 100 greedy decodes.
tasks() {
  local w=$OUT/work d
  # 5,000 expressions of the data set: a library of the user's kind (scored with the target).
  head -n 5000 "$DATA/expression/equation2_15_dataset.txt" >"$w/expr5k.txt"
  step data-expression cpu 60 "$BIN" data expression --expressions "$w/expr5k.txt" --out "$w/expr"
  step data-topology cpu 120 "$BIN" data topology --out "$w/topo" -n "${GPU_CHECK_TOPOLOGY_N:-300}"
  step data-molecule cpu 120 "$BIN" data molecule --out "$w/mol" --smiles "$SMI" --vocab "$DATA/zinc/jtvae_vocab.txt"
  for d in $DEVICES; do
    step train-expression "$d" 90 "$BIN" train --threads "$THREADS" --task expression --data-dir "$w/expr" --elbo t --epochs 2 \
      --prior-samples 20 --device "$d" --out "$w/expr-$d.pt" --force
    step train-topology "$d" 90 "$BIN" train --threads "$THREADS" --task topology --data-dir "$w/topo" --elbo t --epochs 3 \
      --prior-samples 20 --device "$d" --out "$w/topo-$d.pt" --force
    step train-molecule "$d" 120 "$BIN" train --threads "$THREADS" --task molecule --molecules "$w/mol/molecules.npz" --elbo t --epochs 1 \
      --prior-samples 0 --device "$d" --out "$w/mol-$d.pt" --force
  done
  local gp=(--n-best 100 --n-rand 50 --inducing 50 --budget 6 --retrain-every 3 --raw-samples 200 --restarts 10)
  for d in $DEVICES; do
    step optimize-expression "$d" 120 "$BIN" optimize --threads "$THREADS" --vae "$w/expr-$d.pt" --data-dir "$w/expr" --elbo t \
      "${gp[@]}" --device "$d" --run-dir "$w/run-expr-$d"
    step optimize-topology "$d" 120 "$BIN" optimize --threads "$THREADS" --vae "$w/topo-$d.pt" --data-dir "$w/topo" --elbo t \
      "${gp[@]}" --device "$d" --run-dir "$w/run-topo-$d"
    step optimize-molecule "$d" 180 "$BIN" optimize --threads "$THREADS" --vae "$MOLNET" --molecules "$w/mol/molecules.npz" --elbo t \
      "${gp[@]}" --retrain-epochs 0.2 --initial-retrain-epochs 0.2 --device "$d" --run-dir "$w/run-mol-$d"
  done
  # 100 points: the encoder means of the first 100 validation molecules the network can
  # take (rows of NaN for those it cannot, dropped with numpy).
  if [ -z "$PY" ] || ! { "$BIN" encode --vae "$MOLNET" --in "$w/small120.smi" --out "$w/z120.npy" --skip-invalid &&
    "$PY" -c 'import sys, numpy as np; z = np.load(sys.argv[1]); np.save(sys.argv[2], z[~np.isnan(z).any(1)][:100])' \
      "$w/z120.npy" "$w/z100.npy"; } >"$OUT/encode-100.log" 2>&1; then
    printf 'decode-100-greedy\tany\tskipped (no python3 with numpy, or encode failed)\t0\t\n' >>"$OUT/summary.tsv"
    return 0
  fi
  for d in $DEVICES; do
    step decode-100-greedy "$d" 180 "$BIN" decode --threads "$THREADS" --vae "$MOLNET" --in "$w/z100.npy" --out "$w/dec-$d.smi" --greedy --device "$d"
  done
}

main() {
  [ $# -eq 1 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
  if [ "$1" = pack ]; then
    pack
    return
  fi
  setup "$1"
  local part
  for part in ${GPU_CHECK_PARTS:-cuda_tests benches tasks sgpr}; do
    "$part"
  done
  [ -n "$OUT" ] && rm -rf "${OUT:?}/work"
  say "done in $(($(date +%s) - START)) s; $OUT/summary.tsv:"
  if command -v column >/dev/null; then column -t -s $'\t' "$OUT/summary.tsv" >&2; else cat "$OUT/summary.tsv" >&2; fi
  if [ "$HAVE_GPU" = 0 ]; then say "no GPU was found: the CUDA part did not run"; fi
  ! grep -q $'\tfailed' "$OUT/summary.tsv"
}

# On one line, so that bash has read the exit before main runs (an edit of this file
# while it runs cannot make bash read on from another offset).
main "$@"; exit
