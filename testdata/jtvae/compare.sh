#!/bin/sh
# Interleaved training-step timing of the authors' JT-VAE and models/jtvae on
# the same 32 molecules (testdata/jtvae/bench32.npz), one thread each:
#   testdata/jtvae/compare.sh CHECKOUT [ROUNDS]
# CHECKOUT is a weighted-retraining checkout (see make_fixture.py). Each round
# times 2 reference steps and 3 of ours; the last line is the ratio of medians.
set -eu
checkout=$1
rounds=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
cd "$here/../.."
go test -c -o /tmp/jtvae_bench.test ./models/jtvae
ref=""; ours=""
for r in $(seq "$rounds"); do
	/usr/bin/python3 "$here/make_fixture.py" "$checkout" --bench 2 >/tmp/jtvae_ref.out
	cat /tmp/jtvae_ref.out >&2
	ms=$(awk '/^ref_step_ms/ {print $2}' /tmp/jtvae_ref.out)
	ref="$ref $ms"
	(cd models/jtvae && /tmp/jtvae_bench.test -test.run XXX -test.bench TrainStep -test.benchtime 3x) >/tmp/jtvae_bench.out
	cat /tmp/jtvae_bench.out >&2
	ns=$(awk '/^BenchmarkTrainStep/ {print $3}' /tmp/jtvae_bench.out)
	ours="$ours $(echo "$ns" | awk '{printf "%.1f", $1/1e6}')"
	echo "round $r: reference $ms ms, ours $(echo "$ns" | awk '{printf "%.1f", $1/1e6}') ms" >&2
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
r=$(echo "$ref" | median); o=$(echo "$ours" | median)
echo "reference_step_ms $r"
echo "jtvae_step_ms $o"
echo "speedup $(echo "$r $o" | awk '{printf "%.1f", $1/$2}')"
