#!/bin/sh
# Interleaved training-step timing of the authors' JT-VAE and models/jtvae on
# the same molecules, one thread each:
#   testdata/jtvae/compare.sh CHECKOUT [ROUNDS] [FILE]
# CHECKOUT is a weighted-retraining checkout (see make_fixture.py). FILE is
# bench32.npz (default: 32 ZINC molecules, our BenchmarkTrainStep) or
# bench128.npz (128 distinct molecules, a T-LBO retraining batch, our
# BenchmarkStepDistinct128). Each round times 2 reference steps and 3 of ours
# (one step on bench128.npz); the last lines are the medians of the rounds,
# wall and CPU time (CPU time is steadier beside other jobs), and their
# ratios. Neither side times the batching of the molecules into tensors
# outside the step: theirs runs before the timed step, ours (Collate) is in it.
set -eu
checkout=$1
rounds=${2:-3}
file=${3:-bench32.npz}
case $file in
bench32.npz) bench=TrainStep steps=3 ;;
bench128.npz) bench=StepDistinct128 steps=1 ;;
*) echo "compare.sh: FILE must be bench32.npz or bench128.npz, got $file" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
cd "$here/../.."
go test -c -o /tmp/jtvae_bench.test ./models/jtvae
ref=""; ours=""; refcpu=""; ourscpu=""
for r in $(seq "$rounds"); do
	/usr/bin/python3 "$here/make_fixture.py" "$checkout" --bench 2 --bench-file "$file" >/tmp/jtvae_ref.out
	cat /tmp/jtvae_ref.out >&2
	ms=$(awk '/^ref_step_ms/ {print $2}' /tmp/jtvae_ref.out)
	cms=$(awk '/^ref_step_cpu_ms/ {print $2}' /tmp/jtvae_ref.out)
	ref="$ref $ms"; refcpu="$refcpu $cms"
	(cd models/jtvae && /tmp/jtvae_bench.test -test.run XXX -test.bench "$bench\$" -test.benchtime ${steps}x) >/tmp/jtvae_bench.out
	cat /tmp/jtvae_bench.out >&2
	ns=$(awk -v b="Benchmark$bench" 'index($1, b) == 1 {print $3}' /tmp/jtvae_bench.out)
	ocms=$(awk -v b="Benchmark$bench" 'index($1, b) == 1 {for (i = 4; i < NF; i++) if ($(i+1) == "cpu_ms") print $i}' /tmp/jtvae_bench.out)
	oms=$(echo "$ns" | awk '{printf "%.1f", $1/1e6}')
	ours="$ours $oms"; ourscpu="$ourscpu $ocms"
	echo "round $r: reference $ms ms ($cms CPU), ours $oms ms ($ocms CPU)" >&2
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
r=$(echo "$ref" | median); o=$(echo "$ours" | median)
rc=$(echo "$refcpu" | median); oc=$(echo "$ourscpu" | median)
echo "reference_step_ms $r"
echo "jtvae_step_ms $o"
echo "speedup $(echo "$r $o" | awk '{printf "%.1f", $1/$2}')"
echo "reference_step_cpu_ms $rc"
echo "jtvae_step_cpu_ms $oc"
echo "cpu_ratio $(echo "$oc $rc" | awk '{printf "%.3f", $1/$2}')"
