# Sourced by the scripts that set a reference implementation's numbers beside
# ours (testdata/chem/compare_plogp.sh, testdata/expression/compare_score.sh,
# testdata/objectives/compare_guacamol.sh).

compare_dir=$(cd "$(dirname "${0}")/../compare" && pwd)

# compare_setup NAME INPUT: sets out to the scratch directory
# ${TMPDIR:-/tmp}/NAME and writes $out/in.txt, INPUT without its blank lines
# (left out on both sides: ours would score a blank line, the references skip it).
compare_setup() {
	out=${TMPDIR:-/tmp}/$1
	mkdir -p "$out"
	grep -v '^[[:space:]]*$' "$2" >"$out/in.txt" || true
}

# compare_lines [NAME]: the tab-separated LABEL, REFERENCE, OURS lines on
# stdin through relcompare.awk (NAME prefixes its lines).
compare_lines() {
	awk -f "$compare_dir/relcompare.awk" -v name="${1:-}"
}

# compare_objectives REF_TSV BIN: for each objective column of REF_TSV (a
# header line "smiles<TAB>NAME..." then a line per molecule of $out/in.txt,
# as check_guacamol.py and check_tdc.py write it), scores $out/in.txt with
# `BIN score molecule --objective NAME` and compares the column with ours
# (compare_lines NAME), all into $out/report.txt.
compare_objectives() {
	col=2
	for n in $(head -1 "$1" | cut -f2- | tr '\t' ' '); do
		# ours: SMILES, score and, for a failure, its reason, tab-separated (exit status 1 then)
		"$2" score molecule --objective "$n" <"$out/in.txt" 2>/dev/null | cut -f2 >"$out/ours-$n.txt" || true
		tail -n +2 "$1" | cut -f1,$col | paste - "$out/ours-$n.txt" | compare_lines "$n"
		col=$((col + 1))
	done >"$out/report.txt"
}
