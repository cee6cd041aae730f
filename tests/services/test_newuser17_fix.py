"""New user 17's findings fixed in the services and their wording (issue 20)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording.jobs import my_work
from jupyter_sched.wording.quota import quota_text
from tests.leftovers import end_jobs
from tests.runtime.builders import T0


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                   inventory=SimulatedInventory(1, node="n1"), executor=LocalExecutor(tmp_path / "jobs"), clock=clock)
    yield svc
    assert end_jobs(svc.executor) == []  # its started jobs end with the test (tests/leftovers.py)
    svc.store.close()


def test_newuser17_n22_ten_tenth_gpus_are_one_gpu_in_get_me_and_its_sentences(services: Services) -> None:
    """Ten 0.1-GPU jobs were ``in_use.gpus: 0.9999999999999999`` in ``GET me`` (summed in floats)
    and ``status`` said "on 1 GPUs", "1 GPUs of them yours": sums are in milli-GPUs, one formatter."""
    bo = services.caller("bo", admin=False)
    for _ in range(10):
        services.jobs.submit(bo, SubmitJobRequest(gpus=0.1, command=["true"]))
    services.engine.tick()
    me = services.accounting.me(bo)
    assert me.in_use.jobs == 10
    assert me.in_use.gpus == 1.0 and me.team_in_use == 1.0  # exactly, not 0.9999999999999999
    said = me.model_dump(mode="json")
    assert my_work(said) == "10 jobs running, on 1 GPU"
    assert quota_text(said).endswith("1 GPU in use by the team, 1 GPU of them yours")
    # a float sum handed to the sentences reads as the GPUs it counts, too
    assert my_work({"in_use": {"gpus": sum([0.1] * 10), "jobs": 10}}) == "10 jobs running, on 1 GPU"
    assert quota_text({"team": "t", "team_in_use": 1.0,
                       "in_use": {"gpus": sum([0.1] * 10)}}).endswith("1 GPU of them yours")


@pytest.mark.parametrize(("field", "value"), [("mem_per_gpu", "-5GiB"), ("memory", "-1GiB"), ("memory", -3)])
def test_newuser17_n2_a_negative_memory_size_is_said_negative_not_unparseable(services: Services, field: str,
                                                                              value: object) -> None:
    """``mem_per_gpu: "-5GiB"`` was "cannot parse memory size '-5GiB'" while ``time_limit: -1`` says
    "must not be negative (got -1)": a size with a minus sign is said negative, as the others."""
    from jupyter_sched.errors import ValidationError

    bo = services.caller("bo", admin=False)
    with pytest.raises(ValidationError) as info:
        services.jobs.submit(bo, SubmitJobRequest.model_validate({"gpus": 1, "command": ["true"], field: value}))
    said = f"'{value}'" if isinstance(value, str) else str(value)
    assert info.value.message == f"{field} must not be negative (got {said})", info.value.message
    assert info.value.field == field


def test_newuser17_n8_rest_refuses_a_notebook_sent_as_script(services: Services) -> None:
    """``POST jobs {"script": "x.ipynb"}`` was taken and python ran the notebook's JSON (a traceback in
    the log), while the CLI refuses ``--script x.ipynb``: the server's one validation refuses it."""
    from jupyter_sched.errors import ValidationError

    bo = services.caller("bo", admin=False)
    with pytest.raises(ValidationError) as info:
        services.jobs.submit(bo, SubmitJobRequest.model_validate({"gpus": 0, "script": "/home/a/daily_report.ipynb"}))
    assert info.value.message == "script '/home/a/daily_report.ipynb' is a notebook: send it as notebook"
    assert info.value.field == "script" and '"notebook": "/home/a/daily_report.ipynb"' in str(info.value.hint)


