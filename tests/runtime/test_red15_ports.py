"""Red team 15, R11: a service whose port is taken ends its restart loop naming the port.

red15a's ``a-serve`` declared port 18765, which red15b's job already served on node ``vm``: it died
on ``OSError: [Errno 98] Address already in use``, was restarted five times (charged for its GPU
meanwhile) and said only "restarted (restart 5)". A restart cannot free the port, so the first such
exit ends the job: ``port 18765 is already in use on vm`` — by whose job, when a job this executor
runs declares it. Real processes and sockets (the local executor)."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.base import ExecutorEvent, Exited, Ready, Started
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation, JobKind
from jupyter_sched.services import jobs as jobs_service
from jupyter_sched.store import Store
from tests.runtime.builders import T0
from tests.runtime.test_local_executor import job_for, wait_event

BIND = """
port = int(sys.argv[1])
server = __import__("socket").create_server(("127.0.0.1", port))
print("serving", flush=True)
while True:
    server.accept()[0].close()
"""


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def test_red15_r11_a_service_whose_port_another_process_holds_ends_instead_of_restarting(tmp_path: Path) -> None:
    squatter = socket.create_server(("127.0.0.1", 0))  # not a job of this executor: nobody named
    port = int(squatter.getsockname()[1])
    ex = LocalExecutor(tmp_path / "jobs")
    job = job_for(tmp_path, BIND, job_id="a-serve", kind=JobKind.INFERENCE, port=port)
    job = replace(job, spec=replace(job.spec, command=(str(port),)))
    try:
        ex.start(job, Allocation("vm", ("GPU-0",)))
        seen: list[ExecutorEvent] = []
        ended = wait_event(ex, Exited, seen)
        assert isinstance(ended, Exited) and ended.exit_code != 0
        assert ended.message == f"port {port} is already in use on vm; not restarted: choose another port", ended
        assert sum(isinstance(e, Started) for e in seen) <= 1, seen  # no restart
    finally:
        squatter.close()


def test_red15_r11_the_port_s_holder_is_named_when_it_is_a_job_of_this_executor(tmp_path: Path) -> None:
    port = _free_port()
    ex = LocalExecutor(tmp_path / "jobs")
    squat = job_for(tmp_path, BIND, job_id="j-squat", kind=JobKind.INFERENCE, port=port, user="red15b")
    squat = replace(squat, spec=replace(squat.spec, command=(str(port),), name="b-squat"))
    serve = job_for(tmp_path, BIND, job_id="j-serve", kind=JobKind.INFERENCE, port=port, user="red15a")
    serve = replace(serve, spec=replace(serve.spec, command=(str(port),)))
    ex.start(squat, Allocation("vm", ()))
    seen: list[ExecutorEvent] = []
    wait_event(ex, Ready, seen)
    ex.start(serve, Allocation("vm", ("GPU-0",)))
    try:
        ended = wait_event(ex, Exited, seen)
        assert isinstance(ended, Exited) and ended.job_id == "j-serve", seen
        assert ended.message == (f"port {port} is already in use on vm by red15b's job \"b-squat\" (j-squat); "
                                 "not restarted: choose another port"), ended
    finally:
        ex.stop("j-squat", grace_s=5)
        wait_event(ex, Exited, [e for e in seen if not isinstance(e, Exited)])


def _service(url: str, tmp_path: Path) -> SchedulerService:
    return SchedulerService(store=Store(url), inventory=SimulatedInventory(1, node="vm"),
                            executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0), cycle_interval_s=0.0)


def test_newuser15_n11_a_privileged_port_is_refused_at_submit_for_an_account_other_than_root(
        sqlite_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """New user 15, N11: ``"port": 80`` was taken (201) from nu15b, whose job could never listen
    there, and read "not answering on port 80 yet" for ever. Embedded, the job runs as this server's
    account: refused (400 naming the field) unless that is root."""
    svc = _service(sqlite_db, tmp_path)
    body = {"gpus": 0, "kind": "inference", "port": 80, "command": ["python", "-m", "http.server", "80"]}
    monkeypatch.setattr(jobs_service, "_service_uid", lambda: 1012)
    for call in (svc.submit, svc.dryrun):
        with pytest.raises(ValidationError) as refused:
            call(body, user="nu15b")
        assert refused.value.field == "port", refused.value
        first = jobs_service._unprivileged_port_start()
        assert str(refused.value).startswith(f"port 80 is below {first}: the job runs as this server's account, "
                                              "which cannot listen there"), refused.value
        assert refused.value.hint == f"use a port from {first} up, e.g. 8000"
    assert svc.submit({**body, "port": 8000, "command": ["python", "-m", "http.server", "8000"]}, user="nu15b")
    monkeypatch.setattr(jobs_service, "_service_uid", lambda: 0)  # root may listen on 80
    assert svc.submit(body, user="root")["state"] == "pending"
    for job in svc.list_jobs(user="nu15b") + svc.list_jobs(user="root"):
        svc.cancel(job["id"], user=job["user"])
