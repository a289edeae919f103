# relcompare.awk: compares the reference's numbers with ours, line by line.
# Input: tab-separated lines LABEL, REFERENCE, OURS. Prints every line whose
# values differ by more than tol relative (default 1e-9; relative to the
# larger magnitude) or where exactly one side is NaN, as
# "[name<TAB>]LABEL<TAB>theirs REF<TAB>ours OURS", then one summary line.
# Set name (a prefix of every line, e.g. the objective) with -v name=...
# Called through compare_lines of testdata/compare/lib.sh.
BEGIN { FS = "\t"; if (tol == "") tol = 1e-9; prefix = name == "" ? "" : name "\t" }
function abs(x) { return x < 0 ? -x : x }
function isnan(x) { return tolower(x) ~ /^[+-]?nan$/ }
{
	rows++
	if (isnan($2) || isnan($3)) {
		if (!(isnan($2) && isnan($3))) { nan++; printf "%s%s\ttheirs %s\tours %s\n", prefix, $1, $2, $3 }
		next
	}
	d = abs($2 - $3); s = abs($2) > abs($3) ? abs($2) : abs($3); r = s > 0 ? d / s : 0
	if (r > worst) worst = r
	if (r > tol) { bad++; printf "%s%s\ttheirs %s\tours %s\n", prefix, $1, $2, $3 }
}
END {
	printf "%s%d rows, largest relative difference %.2g, over %g: %d, NaN on one side: %d\n", \
		name == "" ? "" : sprintf("%-26s ", name), rows, worst, tol, bad + 0, nan + 0
}