@pytest.mark.parametrize(("cron", "said"), [
    ("0 0 31 2 *", "it never fires: February has no day 31 — 'L' is the last day of the month ('0 0 L 2 *'), "
                   "or use a day up to 29"),
    ("30 6 31 4,6 *", "it never fires: April and June have no day 31 — 'L' is the last day of the month "
                      "('30 6 L 4,6 *'), or use a day up to 30"),
])
def test_newuser17_n7_a_day_no_month_of_the_cron_has_is_said_so(cron: str, said: str) -> None:
    """``--cron '0 0 31 2 *'`` read "the day-of-month field '31' is not one cron reads (numbers 1-31 …)":
    the rule it listed says 31 is fine; the problem is that February never has that day."""
    from jupyter_sched.definitions.schedule import parse_schedule
    from jupyter_sched.errors import ValidationError

    with pytest.raises(ValidationError) as info:
        parse_schedule(cron)
    assert info.value.message == f"invalid cron expression '{cron}': {said}", info.value.message


@pytest.mark.parametrize(("body", "said"), [
    ({"gpus": 4097}, "gpus must be <= 1 (got 4097)"),  # N1: one bound, the largest node's
    ({"gpus": 1e308}, "gpus must be <= 1 (got 1e308)"),  # N1/N3: not Python's 1e+308
    ({"gpus": 1, "memory_mib": 1e12}, "memory_mib must be at most 1 PiB per worker (got 1000000000000)"),  # N3
    ({"gpus": 1, "cpu": 1e9}, "cpu must be at most 100,000 cores per worker (got 1,000,000,000 cores)"),  # N3
    ({"gpus": 1, "cpu": 1e308}, "cpu must be at most 100,000 cores per worker (got 1e308 cores)"),  # red33 nit
])
def test_newuser17_n1_n3_too_large_values_say_the_real_bound_and_the_number_sent(
        services: Services, body: dict[str, object], said: str) -> None:
    """N1: ``gpus: 4097`` said "must be <= 4096" with the hint "ask for at most 4 GPUs" (two limits);
    N3: floats were echoed as Python writes them (``1000000000000.0``, ``1e+308``)."""
    from jupyter_sched.errors import ValidationError

    bo = services.caller("bo", admin=False)
    with pytest.raises(ValidationError) as info:
        services.jobs.submit(bo, SubmitJobRequest.model_validate({"command": ["true"], **body}))
    assert info.value.message == said, info.value.message


def test_newuser17_n3_more_memory_than_the_host_is_said_plainly(services: Services) -> None:
    """``memory_mib 10000000 is more than this host has (24105 MiB): the job's memory limit would be
    no limit`` — the last clause was hard to parse: the host's MiB and the fix, nothing else."""
    from jupyter_sched.errors import UnschedulableError
    from jupyter_sched.services.host_size import host_memory_mib

    host = host_memory_mib()
    if not host:
        pytest.skip("this host says no memory size")
    bo = services.caller("bo", admin=False)
    with pytest.raises(UnschedulableError) as info:  # newuser39 n1: as a job bigger than any node
        services.jobs.submit(bo, SubmitJobRequest.model_validate({"gpus": 0, "command": ["true"],
                                                                  "memory_mib": host + 1}))
    gib = f"{host * 10 // 1024 / 10:g} GiB"  # the host in GiB beside its MiB (new user 19, N1)
    assert info.value.message == f"memory_mib {host + 1} is more than this host's {host} MiB ({gib})", \
        info.value.message
    assert info.value.hint == f"ask for at most {host} MiB, or leave memory_mib out"


