#!/usr/bin/env bash
# Browser tests of the jupyter_sched JupyterLab panel (Galata + Playwright in Debian's Chromium).
#
# Installs what it needs (Debian's chromium, the npm packages of ui-tests/ with `npm ci`), builds
# the wheel and serves the labextension FROM THE WHEEL (its share/jupyter/labextensions files are
# put first on JUPYTER_PATH), starts three JupyterLab servers on free ports side by side (admin, non-admin, and a fresh admin one for the
# screenshots and accessibility scans; see jupyter_server_test_config.py and servers.sh) and runs the tests. Screenshots are compared with the committed
# baselines in ui-tests/tests/*-snapshots/ (`bash ui-tests/run.sh --update-snapshots` rewrites them).
#
# Usage (from anywhere):  bash ui-tests/run.sh [playwright args...]
# Environment:
#   JUPYTER_SCHED_VENV     Python venv with jupyter_sched installed (default: <repo>/.venv)
#   SCHED_WHEEL            use this already built wheel instead of building one
#   SCHED_UI_LABEXTENSION  development only: serve this built labextension directory
#                          (e.g. jupyter_sched/labextension after `jlpm build:prod`) instead of a wheel
#   SCHED_UI_NO_NPM_CI     keep the installed node_modules (skip `npm ci`): for development, and
#                          for scripts/test-all, which runs `npm ci` here while the frontend unit
#                          tests run
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
VENV="${JUPYTER_SCHED_VENV:-$ROOT/.venv}"
export PATH="$VENV/bin:$PATH"
EXT_NAME="@jupyter-sched/labextension"

log() { printf '\n== ui-tests: %s ==\n' "$*"; }

log "chromium"
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/sched-ui.XXXXXX")"
SERVER_PIDS=()  # the servers' (ui-tests/servers.sh), each its own process group
cleanup() {
  # each test server runs in its own process group (setsid), with its kernels and jobs
  for pid in "${SERVER_PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${SERVER_PIDS[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
SHARE="$WORK/jupyter-path/labextensions"
mkdir -p "$SHARE/@jupyter-sched"

if [ -n "${SCHED_UI_LABEXTENSION:-}" ]; then
  log "labextension from $SCHED_UI_LABEXTENSION (development)"
  cp -r "$SCHED_UI_LABEXTENSION" "$SHARE/$EXT_NAME"
  cp "$ROOT/install.json" "$SHARE/$EXT_NAME/install.json"
else
  WHEEL="${SCHED_WHEEL:-}"
  if [ -z "$WHEEL" ]; then
    log "wheel"
    if "$VENV/bin/python" -c "import hatchling, hatch_jupyter_builder" 2>/dev/null; then
      "$VENV/bin/python" -m pip wheel -q --no-deps --no-build-isolation -w "$WORK/dist" "$ROOT"
    else
      "$VENV/bin/python" -m pip wheel -q --no-deps -w "$WORK/dist" "$ROOT"
    fi
    WHEEL="$(ls "$WORK"/dist/jupyter_sched-*.whl)"
  fi
  log "labextension from $(basename "$WHEEL")"
  "$VENV/bin/python" - "$WHEEL" "$WORK/jupyter-path" "$EXT_NAME" <<'PY'
import os
import sys
import zipfile

wheel, dest, name = sys.argv[1:4]
marker = f".data/data/share/jupyter/labextensions/{name}/"
with zipfile.ZipFile(wheel) as zf:
    members = [m for m in zf.namelist() if marker in m]
    if not any(m.endswith("/package.json") and m.count("/") == marker.count("/") for m in members):
        sys.exit(f"{wheel} ships no prebuilt {name} (share/jupyter/labextensions/{name}/package.json): "
                 "apply the labextension build hook and shared-data lines to pyproject.toml")
    for m in members:
        target = f"{dest}/labextensions/{name}/" + m.split(marker, 1)[1]
        if not m.endswith("/"):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with zf.open(m) as src, open(target, "wb") as out:
                out.write(src.read())
PY
fi
# our copy first: it wins over any other copy of the extension (e.g. an editable install's)
export JUPYTER_PATH="$WORK/jupyter-path${JUPYTER_PATH:+:$JUPYTER_PATH}"
# no user config or settings leak into the test servers
export JUPYTER_CONFIG_DIR="$WORK/config" JUPYTER_DATA_DIR="$WORK/data" JUPYTER_RUNTIME_DIR="$WORK/runtime"
mkdir -p "$JUPYTER_CONFIG_DIR" "$JUPYTER_DATA_DIR" "$JUPYTER_RUNTIME_DIR"
jupyter labextension list 2>&1 | grep -F "$EXT_NAME" || { echo "the test server would not see $EXT_NAME"; exit 1; }

log "npm packages"
cd "$HERE"
if [ -z "${SCHED_UI_NO_NPM_CI:-}" ] || [ ! -d node_modules/@jupyterlab/galata ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi

log "browser tests"
export SCHED_UI_STATE="$WORK/state"
mkdir -p "$SCHED_UI_STATE"
# The three servers start side by side (Playwright's webServer entries start one after the other:
# ~5 s each on an idle 2-core machine, 15-18 s each on a loaded one); playwright.config.js then
# starts none. Each is started again on another port if its port was taken before it bound it
# (ui-tests/servers.sh). Their stderr goes to this output, as Playwright's [WebServer] lines did.
# shellcheck source=ui-tests/servers.sh
source "$HERE/servers.sh"
start_servers admin user visual
export SCHED_UI_PORT=${PORT_OF[admin]} SCHED_UI_PORT_USER=${PORT_OF[user]} SCHED_UI_PORT_VISUAL=${PORT_OF[visual]}
SCHED_UI_SERVERS_STARTED=1 npx playwright test "$@"
