#!/bin/sh
# Interleaved timing of greedy decoding of 100 prior samples, the authors'
# JTNNVAE.decode against internal/task/molecule's Decoder, one thread each:
#   testdata/jtvae/compare_decode.sh CHECKOUT WEIGHTS [ROUNDS]
# CHECKOUT is a weighted-retraining checkout (see make_fixture.py); WEIGHTS a
# checkpoint of ours (FILE.pt with FILE.json; Python reads the .pt as a state
# dict) or the authors' state dict. Each round decodes the same 100 points
# (make_decode_fixture.py --time, seed 3) with theirs, then with ours
# (BenchmarkDecodePrior, one worker, can_assemble cache emptied). The last
# lines are the medians of wall time, our split (tree decoding, assembly),
# the ratio, and the ratio of the medians of CPU time (the processes' own
# while decoding: steadier than wall time on a loaded machine), then the
# median of the rounds' own ratios (each round's two runs side by side, so
# that a slow stretch of a shared machine falls on both).
set -eu
checkout=$1
weights=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/jtvae_decode_cmp
mkdir -p "$out"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
cd "$here/../.."
go test -c -o "$out/molecule.test" ./internal/task/molecule
ref=""; ours=""; tree=""; assm=""; refc=""; oursc=""; paired=""
for r in $(seq "$rounds"); do
	/usr/bin/python3 "$here/make_decode_fixture.py" "$checkout" --weights "$weights" --time 100 --seed 3 --out "$out" >"$out/ref.out"
	s=$(awk '/^ref_decode_s/ {print $2}' "$out/ref.out")
	ref="$ref $s"
	sc=$(awk '/^ref_decode_cpu_s/ {print $2}' "$out/ref.out")
	refc="$refc $sc"
	(cd internal/task/molecule && TLBO_DECODE_VAE="$weights" TLBO_DECODE_Z="$out/time_z.npy" \
		"$out/molecule.test" -test.run XXX -test.bench DecodePrior -test.benchtime 1x) >"$out/ours.out"
	line=$(grep '^BenchmarkDecodePrior' "$out/ours.out")
	o=$(echo "$line" | awk '{printf "%.2f", $3/1e9}')
	t=$(echo "$line" | awk '{for (i=1;i<NF;i++) if ($(i+1)=="tree_s/op") print $i}')
	a=$(echo "$line" | awk '{for (i=1;i<NF;i++) if ($(i+1)=="assembly_s/op") print $i}')
	c=$(echo "$line" | awk '{for (i=1;i<NF;i++) if ($(i+1)=="cpu_s/op") print $i}')
	ours="$ours $o"; tree="$tree $t"; assm="$assm $a"; oursc="$oursc $c"
	paired="$paired $(echo "$s $o" | awk '{printf "%.3f", $1/$2}')"
	echo "round $r: reference $s s ($sc s CPU), ours $o s ($c s CPU; tree $t s, assembly $a s)" >&2
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
r=$(echo "$ref" | median); o=$(echo "$ours" | median)
echo "reference_decode100_s $r"
echo "ours_decode100_s $o (tree $(echo "$tree" | median) s, assembly $(echo "$assm" | median) s)"
echo "speedup $(echo "$r $o" | awk '{printf "%.1f", $1/$2}')"
rc=$(echo "$refc" | median); oc=$(echo "$oursc" | median)
echo "cpu_speedup $(echo "$rc $oc" | awk '{printf "%.1f", $1/$2}') (reference $rc s, ours $oc s CPU)"
echo "paired_speedup $(echo "$paired" | median) (rounds:$paired)"
