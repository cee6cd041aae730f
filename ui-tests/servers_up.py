"""Wait until each browser-test server answers as itself (ui-tests/servers.sh); exit 0 once all do.

Usage: ``python servers_up.py ROLE:PID:PORT:ROOT ...`` — ROOT is the server's root folder, which its
``/lab`` page names (``serverRoot`` of the page's ``jupyter-config-data``): an answer on PORT that does
not name it comes from another process that took the port before this server bound it.

Exit 0: every server answers with its own page. Exit 3: some server process ended before it answered
(its roles on stdout, one line, space-separated; the others are still waited for by the next call).
Exit 1: not all answered within :data:`WAIT_S` seconds (said on stderr).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import urllib.request
from pathlib import Path

WAIT_S = 120.0
"""Seconds to wait for the servers (as playwright.config.js's webServer timeout)."""
_CONFIG = re.compile(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', re.S)


def ended(pid: int) -> bool:
    """Whether process ``pid`` is gone (or a zombie not yet reaped by its parent)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return True
    return fields[0] in ("Z", "X")


def answers_as(port: int, root: str) -> bool:
    """Whether ``http://127.0.0.1:PORT/lab`` answers with the page of the server whose root folder is ``root``."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=5) as answer:
            if answer.status >= 400:
                return False
            page = answer.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return False
    found = _CONFIG.search(page)
    try:
        config = json.loads(found.group(1)) if found else {}
    except ValueError:
        return False
    named = config.get("serverRoot") if isinstance(config, dict) else None
    return isinstance(named, str) and os.path.realpath(named) == os.path.realpath(root)


def main(argv: list[str]) -> int:
    servers = {}
    for arg in argv:
        role, pid, port, root = arg.split(":", 3)
        servers[role] = (int(pid), int(port), root)
    waiting = set(servers)
    deadline = time.monotonic() + WAIT_S
    while waiting and time.monotonic() < deadline:
        gone = []
        for role in sorted(waiting):
            pid, port, root = servers[role]
            if answers_as(port, root):
                waiting.discard(role)
            elif ended(pid):
                gone.append(role)
        if gone:
            print(" ".join(gone))
            return 3
        if waiting:
            time.sleep(0.2)
    if waiting:
        print(f"ui-tests: test servers not up within {WAIT_S:.0f} s: "
              + ", ".join(f"{role} (port {servers[role][1]})" for role in sorted(waiting)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
