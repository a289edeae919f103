# Sourced by run.sh and pmo.sh: one resumable optimize run of a benchmark.
#
# run_once DIR DONE LABEL CMD...
#   Runs CMD (an `optimize --resume --run-dir DIR ...`), its output appended to
#   DIR.log, unless DIR.done holds DONE (finished with this budget; a larger one
#   resumes it), and writes DONE to DIR.done when it succeeds. Says on stdout
#   how it went: LABEL with the wall seconds and the best score; or that another
#   process holds DIR (optimize exits 75 when its run-directory lock refuses it:
#   another copy of the script runs it, so this one goes on, and a later pass
#   finds the run finished or resumes it); or, on stderr, that it failed.
#   Either way the caller goes on to its next run.
run_once() {
  local dir=$1 done=$2 label=$3 start status=0
  shift 3
  if [ "$(cat "$dir.done" 2>/dev/null)" = "$done" ]; then
    return 0
  fi
  start=$(date +%s)
  "$@" >>"$dir.log" 2>&1 || status=$?
  case $status in
  0)
    echo "$done" >"$dir.done"
    echo "$label: $(($(date +%s) - start))s, $(grep '^best score' "$dir.log" | tail -1)"
    ;;
  75) echo "$label: skipped, another process runs it ($(tail -n 1 "$dir.log"))" ;;
  *) echo "$label: FAILED (exit status $status), see $dir.log" >&2 ;;
  esac
}

# resume_flag DIR: --resume when DIR holds a run (optimize refuses --resume on a
# directory that holds none), nothing otherwise.
resume_flag() {
  if [ -f "$1/config.json" ] || [ -f "$1/journal.jsonl" ]; then echo --resume; fi
}
