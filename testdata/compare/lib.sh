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
