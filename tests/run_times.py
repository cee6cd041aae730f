"""Each test file's seconds in a run, and which pytest-xdist worker ran it when: written as JSON where
``$JUPYTER_SCHED_FILE_SECONDS`` names (scripts/test-all sets it beside its stage logs), so a whole run shows where
its minutes went — per file, not only the 60 slowest phases ``--durations`` prints — and how evenly the workers
ended (``--dist loadfile`` hands whole files out; one long file taken last leaves the others idle)::

    {"tests/hub/test_x.py": {"seconds": 61.2, "worker": "gw1", "from_s": 1102.4, "to_s": 1163.9}, ...}

``seconds``: setup, call and teardown of the file's tests summed; ``from_s``/``to_s``: when its first test
began and its last report arrived, in seconds since the session began (on the xdist controller, which
receives every worker's reports; a serial run's worker is ``"-"``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["ENV_OUT", "FileSeconds"]

ENV_OUT = "JUPYTER_SCHED_FILE_SECONDS"


class FileSeconds:
    """Collects the reports of one session (module docstring); :meth:`write` writes them."""

    def __init__(self) -> None:
        self.began = time.time()
        self.files: dict[str, dict[str, Any]] = {}
        # taken out of the environment before any worker starts: no test, server or job it starts sees it
        # (jobs' and servers' environments are what some tests assert on)
        self.out = os.environ.pop(ENV_OUT, None)

    def add(self, report: Any) -> None:
        name = str(report.nodeid).split("::", 1)[0]
        now = time.time() - self.began
        duration = float(report.duration)
        node = getattr(report, "node", None)  # xdist's WorkerController, on the controller
        row = self.files.setdefault(name, {"seconds": 0.0, "worker": "-", "from_s": now - duration, "to_s": now})
        row["seconds"] += duration
        row["worker"] = str(getattr(getattr(node, "gateway", None), "id", "-"))
        row["from_s"] = min(row["from_s"], now - duration)
        row["to_s"] = max(row["to_s"], now)

    def write(self) -> None:
        """Write the JSON where ``$JUPYTER_SCHED_FILE_SECONDS`` says (nothing when unset); a path that cannot be
        written is said on stderr, never fails the run."""
        out = self.out
        if not out or not self.files:
            return
        rows = {name: {k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()}
                for name, row in sorted(self.files.items())}
        try:
            Path(out).write_text(json.dumps(rows, indent=0) + "\n")
        except OSError as exc:
            print(f"tests/run_times.py: could not write {out}: {exc}", file=sys.stderr)
