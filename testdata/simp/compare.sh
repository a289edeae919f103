#!/bin/sh
# Interleaved comparison of `tlbo-native topology solve` with top88_ref.py on
# the problems of a topology data set (or one of its part files):
#   testdata/simp/compare.sh BIN DATA.npz [K]
# For each of the first K designs (default 5) it runs the Go solver and then
# the Python reference on the same spec and prints both compliances and both
# solve times (process start-up excluded); the last line has the totals.
set -eu
export OPENBLAS_NUM_THREADS=1 # one BLAS thread for both solvers
bin=$1 npz=$2 k=${3:-5}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$here/top88_ref.py" dataset "$npz" --first "$k" --write-specs "$tmp"
printf '%-14s %14s %14s %10s %10s %8s\n' spec go_compliance py_compliance go_s py_s pixels
for spec in "$tmp"/*.json; do
	"$bin" topology solve --spec "$spec" --out "$tmp/go.npy" >"$tmp/go.txt"
	/usr/bin/python3 "$here/top88_ref.py" solve "$spec" --out "$tmp/py.npy" >"$tmp/py.txt"
	px=$(/usr/bin/python3 -c "import numpy as n,sys; print(int(((n.load(sys.argv[1])>0.5)!=(n.load(sys.argv[2])>0.5)).sum()))" "$tmp/go.npy" "$tmp/py.npy")
	printf '%-14s %14s %14s %10s %10s %8s\n' "$(basename "$spec" .json)" \
		"$(awk '/^compliance /{print $2}' "$tmp/go.txt")" "$(awk '/^compliance /{print $2}' "$tmp/py.txt")" \
		"$(awk '/^seconds/{print $2}' "$tmp/go.txt")" "$(awk '/^seconds/{print $2}' "$tmp/py.txt")" "$px"
done | tee "$tmp/table"
awk 'NR>0{g+=$4; p+=$5; n++} END{printf "total %d designs: go %.2f s, python %.2f s, python/go %.1f\n", n, g, p, p/g}' "$tmp/table"
