"""newuser36 n8: shortening a running job's limit answered "its executor stops it at the new limit" — not when,
and in a word the README never uses. The answer names the stop time (a wire time the reader's clock renders:
``jupyter-sched update``, ``%schedule``, the panel), how long until then and the limit from its start; a limit
already passed says "at once"."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from core_builders import T0, make_job, running

from jupyter_sched.admission import Caller
from jupyter_sched.model.units import shown_in
from jupyter_sched.services.job_update import _time_limit
from jupyter_sched.wording.jobs import changed_line


def _shortened(to: str, now_min: float) -> str:
    job = running(make_job("j-n8", user="ann", time_limit_s=1200), started=0.0)  # 20m, started at T0 (12:00 UTC)
    lines: list[str] = []
    record: Any = SimpleNamespace(executor="local")
    _time_limit(Caller(user="ann", teams=("default",)), record, job, "time_limit", to, (),
                T0 + timedelta(minutes=now_min), [], lines, None)
    (line,) = lines
    return line


def test_newuser36_n8nit_a_shortened_running_limit_says_when_it_stops() -> None:
    line = _shortened("10m", 6 + 8 / 60)  # 6m08s into its run
    assert line == "time limit 20m → 10m: it is stopped at 2025-03-30T12:10:00Z (in 3m52s), 10m after its start", line
    said = changed_line({"id": "j-n8", "name": "train", "changed": [line]}, T0 + timedelta(minutes=6))
    assert said == "j-n8 (train): time limit 20m → 10m: it is stopped at 12:10 UTC (in 3m52s), 10m after its start"
    with shown_in("Europe/Berlin"):  # the reader's zone, as the CLI sets it
        said = changed_line({"id": "j-n8", "changed": [line]}, T0 + timedelta(minutes=6))
    assert "stopped at 14:10 CEST" in said and "executor" not in said, said
    assert _shortened("5m", 6) == "time limit 20m → 5m: it has run 6m, so it is stopped at once"
