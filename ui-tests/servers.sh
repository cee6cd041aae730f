# The browser tests' JupyterLab servers, sourced by ui-tests/run.sh (bash): each on a free port, each
# started again on another port when the one it was given was taken before it bound it.
#
# A port found free is free only until someone binds it: jupyter_server binds its port once its event
# loop runs, seconds after it started (extensions load first; 15-18 s on a loaded 2-core machine), and
# in those seconds another process may take it — a parallel test run's server, or, for a port of the
# kernel's ephemeral range, any outgoing connection. The server then exits ("port N is not available"),
# and another process answers on its port. So the ports come from outside the ephemeral range
# (tests/ports.py), a server counts as up only when its own page answers (servers_up.py: the page names
# this run's root folder of that server), and one that ended before that starts again on another port.
#
# Needs: VENV (the venv), ROOT (the repository), HERE (ui-tests/, the working folder), SCHED_UI_STATE.
# Fills: PORT_OF[role] (its port once up), SERVER_PIDS (one per role, each its own process group: the
# caller's clean-up ends them).
#
#   start_servers admin user visual   # 0 once all answer; 1 (said why) otherwise

SERVER_STARTS=5  # starts per server at most: the first, and one after each port taken meanwhile
declare -A PORT_OF=() PID_OF=()
SERVER_PIDS=()

ui_free_port() {  # a free loopback port outside the kernel's ephemeral range (tests/ports.py)
  "$VENV/bin/python" -c '
import importlib.util, sys
spec = importlib.util.spec_from_file_location("ports", sys.argv[1] + "/tests/ports.py")
ports = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ports)
print(ports.free_port())' "$ROOT"
}

start_server() {  # start_server ROLE: jupyter lab of ROLE on a new free port, in a process group of its own
  local role=$1 port
  port=$(ui_free_port)
  # stderr goes to this output, each line marked with its server (as Playwright's [WebServer] lines were)
  SCHED_UI_STATE=$SCHED_UI_STATE SCHED_UI_ROLE=$role SCHED_UI_PORT=$port setsid jupyter lab --config "$HERE/jupyter_server_test_config.py" \
    > /dev/null 2> >(sed -u "s/^/[WebServer $role] /" >&2) &
  PID_OF[$role]=$! PORT_OF[$role]=$port
  SERVER_PIDS=("${PID_OF[@]}")  # not the one it replaces: its group is gone, its number free for another
}

start_servers() {  # start_servers ROLE...: start them side by side, then wait until each answers as itself
  local role ended starts=1 checks=()
  for role in "$@"; do start_server "$role"; done
  while :; do
    checks=()
    for role in "$@"; do checks+=("$role:${PID_OF[$role]}:${PORT_OF[$role]}:$SCHED_UI_STATE/root-$role"); done
    if ended=$("$VENV/bin/python" "$HERE/servers_up.py" "${checks[@]}"); then
      return 0
    fi
    [ -n "$ended" ] || return 1  # not up in time: servers_up.py said so
    if [ "$starts" -ge "$SERVER_STARTS" ]; then
      echo "ui-tests: the $ended server(s) ended before answering, $SERVER_STARTS times (see its [WebServer] lines)" >&2
      return 1
    fi
    starts=$((starts + 1))
    for role in $ended; do
      echo "ui-tests: the $role server ended before answering (port ${PORT_OF[$role]} taken meanwhile?): starting it again on another port" >&2
      start_server "$role"
    done
  done
}
