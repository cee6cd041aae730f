"""newuser25 N11: a dry run's ``text.eta`` (and its ``text.line``) dropped the year of an ETA a year
away: "ETA Dec 6 17:47 UTC" for 2027-12-06 reads as tomorrow, while the CLI's own rendering said
"Dec 6 2027 17:47 UTC". The server's texts use the one formatter (:func:`clock_text`) with the
service clock's time as the year's reference (:func:`dated_from`); near ETAs keep their date form."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model.units import clock_text, dated_from
from jupyter_sched.store import Store, sqlite_url
from tests import leftovers
from tests.runtime.builders import T0
from tests.runtime.test_local_executor import wait_until


def test_newuser25_n11_clock_text_without_a_clock_says_a_far_year_inside_dated_from() -> None:
    far, near = T0 + timedelta(days=366), T0 + timedelta(days=2)
    assert clock_text(far, None) == f"{far:%b} {far.day} {far:%H:%M} UTC"  # no reference: as before
    with dated_from(T0):
        assert clock_text(far, None) == f"{far:%b} {far.day} {far.year} {far:%H:%M} UTC"
        assert clock_text(near, None) == f"{near:%b} {near.day} {near:%H:%M} UTC"
    assert clock_text(far, None) == clock_text(far, None, zone=None)  # reset on leaving


def test_newuser25_n11_dry_run_and_queue_texts_say_the_year_of_an_eta_a_year_away(tmp_path: Path) -> None:
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0), cycle_interval_s=0.0)
    long = svc.submit({"command": ["sleep", "60"], "gpus": 1, "time_limit": "366d", "name": "long"}, user="ana")
    try:
        for _ in range(3):
            svc.tick()
        end = T0 + timedelta(days=366)
        said = f"ETA {end:%b} {end.day} {end.year} {end:%H:%M} UTC"
        dry = svc.dryrun({"command": ["true"], "gpus": 1, "time_limit": "2h"}, user="ana")
        text = dry["reason"]["text"]
        assert text["eta"].startswith(said) and said in text["line"], text
        waiting = svc.submit({"command": ["true"], "gpus": 1, "time_limit": "2h", "name": "next"}, user="ana")
        svc.tick()
        entry = next(e for e in svc.queue(user="ana") if e["id"] == waiting["id"])
        assert entry["reason"]["text"]["eta"].startswith(said), entry["reason"]["text"]
    finally:
        for job in svc.queue(user="ana"):
            svc.cancel(job["id"], user="ana")
        svc.cancel(long["id"], user="ana")
        wait_until(lambda: (svc.tick(), not leftovers.wrappers_under(tmp_path))[1], "the long job ends")
        svc.store.close()
