"""New user 17, N6: the idle warning's audit message (shown to admins in the panel's Audit log and
``GET audit``) said its deadline as raw ISO with microseconds (``released at
2026-12-04T13:51:35.376737Z unless activity resumes``) while the queue line of the same lease said
``13:51 UTC``. It is said by the one time formatter, with its date (a record is read later) and
its seconds.

Real parts: the service built by ``from_config``, a SQLite store, a real sleeping process as the
kernel, the simulated collector, the engine's idle ladder (windows of seconds, conftest).
"""

from __future__ import annotations

import re
from pathlib import Path

from jupyter_sched.model import parse_utc

from .conftest import Driver, make_service, sleeper
from .test_idle_reclamation import idle_records, kernels


def test_newuser17_n6_the_idle_warning_says_its_deadline_by_the_one_formatter(tmp_path: Path) -> None:
    svc = make_service(tmp_path)
    kernel = sleeper(tmp_path)
    svc.set_kernel_source(kernels(("k-ana", "idle", kernel.pid)))
    drive = Driver(svc)
    lease = svc.submit({"gpus": 1, "kernel_id": "k-ana"}, user="ana", kind="lease")
    # the audit record is read once it is written (polled with a deadline: CI hosts are slower)
    drive.run(lambda: [r["action"] for r in idle_records(svc, lease["id"])][:1] == ["idle_warning"],
              timeout_s=60, what="the idle warning")
    warning = idle_records(svc, lease["id"])[0]
    deadline = parse_utc(warning["details"]["deadline"], field="deadline")
    said = f"{deadline:%b} {deadline.day} {deadline:%H:%M:%S} UTC"  # "Dec 4 13:51:35 UTC"
    assert f"GPUs will be released at {said} unless activity resumes" in warning["message"], warning["message"]
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", warning["message"]), warning["message"]
