# Stage runner for scripts/test-all (sourced): every stage runs, failures are collected, and
# finish_stages prints one summary and exits 1 when any stage failed or could not run.
#
#   stage NAME [--needs OTHER]... [--failures ERE] -- COMMAND...
#       run COMMAND (a function or program) with `set -e` in a subshell; record ok / FAILED /
#       NOT RUN, its wall seconds and its CPU seconds (user + system of every process it ran);
#       never stops the caller. Its output goes to the terminal and to a log file; when it fails,
#       the summary repeats its last lines and every line matching ERE (e.g. pytest's
#       `FAILED tests/...::test - why` lines).
#   skipped NAME WHY                               record a stage left out on purpose
#   finish_stages START_SECONDS                    print the summary; exit 0 or 1
# (Functions only; the caller keeps `set -u -o pipefail` and must not use `set -e`.)
#
# CI keeps only the tail of a run's output, so everything needed to find a failure — which
# stage, which tests, the stage's last lines — is printed again in the summary at the very end.

declare -a SUMMARY=() PROBLEMS=() FAILED_STAGES=()
declare -A STATUS=() STAGE_LOG=() STAGE_FAILURES=()
STAGE_LOGS=$(mktemp -d "${TMPDIR:-/tmp}/test-all.XXXXXX")
FAILURE_TAIL_LINES=${FAILURE_TAIL_LINES:-15}    # last lines of a failed stage shown in the summary
FAILURE_MATCH_LINES=${FAILURE_MATCH_LINES:-40}  # most --failures lines shown per stage

log() { printf '\n== %s ==\n' "$*"; }

# stage NAME [--needs OTHER]... -- COMMAND...: run COMMAND (a function or program) with `set -e`
# in a subshell; record ok / FAILED / not run, with its seconds. Never stops the script.
stage() {
  local name=$1; shift
  local needs=() failures=""
  while :; do
    case "$1" in
      --needs) needs+=("$2"); shift 2 ;;
      --failures) failures=$2; shift 2 ;;
      *) break ;;
    esac
  done
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
  local t0=$SECONDS cpu0 rc tee_pid stage_log
  stage_log="$STAGE_LOGS/$(printf '%02d' "${#STAGE_LOG[@]}")-${name//[^A-Za-z0-9]/_}.log"
  STAGE_LOG[$name]=$stage_log
  STAGE_FAILURES[$name]=$failures
  children_cpu; cpu0=$CHILDREN_CPU
  # The stage runs in the foreground (Ctrl-C reaches it); its output is copied by a `tee` in a
  # process substitution rather than a pipe, so a server the stage left behind holding its
  # stdout cannot keep the run waiting for end-of-file.
  exec {STAGE_OUT}> >(tee "$stage_log")
  tee_pid=$!
  # The stage's CPU is read by `times` in a subshell of its own, which counts only the stage's
  # processes: this shell's own `times` also counts background stages that ended meanwhile (bash
  # reaps them when they end), which put the browser tests' CPU into the Python tests' figure.
  ( ( set -e; "$@" ); rc=$?; times > "$stage_log.cpu"; exit $rc ) >&"$STAGE_OUT" 2>&1 {STAGE_OUT}>&-
  rc=$?
  exec {STAGE_OUT}>&-
  # let tee write the stage's last lines before the next stage prints (at most ~5 s)
  for _ in $(seq 50); do kill -0 "$tee_pid" 2>/dev/null || break; sleep 0.1; done
  local took=$((SECONDS - t0)) cpu
  children_cpu; cpu=$(( (CHILDREN_CPU - cpu0 + 500) / 1000 ))
  if [ -s "$stage_log.cpu" ]; then
    cpu=$(awk 'NR == 2 { total = 0
      for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); total += p[1] * 60 + p[2] }
      printf "%d\n", total + 0.5 }' "$stage_log.cpu")
  fi
  if [ $rc -eq 0 ]; then
    STATUS[$name]=ok
    SUMMARY+=("$(printf '%-9s %5ss %5ss  %s' ok "$took" "$cpu" "$name")")
  else
    STATUS[$name]=failed
    PROBLEMS+=("$name (exit $rc)")
    FAILED_STAGES+=("$name")
    SUMMARY+=("$(printf '%-9s %5ss %5ss  %s (exit %d)' FAILED "$took" "$cpu" "$name" "$rc")")
  fi
}

# Sets CHILDREN_CPU to the milliseconds of CPU (user + system) used so far by this shell's
# finished children: the second line of bash's `times`, which must run in this shell (not in a
# $(...) subshell, whose children are none). A stage's difference is the CPU its processes used
# (those it waited for, which is all of them), whatever the machine's load: a busy machine
# stretches wall time, not CPU time, and an idle 2-core run needs at least CPU / 2 seconds.
# Milliseconds, rounded to seconds only for a stage's difference: two totals each rounded to
# whole seconds made a 1 s stage of `sleep` cost "1s" of CPU (CI on 9285eb2).
CPU_TIMES=$(mktemp)
children_cpu() {
  times > "$CPU_TIMES"
  CHILDREN_CPU=$(awk 'NR == 2 {
    total = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); total += p[1] * 60 + p[2] }
    printf "%d\n", total * 1000 + 0.5
  }' "$CPU_TIMES")
}

