#!/usr/bin/env bash
# build.sh: set-up, build, main job and tests of tlbo-native on Debian 12.
#
#   ./build.sh run      install what is missing, build, run the main job
#   ./build.sh test     install what is missing, build, check go.mod and run paths, run the tests
#                       (the numerical packages twice: the CPU's own OpenBLAS kernels, then others
#                       on one thread; docs/reproducibility.md)
#   ./build.sh build    install what is missing and build bin/tlbo-native
#   ./build.sh install PREFIX   install bin/, lib/ and include/ under PREFIX
#
# Environment: TORCH_DIR=<dir with TorchConfig.cmake> builds native/ against
# another libtorch (e.g. a CUDA one from PyTorch); BUILD_DIR (default build) is
# where CMake builds the native libraries and what the Go code links against;
# TLBO_CACHE (default ~/.cache/tlbo-native) holds a Go toolchain fetched by this
# script. Every step is idempotent: a second run installs and rebuilds nothing.
# ./build.sh test also installs slurm-wlm and munge and starts a one-node Slurm cluster
# (testdata/slurm/start.sh, as root or through sudo) for internal/external's integration
# test, unless TLBO_SKIP_SLURM=1, which skips that test.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-build}
TLBO_CACHE=${TLBO_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tlbo-native}

APT_PACKAGES=(libtorch-dev cmake g++ make pkg-config libopenblas-dev liblapacke-dev git ca-certificates
  librdkit-dev rdkit-data libboost-dev libcairo2-dev libgoogle-perftools-dev)
# What ./build.sh test adds: the one-node Slurm cluster of testdata/slurm/start.sh, which
# internal/external's integration test submits job arrays to, and the headless browser of
# internal/dashboard's browser test (which then must run: TLBO_REQUIRE_BROWSER=1).
TEST_APT_PACKAGES=(slurm-wlm munge chromium)
SLURM_APT_PACKAGES=(slurm-wlm munge)
# The tag that drops the checkout's default build/ from the #cgo lines (torch/cgo.go):
# this script passes the library directory itself.
GO_TAG=tlbo_libdir

say() { echo "build.sh: $*" >&2; }

APT_UPDATED=
apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  say "installing with apt: $*"
  if [ -z "$APT_UPDATED" ]; then
    $sudo apt-get update -qq
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >&2
}

install_deps() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
}

# go_version GO: the version of the go command GO ("1.19.8"), "devel" or empty.
go_version() {
  local v
  v=$("$1" env GOVERSION 2>/dev/null) || return 0
  case "$v" in
    devel*) echo devel ;;
    go*) v=${v#go}; echo "${v%%[!0-9.]*}" ;;
  esac
}