def test_newuser17_n7_a_time_zone_in_the_wrong_case_names_the_zone_meant() -> None:
    """``--tz utc`` → "unknown time zone 'utc'" with no "did you mean UTC"."""
    from jupyter_sched.definitions.schedule import parse_schedule
    from jupyter_sched.errors import ValidationError

    for typed, meant in (("utc", "UTC"), ("europe/berlin", "Europe/Berlin")):
        with pytest.raises(ValidationError) as info:
            parse_schedule("0 12 * * *", typed)
        assert info.value.message == f"unknown time zone '{typed}' — did you mean '{meant}'?", info.value.message
    with pytest.raises(ValidationError) as info:
        parse_schedule("0 12 * * *", "Mars/Olympus")
    assert info.value.message == "unknown time zone 'Mars/Olympus'"


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def test_newuser17_n9_another_users_service_reads_as_ready_or_says_nothing_never_not_answering(
        services: Services) -> None:
    """nu17a's service answered on its port (its owner read "ready on port 18951"); nu17b, at the
    same moment, read "not answering on port 18951 yet": the queue's redaction dropped the message,
    and the renderer took a missing message for "no answer". Readiness is public (the port is on
    the line); "not answering" is said only from the owner's own message. And a job waiting for that
    port names its holder once, in one spelling (it said ``nu17a's job a-secret-svc (j-…)`` and
    ``nu17a's job "a-secret-svc" (j-…)`` in one line)."""
    import sys
    import time

    from jupyter_sched.services.models import GetQueueRequest
    from jupyter_sched.wording import job_line, render_reason

    port = _free_port()
    ann, bob = services.caller("nu17a", admin=False), services.caller("nu17b", admin=False)
    serve = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    svc = services.jobs.submit(ann, SubmitJobRequest(gpus=0, command=serve, kind="inference", port=port,
                                                     name="a-secret-svc", time_limit="15m"))
    waiter = None

    def entry(caller: object, job_id: str) -> dict[str, object]:
        rows = services.jobs.queue_page(caller, GetQueueRequest()).entries.to_wire()  # type: ignore[arg-type]
        return next(row for row in rows if row["id"] == job_id)

    try:
        services.engine.tick()
        seen_before_ready = job_line(entry(bob, svc.id), None)  # may already be ready: said nothing or "ready"
        assert "not answering" not in seen_before_ready, seen_before_ready
        deadline = time.monotonic() + 30
        while "ready on port" not in str(entry(ann, svc.id).get("message")):
            assert time.monotonic() < deadline, entry(ann, svc.id)
            time.sleep(0.2)
            services.engine.tick()
        owner_line, other_line = job_line(entry(ann, svc.id), None), job_line(entry(bob, svc.id), None)
        assert owner_line.endswith(f"· ready on port {port}"), owner_line
        assert other_line.endswith(f"· ready on port {port}"), other_line  # it said "not answering … yet"
        assert "command" not in entry(bob, svc.id), "the redaction still holds"
        # the owner's own line of a service that has not answered still says so (a positive signal)
        assert "not answering on port 8765 yet" in job_line(
            {**entry(ann, svc.id), "message": "running", "port": 8765}, None)
        # a job waiting for that port names nu17a's service one way, in the reason and its ETA clause alike
        # (submitted once the service runs: under a ManualClock both submits have one time, and the tie of two
        # jobs declaring one port may go to either)
        waiter = services.jobs.submit(bob, SubmitJobRequest(gpus=0, command=["true"], kind="inference", port=port,
                                                            name="b-svc", time_limit="5m"))
        deadline = time.monotonic() + 30
        while not isinstance(reason := entry(bob, waiter.id).get("reason"), dict) or reason.get("code") != "PortInUse":
            assert time.monotonic() < deadline, entry(bob, waiter.id)
            services.engine.tick()
            time.sleep(0.1)
        named = f'nu17a\'s job "a-secret-svc" ({svc.id})'
        assert named in reason["message"], reason["message"]
        line = render_reason(reason, now=None).line
        assert "job a-secret-svc" not in line, line
    finally:
        services.jobs.cancel(ann, svc.id)
        if waiter is not None and services.jobs.get(bob, waiter.id).state in ("pending", "admitted", "running"):
            services.jobs.cancel(bob, waiter.id)
        deadline = time.monotonic() + 30
        while services.jobs.get(ann, svc.id).state != "cancelled" and time.monotonic() < deadline:
            time.sleep(0.2)
            services.engine.tick()