# background_stages NAME -- FUNCTION: run FUNCTION (which calls `stage` for each of its stages) in
# the background, beside the stages that follow; its stages' output goes to a file, not the
# terminal, so the foreground stage's lines are not interleaved with it. join_background_stages
# NAME waits for it, prints that output, and adds its stages to the summary in their order.
# Used for stages that mostly wait (the browser tests: ~40 % CPU) beside the Python tests
# (~65 % CPU) on CI's 2 cores. Each stage's CPU is still its own: `times` in the background
# subshell counts only that subshell's children.
declare -A BACKGROUND_PID=() BACKGROUND_OUT=()
background_stages() {
  local name=$1; shift
  [ "$1" = -- ] && shift
  local out="$STAGE_LOGS/background-${name//[^A-Za-z0-9]/_}"
  BACKGROUND_OUT[$name]=$out
  log "$name: started in the background (its output is printed when it ends)"
  (
    SUMMARY=() PROBLEMS=() FAILED_STAGES=()
    "$@"
    # hand the results back to the parent shell, which sources this file when it joins
    { for line in "${SUMMARY[@]}"; do printf 'SUMMARY+=(%q)\n' "$line"; done
      for line in "${PROBLEMS[@]}"; do printf 'PROBLEMS+=(%q)\n' "$line"; done
      for line in "${FAILED_STAGES[@]}"; do printf 'FAILED_STAGES+=(%q)\n' "$line"; done
      for key in "${!STATUS[@]}"; do printf 'STATUS[%q]=%q\n' "$key" "${STATUS[$key]}"; done
      for key in "${!STAGE_LOG[@]}"; do printf 'STAGE_LOG[%q]=%q\n' "$key" "${STAGE_LOG[$key]}"; done
      for key in "${!STAGE_FAILURES[@]}"; do printf 'STAGE_FAILURES[%q]=%q\n' "$key" "${STAGE_FAILURES[$key]}"; done
    } > "$out.results"
  ) > "$out.log" 2>&1 &
  BACKGROUND_PID[$name]=$!
}

join_background_stages() {  # join_background_stages NAME
  local name=$1 out=${BACKGROUND_OUT[$1]}
  local t0=$SECONDS
  wait "${BACKGROUND_PID[$name]}"
  log "$name: background stages ended (waited $((SECONDS - t0)) s for them); their output follows"
  cat "$out.log"
  if [ ! -s "$out.results" ]; then
    PROBLEMS+=("$name (the background stages ended without results)")
    SUMMARY+=("$(printf '%-9s %6s %6s  %s' FAILED '-' '-' "$name (no results)")")
    return
  fi
  # appends its stages to SUMMARY/PROBLEMS/FAILED_STAGES and sets their STATUS/STAGE_LOG entries
  # shellcheck disable=SC1090
  source "$out.results"
}

skipped() {  # skipped NAME WHY
  STATUS[$1]=skipped
  SUMMARY+=("$(printf '%-9s %6s %6s  %s (%s)' skipped '-' '-' "$1" "$2")")
  log "$1: skipped ($2)"
}

# Prints lines of a log without colour codes, each cut to 240 characters (a summary stays short).
plain_lines() { sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/\r$//' | cut -c1-240; }

# For each failed stage: the lines matching its --failures pattern, then its last lines.
failure_details() {
  local name stage_log pattern matches
  for name in "${FAILED_STAGES[@]}"; do
    stage_log=${STAGE_LOG[$name]}
    pattern=${STAGE_FAILURES[$name]}
    printf -- '--- %s failed; its log: %s\n' "$name" "$stage_log"
    if [ -n "$pattern" ]; then
      matches=$(plain_lines < "$stage_log" | grep -E -- "$pattern" || true)
      if [ -n "$matches" ]; then
        printf '%s\n' "$matches" | head -n "$FAILURE_MATCH_LINES"
        local count
        count=$(printf '%s\n' "$matches" | wc -l)
        [ "$count" -le "$FAILURE_MATCH_LINES" ] || echo "... and $((count - FAILURE_MATCH_LINES)) more (see the log)"
      fi
    fi
    printf -- '--- %s: its last %d lines\n' "$name" "$FAILURE_TAIL_LINES"
    tail -n "$FAILURE_TAIL_LINES" "$stage_log" | plain_lines
  done
}

finish_stages() {
  local started=${1:-0}
  children_cpu
  rm -f "$CPU_TIMES"
  log "summary ($((SECONDS - started)) s wall, $(( (CHILDREN_CPU + 500) / 1000 )) s CPU)"
  [ ${#FAILED_STAGES[@]} -eq 0 ] || failure_details
  printf '%-9s %6s %6s  %s\n' result wall cpu stage
  printf '%s\n' "${SUMMARY[@]}"
  if [ ${#PROBLEMS[@]} -ne 0 ]; then
    local joined
    joined=$(printf '%s; ' "${PROBLEMS[@]}")
    echo "test-all: FAILED: ${joined%; }"
    exit 1
  fi
  rm -rf "$STAGE_LOGS"
  echo "test-all: all stages passed"
}
