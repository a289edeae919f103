#!/bin/sh
# examples/per_file.sh: an objective for tlbo-native made of any program that
# scores one object given as a file:
#
#   tlbo-native optimize ... --objective 'command:examples/per_file.sh PROGRAM ARG...' --failure-score S
#
# For each request line {"id": ..., "object": ...} on standard input, the object
# is written to a file (with a final newline), PROGRAM ARG... FILE runs, and the
# last line of its output is the score: {"id": ..., "score": ...}. When PROGRAM
# fails or prints no number, the reply is {"id": ..., "error": ...} with its exit
# status and the last lines of its standard error. The object never reaches a
# command line: only the file's name does. Needs only sh, awk, sed and tail.
set -u
[ $# -ge 1 ] || {
	echo "usage: $0 PROGRAM [ARG...]" >&2
	exit 2
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

# json_field NAME: the value of the JSON string or number NAME in the line on
# standard input, with JSON's escapes undone.
json_field() {
	awk -v name="$1" '
	function hex(h,   i, v) {
		v = 0
		for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", tolower(substr(h, i, 1))) - 1
		return v
	}
	function utf8(c) { # the UTF-8 bytes of code point c (the BMP is enough for JSON escapes)
		if (c < 128) return sprintf("%c", c)
		if (c < 2048) return sprintf("%c%c", 192 + int(c / 64), 128 + c % 64)
		return sprintf("%c%c%c", 224 + int(c / 4096), 128 + int(c / 64) % 64, 128 + c % 64)
	}
	{
		key = "\"" name "\""
		p = index($0, key)
		if (p == 0) exit 1
		s = substr($0, p + length(key))
		sub(/^[ \t]*:[ \t]*/, "", s)
		if (substr(s, 1, 1) != "\"") { # a number
			match(s, /^[-+0-9.eE]+/)
			print substr(s, 1, RLENGTH)
			exit 0
		}
		out = ""
		for (i = 2; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == "\"") break
			if (c != "\\") { out = out c; continue }
			i++
			c = substr(s, i, 1)
			if (c == "n") out = out "\n"
			else if (c == "t") out = out "\t"
			else if (c == "r") out = out "\r"
			else if (c == "b") out = out "\b"
			else if (c == "f") out = out "\f"
			else if (c == "u") { out = out utf8(hex(substr(s, i + 1, 4))); i += 4 }
			else out = out c # \" \\ \/
		}
		print out
	}'
}

# json_string: standard input as the contents of a JSON string, on one line.
json_string() {
	tr '\n\t\r' '   ' | tr -d '\000-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g'
}

while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | json_field id) || continue
	printf '%s\n' "$line" | json_field object >"$tmp/object"
	if "$@" "$tmp/object" >"$tmp/out" 2>"$tmp/err"; then
		score=$(tail -n 1 "$tmp/out" | tr -d ' \t\r')
		case "$score" in
		'' | *[!-+0-9.eE]*)
			printf '{"id": %s, "error": "%s"}\n' "$id" "$(printf 'no number on the last output line: %s' "$score" | json_string)"
			;;
		*) printf '{"id": %s, "score": %s}\n' "$id" "$score" ;;
		esac
	else
		status=$?
		printf '{"id": %s, "error": "%s"}\n' "$id" "$(printf 'exit status %s: %s' "$status" "$(tail -n 3 "$tmp/err")" | json_string)"
	fi
done
