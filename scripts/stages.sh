# Stage runner for scripts/test-all (sourced): every stage runs, failures are collected, and
# finish_stages prints one summary and exits 1 when any stage failed or could not run.
#
#   stage NAME [--needs OTHER]... -- COMMAND...   run COMMAND (a function or program) with `set -e`
#                                                  in a subshell; record ok / FAILED / NOT RUN and
#                                                  its seconds; never stops the caller
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
      SUMMARY+=("$(printf '%-9s %5s  %s (needs: %s)' 'NOT RUN' '-' "$name" "$dep")")
      log "$name: not run ($dep did not pass)"
      return
    fi
  done
  log "$name"
  local t0=$SECONDS rc
  ( set -e; "$@" )
  rc=$?
  local took=$((SECONDS - t0))
  if [ $rc -eq 0 ]; then
    STATUS[$name]=ok
    SUMMARY+=("$(printf '%-9s %4ss  %s' ok "$took" "$name")")
  else
    STATUS[$name]=failed
    PROBLEMS+=("$name (exit $rc)")
    SUMMARY+=("$(printf '%-9s %4ss  %s (exit %d)' FAILED "$took" "$name" "$rc")")
  fi
}

skipped() {  # skipped NAME WHY
  STATUS[$1]=skipped
  SUMMARY+=("$(printf '%-9s %5s  %s (%s)' skipped '-' "$1" "$2")")
  log "$1: skipped ($2)"
}

finish_stages() {
  local started=${1:-0}
  log "summary ($((SECONDS - started)) s)"
  printf '%s\n' "${SUMMARY[@]}"
  if [ ${#PROBLEMS[@]} -ne 0 ]; then
    local joined
    joined=$(printf '%s; ' "${PROBLEMS[@]}")
    echo "test-all: FAILED: ${joined%; }"
    exit 1
  fi
  echo "test-all: all stages passed"
}
