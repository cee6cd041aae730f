# Stage runner for scripts/test-all (sourced): every stage runs, failures are collected, and
# finish_stages prints one summary and exits 1 when any stage failed or could not run.
#
#   stage NAME [--needs OTHER]... -- COMMAND...   run COMMAND (a function or program) with `set -e`
#                                                  in a subshell; record ok / FAILED / NOT RUN, its
#                                                  wall seconds and its CPU seconds (user + system
#                                                  of every process it ran); never stops the caller
#   skipped NAME WHY                               record a stage left out on purpose
#   finish_stages START_SECONDS                    print the summary; exit 0 or 1
# (Functions only; the caller keeps `set -u -o pipefail` and must not use `set -e`.)

declare -a SUMMARY=() PROBLEMS=()
declare -A STATUS=()

log() { printf '\n== %s ==\n' "$*"; }

# stage NAME [--needs OTHER]... -- COMMAND...: run COMMAND (a function or program) with `set -e`
# in a subshell; record ok / FAILED / not run, with its seconds. Never stops the script.
stage() {
  local name=$1; shift
  local needs=()
  while [ "$1" = --needs ]; do needs+=("$2"); shift 2; done
  [ "$1" = -- ] && shift
  for dep in "${needs[@]}"; do
    if [ "${STATUS[$dep]:-}" != ok ]; then
      STATUS[$name]="not run"
      PROBLEMS+=("$name (not run: needs $dep)")
      SUMMARY+=("$(printf '%-9s %6s %6s  %s (needs: %s)' 'NOT RUN' '-' '-' "$name" "$dep")")
      log "$name: not run ($dep did not pass)"
      return
    fi
  done
  log "$name"
  local t0=$SECONDS cpu0 rc
  children_cpu; cpu0=$CHILDREN_CPU
  ( set -e; "$@" )
  rc=$?
  local took=$((SECONDS - t0)) cpu
  children_cpu; cpu=$((CHILDREN_CPU - cpu0))
  if [ $rc -eq 0 ]; then
    STATUS[$name]=ok
    SUMMARY+=("$(printf '%-9s %5ss %5ss  %s' ok "$took" "$cpu" "$name")")
  else
    STATUS[$name]=failed
    PROBLEMS+=("$name (exit $rc)")
    SUMMARY+=("$(printf '%-9s %5ss %5ss  %s (exit %d)' FAILED "$took" "$cpu" "$name" "$rc")")
  fi
}

# Sets CHILDREN_CPU to the whole seconds of CPU (user + system) used so far by this shell's
# finished children: the second line of bash's `times`, which must run in this shell (not in a
# $(...) subshell, whose children are none). A stage's difference is the CPU its processes used
# (those it waited for, which is all of them), whatever the machine's load: a busy machine
# stretches wall time, not CPU time, and an idle 2-core run needs at least CPU / 2 seconds.
CPU_TIMES=$(mktemp)
children_cpu() {
  times > "$CPU_TIMES"
  CHILDREN_CPU=$(awk 'NR == 2 {
    total = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); total += p[1] * 60 + p[2] }
    printf "%d\n", total + 0.5
  }' "$CPU_TIMES")
}

skipped() {  # skipped NAME WHY
  STATUS[$1]=skipped
  SUMMARY+=("$(printf '%-9s %6s %6s  %s (%s)' skipped '-' '-' "$1" "$2")")
  log "$1: skipped ($2)"
}

finish_stages() {
  local started=${1:-0}
  children_cpu
  rm -f "$CPU_TIMES"
  log "summary ($((SECONDS - started)) s wall, $CHILDREN_CPU s CPU)"
  printf '%-9s %6s %6s  %s\n' result wall cpu stage
  printf '%s\n' "${SUMMARY[@]}"
  if [ ${#PROBLEMS[@]} -ne 0 ]; then
    local joined
    joined=$(printf '%s; ' "${PROBLEMS[@]}")
    echo "test-all: FAILED: ${joined%; }"
    exit 1
  fi
  echo "test-all: all stages passed"
}
