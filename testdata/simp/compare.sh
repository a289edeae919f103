#!/bin/sh
# Interleaved comparison of `tlbo-native topology solve` with top88_ref.py on
# the problems of a topology data set (or one of its part files):
#   testdata/simp/compare.sh BIN DATA.npz [K]
# For each of the first K designs (default 5) it runs the Go solver and then
# the Python reference on the same spec and prints both compliances and both
# solve times, wall and CPU (process start-up excluded); the last line has the
# totals (the CPU ratio is the one to trust on a busy machine).
set -eu
export OPENBLAS_NUM_THREADS=1 # one BLAS thread for both solvers
bin=$1 npz=$2 k=${3:-5}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$here/top88_ref.py" dataset "$npz" --first "$k" --write-specs "$tmp"
printf '%-14s %14s %14s %8s %8s %8s %8s %7s\n' spec go_compliance py_compliance go_s py_s go_cpu py_cpu pixels
for spec in "$tmp"/*.json; do
	"$bin" topology solve --spec "$spec" --out "$tmp/go.npy" >"$tmp/go.txt"
	/usr/bin/python3 "$here/top88_ref.py" solve "$spec" --out "$tmp/py.npy" >"$tmp/py.txt"
	px=$(/usr/bin/python3 -c "import numpy as n,sys; print(int(((n.load(sys.argv[1])>0.5)!=(n.load(sys.argv[2])>0.5)).sum()))" "$tmp/go.npy" "$tmp/py.npy")
	val() { awk -v k="$1" '$1 == k {print $2}' "$2"; }
	printf '%-14s %14s %14s %8s %8s %8s %8s %7s\n' "$(basename "$spec" .json)" \
		"$(val compliance "$tmp/go.txt")" "$(val compliance "$tmp/py.txt")" \
		"$(val seconds "$tmp/go.txt")" "$(val seconds "$tmp/py.txt")" \
		"$(val cpu_seconds "$tmp/go.txt")" "$(val cpu_seconds "$tmp/py.txt")" "$px"
done | tee "$tmp/table"
awk '{g+=$4; p+=$5; gc+=$6; pc+=$7; n++} END{printf "total %d designs: wall go %.2f s, python %.2f s (python/go %.1f); cpu go %.2f s, python %.2f s (python/go %.1f)\n", n, g, p, p/g, gc, pc, pc/gc}' "$tmp/table"
