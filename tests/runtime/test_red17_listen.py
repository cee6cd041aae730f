"""Red team 17, R12: red team 16, R8's listen window stopped a service that *did* listen, 2 s
after it closed its socket past its first 10 minutes (a hot reload, a re-bind), telling its owner
it "never listened". The window applies until the first listen; a service that listened and
stopped is stopped only after ``relisten_s`` without listening again, and its end says so.

Real parts: :class:`LocalExecutor` runs real Python services that bind real TCP ports."""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.executors.base import ExecutorEvent, Exited, NotReady, Ready
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Allocation, JobKind
from tests.runtime.test_local_executor import job_for, wait_until


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def _listen_then_close(port: int, then: str) -> str:
    return (f"server = __import__('socket').create_server(('127.0.0.1', {port}))\n"
            "time.sleep(2.0)\nserver.close()\nopen('closed', 'w').close()\n" + then)


def test_red17_r12_a_service_that_listened_and_rebinds_after_the_window_is_not_stopped(tmp_path: Path) -> None:
    """listen_s 1 s: the service listens at once, closes its socket 2 s in (past the window), and
    listens again 3 s later. Before the fix it was stopped ~2 s after the close, "never listened"."""
    port = _free_port()
    ex = LocalExecutor(tmp_path / "jobs", listen_s=1.0, relisten_s=60.0)
    rebind = (f"time.sleep(3.0)\nserver = __import__('socket').create_server(('127.0.0.1', {port}))\n"
              "open('again', 'w').close()\ntime.sleep(600)\n")
    job = job_for(tmp_path, _listen_then_close(port, rebind), job_id="reload", kind=JobKind.INFERENCE, port=port)
    ex.start(job, Allocation("vm", ()))
    seen: list[ExecutorEvent] = []
    try:
        wait_until(lambda: (seen.extend(ex.poll()), any(isinstance(e, NotReady) for e in seen))[1],
                   "the service to be seen not listening")
        wait_until(lambda: (seen.extend(ex.poll()), sum(isinstance(e, Ready) for e in seen) >= 2)[1],
                   "the service to be ready again")
        assert not any(isinstance(e, Exited) for e in seen), seen
        assert not ex._jobs["reload"].stopping
    finally:
        ex.stop("reload", grace_s=0.5)
        wait_until(lambda: (seen.extend(ex.poll()), any(isinstance(e, Exited) for e in seen))[1], "the stop")


def test_red17_r12_a_service_that_stopped_listening_is_stopped_after_relisten_s_saying_what_happened(
        tmp_path: Path) -> None:
    """The squat "listen, then close and hold the port" is still ended — by the separate
    relisten_s window, with words that say it listened and when it stopped."""
    port = _free_port()
    ex = LocalExecutor(tmp_path / "jobs", listen_s=1.0, relisten_s=1.0)
    job = job_for(tmp_path, _listen_then_close(port, "time.sleep(600)\n"), job_id="squat", kind=JobKind.INFERENCE,
                  port=port)
    ex.start(job, Allocation("vm", ()))
    seen: list[ExecutorEvent] = []
    ended = wait_until(lambda: (seen.extend(ex.poll()), next((e for e in seen if isinstance(e, Exited)), None))[1],
                       "the squatter's end")
    assert isinstance(ended, Exited), ended
    assert ended.message.startswith(f"stopped listening on port {port} at "), ended.message
    assert "did not listen again for 1 s together" in ended.message and "never listened" not in ended.message
    assert any(isinstance(e, Ready) for e in seen), seen


def test_red18_r7_brief_listens_do_not_renew_a_port_its_service_does_not_serve(tmp_path: Path) -> None:
    """b-squat listened for 4 s, then held its declared port for an hour without serving it, and a
    moment of listening each hour renewed it for ever (red team 18, R7). Now the time without
    listening counts from the first stop while the service comes back only briefly: with
    relisten_s 4 s, a service that listens 0.6 s every 3.1 s is stopped about 4 s after its first stop
    (before: never, each brief listen started the window again). The default is 5 minutes."""
    import time as _time

    from jupyter_sched.extension.app import SchedApp

    assert SchedApp().service_relisten_s == 300.0
    port = _free_port()
    ex = LocalExecutor(tmp_path / "jobs", listen_s=1.0, relisten_s=4.0)
    flicker = (f"while True:\n    time.sleep(2.5)\n    s = __import__('socket').create_server(('127.0.0.1', {port}))\n"
               "    time.sleep(0.6)\n    s.close()\n")
    job = job_for(tmp_path, _listen_then_close(port, flicker), job_id="flicker", kind=JobKind.INFERENCE, port=port)
    ex.start(job, Allocation("vm", ()))
    seen: list[ExecutorEvent] = []
    started = _time.monotonic()
    try:
        ended = wait_until(lambda: (seen.extend(ex.poll()), next((e for e in seen if isinstance(e, Exited)), None))[1],
                           "the flickering squatter's end")
    finally:
        if "flicker" in ex._jobs:
            ex.stop("flicker", grace_s=0.5)
    assert isinstance(ended, Exited) and "did not listen again for 4 s together" in ended.message, ended
    assert sum(isinstance(e, Ready) for e in seen) >= 2, "it never came back: the case proves nothing"
    assert _time.monotonic() - started < 20, "brief listens kept renewing the port"


def test_red17_r12_the_windows_are_settings_of_the_server(tmp_path: Path) -> None:
    """c.SchedApp.service_listen_s / service_relisten_s reach the local executor; a negative one is
    refused naming it."""
    import pytest
    from traitlets import TraitError

    from jupyter_sched.engine import SchedulerService
    from jupyter_sched.extension.app import SchedApp

    app = SchedApp(service_listen_s=120.0, service_relisten_s=7200.0)
    settings = app.service_settings()
    assert (settings["service_listen_s"], settings["service_relisten_s"]) == (120.0, 7200.0)
    svc = SchedulerService.from_config({"db_url": f"sqlite:///{tmp_path / 's.sqlite'}", "log_dir": str(tmp_path / "j"),
                                        "inventory_source": "simulated", "telemetry_source": "off",
                                        "service_listen_s": 120.0, "service_relisten_s": 7200.0})
    try:
        assert isinstance(svc.executor, LocalExecutor)
        assert (svc.executor.listen_s, svc.executor.relisten_s) == (120.0, 7200.0)
    finally:
        svc.store.close()
    with pytest.raises(TraitError, match="service_relisten_s"):
        SchedApp(service_relisten_s=-1.0)
