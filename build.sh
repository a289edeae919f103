#!/usr/bin/env bash
# build.sh: set-up, build, main job and tests of tlbo-native on Debian 12.
#
#   ./build.sh run      install what is missing, build, run the main job
#   ./build.sh test     install what is missing, build, run the tests
#   ./build.sh build    install what is missing and build bin/tlbo-native
#   ./build.sh install PREFIX   install bin/ and lib/ under PREFIX
#
# Environment: TORCH_DIR=<dir with TorchConfig.cmake> builds native/ against
# another libtorch (e.g. a CUDA one from PyTorch); BUILD_DIR (default build).
# Every step is idempotent: a second run installs and rebuilds nothing.
set -euo pipefail
cd "$(dirname "$0")"
BUILD_DIR=${BUILD_DIR:-build}

APT_PACKAGES=(libtorch-dev cmake g++ make pkg-config libopenblas-dev liblapacke-dev git ca-certificates)

install_deps() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && export PATH=$PATH:/usr/local/go/bin; } ||
    missing+=(golang-go)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "build.sh: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

build_native() {
  local args=(-DCMAKE_BUILD_TYPE=Release)
  [ -n "${TORCH_DIR:-}" ] && args+=("-DTorch_DIR=$TORCH_DIR")
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" "${args[@]}" >&2
  fi
  cmake --build "$BUILD_DIR" -j "$(nproc)" >&2
}

build_go() {
  mkdir -p bin
  # The rpath lets an installed binary find lib/ beside bin/; in the checkout the
  # torch package's cgo flags point at $BUILD_DIR.
  go build -ldflags='-extldflags=-Wl,-rpath,$ORIGIN/../lib' -o bin/tlbo-native ./cmd/tlbo-native
}

build() {
  install_deps
  build_native
  build_go
}

# main_job: a short but real T-LBO run on the expression task, on CPU: a short
# pretraining of the grammar VAE with the plain ELBO (12 epochs: the KL weight
# reaches 0.04 after about 11), then 100 queries with
# soft-triplet retraining every 50 (a smaller GP than the paper's, to take minutes).
# Rerunning continues (or just reports) the run in runs/main.
main_job() {
  local out=${RUN_DIR:-runs/main}
  mkdir -p "$out"
  bin/tlbo-native version
  local resume=()
  [ -f "$out/gvae.json" ] && resume=(--resume)
  bin/tlbo-native train --task expression --elbo lbo --epochs 12 --threads 1 --seed 0 --prior-samples 200 \
    --out "$out/gvae.pt" "${resume[@]}"
  bin/tlbo-native optimize --task expression --vae "$out/gvae.pt" --elbo t --budget 100 --retrain-every 50 \
    --k 1e-3 --n-best 500 --n-rand 100 --inducing 100 --threads 1 --seed 0 --run-dir "$out/tlbo" --resume
  echo "plot: $out/tlbo/best.png"
}

cmd=${1:-build}
case "$cmd" in
  build) build ;;
  run)
    build
    main_job
    ;;
  test)
    build
    go vet ./...
    go test -count=1 -timeout 60m ./...
    ;;
  install)
    prefix=${2:?usage: ./build.sh install PREFIX}
    build
    install -D -m 0755 bin/tlbo-native "$prefix/bin/tlbo-native"
    install -D -m 0755 "$BUILD_DIR/libtlbo_native.so" "$prefix/lib/libtlbo_native.so"
    ;;
  *) echo "usage: $0 build|run|test|install PREFIX" >&2; exit 2 ;;
esac