# version_ge A B: A >= B for dotted versions.
version_ge() {
  [ "$1" = devel ] && return 0
  [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$2" ]
}

# wanted_go: the toolchain go.mod asks for ("go1.26.8"): its toolchain line, else its go line.
wanted_go() {
  local v
  v=$(sed -n 's/^toolchain[[:space:]]*go\([0-9.]*\).*/\1/p' go.mod)
  [ -n "$v" ] || v=$(sed -n 's/^go[[:space:]]*\([0-9.]*\).*/\1/p' go.mod)
  [ -n "$v" ] || { say "go.mod has no go line"; exit 1; }
  # From Go 1.21 on, the first release of 1.N is named go1.N.0.
  if [[ $v =~ ^1\.([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 21 ]; then v=$v.0; fi
  echo "go$v"
}

# setup_go puts a go command at least as new as go.mod's first on PATH: the one on
# PATH, /usr/local/go, or one fetched earlier into $TLBO_CACHE. Otherwise it fetches
# the toolchain go.mod names as the module golang.org/toolchain with an older go
# (apt's golang-go when there is none): the go command downloads it through the Go
# module proxy and checks it against the module checksum database.
setup_go() {
  local want cached boot="" cand v
  want=$(wanted_go)
  cached=$TLBO_CACHE/$want/bin/go
  for cand in "$(command -v go || true)" /usr/local/go/bin/go "$cached"; do
    [ -n "$cand" ] && [ -x "$cand" ] || continue
    v=$(go_version "$cand")
    [ -n "$v" ] || continue
    if version_ge "$v" "${want#go}"; then
      use_go "$cand"
      return
    fi
    [ -n "$boot" ] || boot=$cand
  done
  if [ -z "$boot" ]; then
    apt_install golang-go
    boot=/usr/bin/go
  fi
  fetch_go "$boot" "$want"
  use_go "$cached"
}

# use_go GO: GO's directory first on PATH.
use_go() {
  local dir
  dir=$(dirname "$1")
  case ":$PATH:" in
    ":$dir:"*) ;;
    *) export PATH="$dir:$PATH" ;;
  esac
  # A GOROOT of another installation would mislead the chosen go command, which
  # finds its own from where it lies.
  unset GOROOT
}

# fetch_go BOOT WANT: WANT (e.g. go1.26.8) into $TLBO_CACHE/WANT, downloaded by the
# older go command BOOT.
fetch_go() {
  local boot=$1 want=$2 os arch mod dir v link=$TLBO_CACHE/$2
  os=$("$boot" env GOHOSTOS)
  arch=$("$boot" env GOHOSTARCH)
  mod=golang.org/toolchain@v0.0.1-$want.$os-$arch
  say "$boot is Go $(go_version "$boot"), go.mod needs $want: fetching the module $mod into $TLBO_CACHE"
  mkdir -p "$TLBO_CACHE"
  # Outside any module (go.mod's go line is too new for BOOT to parse), with a module
  # cache of our own, writable so that it can be deleted with rm -rf.
  (cd / && GOMODCACHE="$TLBO_CACHE/mod" GOFLAGS=-modcacherw GO111MODULE=on GOTOOLCHAIN=local GOWORK=off \
    "$boot" mod download "$mod")
  dir=$TLBO_CACHE/mod/$mod
  # Module zips do not keep file modes: make the commands executable, bin/go last,
  # so that an interrupted run is redone.
  local sub
  for sub in pkg/tool lib bin; do
    [ -d "$dir/$sub" ] && find "$dir/$sub" -type f -exec chmod a+x {} +
  done
  ln -sfn "$dir" "$link"
  v=$(go_version "$link/bin/go")
  [ "go$v" = "$want" ] || { say "the fetched toolchain says it is Go $v, not $want"; exit 1; }
  say "using $link/bin/go ($want)"
}

build_native() {
  local args=(-DCMAKE_BUILD_TYPE=Release)
  [ -n "${TORCH_DIR:-}" ] && args+=("-DTorch_DIR=$TORCH_DIR")
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" "${args[@]}" >&2
  fi
  cmake --build "$BUILD_DIR" -j "$(nproc)" >&2
}

# go_env points cgo at $BUILD_DIR: with the tag, the #cgo lines name only the
# libraries, and CGO_LDFLAGS gives the directory. The run path is per binary (go_rpath),
# so that every binary shares the compiled packages.
go_env() {
  LIB_DIR=$(cd "$BUILD_DIR" && pwd)
  # The go command splits these flags at blanks (and quotes only whole flags).
  [[ $LIB_DIR != *[[:space:]]* ]] || { say "the build directory '$LIB_DIR' contains a blank"; exit 1; }
  export CGO_LDFLAGS="-L$LIB_DIR${CGO_LDFLAGS:+ $CGO_LDFLAGS}"
  export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=$GO_TAG"
}

# go_rpath DIR: the go flag that sets a binary's run path to DIR.
go_rpath() { echo "-ldflags=-extldflags=-Wl,-rpath,$1"; }

# checkout_rpath: the run path of bin/tlbo-native: its build directory, relative to
# bin/ when that is inside the checkout (so a moved checkout keeps working).
checkout_rpath() {
  case "$LIB_DIR/" in
    "$ROOT"/*) echo "\$ORIGIN/..${LIB_DIR#"$ROOT"}" ;;
    *) echo "$LIB_DIR" ;;
  esac
}

build_go() {
  mkdir -p bin
  go build "$(go_rpath "$(checkout_rpath)")" -o bin/tlbo-native ./cmd/tlbo-native
}

build() {
  install_deps
  setup_go
  build_native
  go_env
  build_go
}

# install_to PREFIX: the binary with the run path $ORIGIN/../lib only, and the
# native libraries (CMake's install rules set their run paths) under PREFIX.
install_to() {
  local prefix=$1 staged=$BUILD_DIR/go-install/tlbo-native
  go build "$(go_rpath '$ORIGIN/../lib')" -o "$staged" ./cmd/tlbo-native
  install -D -m 0755 "$staged" "$prefix/bin/tlbo-native"
  cmake --install "$BUILD_DIR" --prefix "$prefix" >&2
}

# start_slurm: a Slurm cluster for internal/external's integration test: one that answers
# already, else the one-node cluster of testdata/slurm/start.sh (slurm-wlm and munge installed by
# install_test_deps). TLBO_SKIP_SLURM=1 installs and starts nothing, and the test says it skips.
start_slurm() {
  if [ "${TLBO_SKIP_SLURM:-}" = 1 ]; then
    say "TLBO_SKIP_SLURM=1: no Slurm cluster; the Slurm integration test is skipped"
    return
  fi
  if command -v sinfo >/dev/null && [ -n "$(timeout 10 sinfo -h -t idle,mixed,allocated -o %n 2>/dev/null)" ]; then
    return
  fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo testdata/slurm/start.sh
}

# install_test_deps installs TEST_APT_PACKAGES that are missing (the Slurm ones only when
# Slurm is not skipped).
install_test_deps() {
  local missing=() p
  for p in "${TEST_APT_PACKAGES[@]}"; do
    if [ "${TLBO_SKIP_SLURM:-}" = 1 ] && [[ " ${SLURM_APT_PACKAGES[*]} " == *" $p "* ]]; then
      continue
    fi
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
}

# runpath FILE: the DT_RUNPATH (or DT_RPATH) of an ELF file.
runpath() { readelf -d "$1" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p'; }

# check_tidy fails when go.mod or go.sum are not what go mod tidy makes them.
check_tidy() {
  if ! go mod tidy -diff >&2; then
    say "go.mod/go.sum are not tidy (diff above): run 'go mod tidy' and commit the result"
    exit 1
  fi
}

# check_runpaths: bin/tlbo-native finds $BUILD_DIR; an installed binary finds only
# PREFIX/lib (no checkout path): each of our libraries it needs resolves there, and it runs.
check_runpaths() {
  local got want tmp
  want=$(checkout_rpath)
  got=$(runpath bin/tlbo-native)
  [ "$got" = "$want" ] || { say "bin/tlbo-native: run path '$got', want '$want'"; exit 1; }
  tmp=$(mktemp -d)
  install_to "$tmp" 2>/dev/null
  if ! check_installed "$tmp"; then
    rm -rf "$tmp"
    exit 1
  fi
  rm -rf "$tmp"
  say "run paths: bin/tlbo-native '$want', installed '\$ORIGIN/../lib'"
}

# check_installed PREFIX: the checks of check_runpaths on PREFIX/bin/tlbo-native.
check_installed() {
  local bin=$1/bin/tlbo-native got names name lib
  got=$(runpath "$bin")
  [ "$got" = '$ORIGIN/../lib' ] || { say "installed tlbo-native: run path '$got', want '\$ORIGIN/../lib'"; return 1; }
  names=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(libtlbo_[^]]*\)\]$/\1/p' | tr '\n' ' ')
  [[ " $names" == *" libtlbo_native.so "* ]] || { say "installed tlbo-native does not need libtlbo_native.so"; return 1; }
  for name in $names; do
    lib=$(env -u LD_LIBRARY_PATH ldd "$bin" | sed -n "s|^[[:space:]]*$name => \(/[^ ]*\).*|\1|p")
    if [ -z "$lib" ] || [ "$(realpath "$lib")" != "$(realpath "$1/lib/$name")" ]; then
      say "installed tlbo-native: $name => '${lib:-not found}', want $1/lib/$name"
      return 1
    fi
  done
  env -u LD_LIBRARY_PATH "$bin" version >/dev/null || { say "installed tlbo-native version failed"; return 1; }
}

# The packages whose tests compare results of OpenBLAS or libtorch: ./build.sh test runs
# them a second time on other kernels and thread counts (docs/reproducibility.md).
NUMERIC_PACKAGES=(./internal/gp/... ./internal/acq/... ./internal/simp/... ./internal/analysis/...
  ./internal/openblas/... ./internal/bo/... ./models/... ./torch/... ./internal/task/...)

# other_kernel: an OpenBLAS kernel set that this CPU runs and that differs from the one
# the first pass used (OPENBLAS_CORETYPE if set, else the CPU's own, which
# internal/openblas selects): Sandybridge (AVX) on a CPU with AVX2, else Prescott (SSE3).
# Empty on other architectures.
other_kernel() {
  [ "$(uname -m)" = x86_64 ] || return 0
  local flags first=${OPENBLAS_CORETYPE:-}
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  if [[ $flags == *" avx2 "* ]] && [ "${first,,}" != sandybridge ]; then
    echo Sandybridge
  else
    echo Prescott
  fi
}

# test_other_kernels runs NUMERIC_PACKAGES' tests again on another OpenBLAS kernel set,
# with one OpenBLAS and one libtorch thread (the first pass used the defaults: one per
# core), so that a test comparing bits that depend on one CPU's rounding fails here too.
test_other_kernels() {
  local kernel
  kernel=$(other_kernel)
  say "second pass of the numerical tests: OpenBLAS kernels ${kernel:-as the first pass}, 1 OpenBLAS and 1 libtorch thread"
  env ${kernel:+OPENBLAS_CORETYPE=$kernel} OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
    go test "$(go_rpath "$LIB_DIR")" -count=1 -timeout 60m "${NUMERIC_PACKAGES[@]}"
}

# main_job: a short but real T-LBO run on the expression task, on CPU, from
# the shipped soft-triplet grammar VAE (pretrained/expression-t.pt: 300 epochs
# with T-LBO's own ELBO, soft triplet, beta_metric 10, rank weights k = 1e-3,
# as the paper; pretrained/README.md says how it was made): 100 queries with
# soft-triplet retraining every 50 (a smaller GP than the paper's, to take
# minutes). Rerunning continues (or just reports) the run in runs/main.
main_job() {
  local out=${RUN_DIR:-runs/main}
  mkdir -p "$out"
  bin/tlbo-native version
  # --resume only where a run is: on a directory that holds none it is an error.
  local resume=()
  [ -f "$out/tlbo-t/config.json" ] && resume=(--resume)
  bin/tlbo-native optimize --task expression --vae pretrained/expression-t.pt --elbo t --budget 100 --retrain-every 50 \
    --n-best 500 --n-rand 100 --inducing 100 --threads 1 --seed 0 --run-dir "$out/tlbo-t" "${resume[@]}"
  echo "plot: $out/tlbo-t/best.png"
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
    check_tidy
    check_runpaths
    go vet ./...
    install_test_deps
    start_slurm
    TLBO_REQUIRE_BROWSER=1 go test "$(go_rpath "$LIB_DIR")" -count=1 -timeout 60m ./...
    test_other_kernels
    ;;
  install)
    prefix=${2:?usage: ./build.sh install PREFIX}
    build
    install_to "$prefix"
    ;;
  *) echo "usage: $0 build|run|test|install PREFIX" >&2; exit 2 ;;
esac
