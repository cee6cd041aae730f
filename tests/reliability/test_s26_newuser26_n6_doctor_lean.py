"""newuser26 N6: ``jupyter-sched doctor`` took 2.7 s of CPU, 90 % of it importing jupyter_server — its look
for a hub service on this host (``cli/doctor._hub_service_here``) imported ``jupyter_sched.extension``, whose
``__init__`` loaded the server app. The host registry it reads now imports without jupyter_server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from jupyter_sched.store import Store, sqlite_url

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import atexit, sys
atexit.register(lambda: print("heavy:", sorted(m for m in ("jupyter_server", "tornado", "jupyter_events")
                                              if m in sys.modules), file=sys.stderr))
from jupyter_sched.cli.main import main
sys.exit(main(["doctor"]))
"""


def test_newuser26_n6_doctor_of_the_embedded_default_store_imports_no_jupyter_server(tmp_path: Path) -> None:
    Store(sqlite_url(tmp_path / ".local" / "share" / "jupyter" / "jupyter_sched" / "sched.sqlite")).close()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
    clean.update({"HOME": str(tmp_path), "PYTHONPATH": str(ROOT)})
    run = subprocess.run([sys.executable, "-c", PROBE], env=clean, capture_output=True, text=True, timeout=120)
    assert "no quarantined rows: every row read" in run.stdout, run  # it did check the store
    assert "heavy: []" in run.stderr, run.stderr
