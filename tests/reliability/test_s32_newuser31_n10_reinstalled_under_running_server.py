"""newuser31 N10: ``pip install`` run again under a running ``jupyter lab`` (a wheel install replaced by an
editable one, a wheel over a wheel, a ``git pull`` of an editable checkout) left the server launching the
wrapper of an install that had moved: every job failed "exit code 2" (``can't open file …/wrapper.py``), or
ran a new wrapper under the old server.

Now the server notices that its own install changed under it and launches nothing: each batch job waits,
pending, with one line on every surface — "jupyter_sched was reinstalled under this running server (old →
new): restart jupyter lab (jobs stay pending)" — and the service log says it once; after the restart the
jobs start.

Real parts: a jupyter server process started from a copy of the package (``PYTHONPATH`` = the copy, then a
second copy with another build commit — an editable install's place), whose first copy is moved away while
it runs (what ``pip install -e`` does to the wheel's files); the CLI against it; then the real restart.
The in-place reinstall (same path, another version or another wrapper) is checked on the watch itself,
over a copy of the package whose files are rewritten.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.executors.install_check import InstallWatch
from jupyter_sched.scheduling.snapshot import Reinstall
from tests.reliability import harness
from tests.reliability.harness import EmbeddedServer

REPO = Path(__file__).resolve().parents[2]
WAIT_S = 60.0


def _copy_package(into: Path, commit: str) -> Path:
    """A copy of jupyter_sched under ``into`` (an install's site-packages), built from ``commit``."""
    target = into / "jupyter_sched"
    shutil.copytree(REPO / "jupyter_sched", target,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "labextension", "_build_commit.py"))
    (target / "_build_commit.py").write_text(f'COMMIT = "{commit}"\n', encoding="utf-8")
    return target


def _job(server: EmbeddedServer, job_id: str) -> dict[str, Any]:
    with server.client() as api:
        answer = api.get(f"jobs/{job_id}")
        answer.raise_for_status()
        job: dict[str, Any] = answer.json()
        return job


def _wait(server: EmbeddedServer, job_id: str, what: str, done: Any) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    while True:
        job = _job(server, job_id)
        if done(job):
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} never {what}: {job}\n{server.log_tail()}")
        time.sleep(0.1)


def _submit(server: EmbeddedServer, name: str) -> str:
    rc, out, err = server.cli("submit", "--gpus", "0", "--time-limit", "2m", "--name", name, "--",
                              sys.executable, "-c", "print('n10 ran')")
    assert rc == 0, (out, err, server.log_tail())
    return out.split("submitted ", 1)[1].split()[0]


def _held(job: dict[str, Any]) -> bool:
    return job["state"] == "pending" and (job.get("reason") or {}).get("code") == "Reinstalled"


SAID = "jupyter_sched was reinstalled under this running server (0.1.0+g8d235e7 → 0.1.0+g4ed6989): " \
       "restart jupyter lab (jobs stay pending)"


def two_installs_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, EmbeddedServer]:
    """``(wheel, server)``: a real server started from a wheel's copy of the package (built 8d235e7), with an editable
    copy (4ed6989) next on its path — renaming ``wheel / "jupyter_sched"`` is a ``pip install -e`` under it."""
    wheel, editable = tmp_path / "site", tmp_path / "checkout"
    _copy_package(wheel, "8d235e7")
    _copy_package(editable, "4ed6989")
    # the server imports the wheel's copy; once that is gone, the same interpreter imports the editable one
    monkeypatch.setattr(harness, "ROOT", Path(f"{wheel}:{editable}"))
    # a 5-s leader lease: the restarted server leads without waiting out the 15-s default (session 34)
    return wheel, EmbeddedServer.start(tmp_path / "srv", simulated_gpus=1, leader_lease_ttl_s=5)


def test_newuser31_n10_a_reinstall_under_a_running_server_holds_jobs_pending_with_one_line_until_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel, server = two_installs_server(tmp_path, monkeypatch)
    try:
        (wheel / "jupyter_sched").rename(wheel / "jupyter_sched-0.1.0.removed")  # pip install -e: the wheel's files go
        first = _submit(server, "n10-first")
        # before: failed, "exit code 2" (the wrapper's path was gone); now it waits, saying why
        job = _wait(server, first, "held for the reinstall", _held)
        assert job["reason"]["message"] == SAID, job["reason"]
        second = _submit(server, "n10-second")
        _wait(server, second, "held for the reinstall", _held)
        assert _job(server, first)["state"] == "pending"  # still waiting: not failed, not started
        for argv in (("jobs",), ("status", first)):
            rc, out, err = server.cli(*argv)
            assert rc == 0 and f"{SAID} · ETA unknown: held until the restart" in out, (argv, out, err)
        said = [line for line in server.log_tail(200_000).splitlines() if "batch jobs are held pending" in line]
        assert len(said) == 1 and "0.1.0+g8d235e7 → 0.1.0+g4ed6989" in said[0], said  # the admin's one line
        server.restart()  # the way out the line names: the restarted server runs the editable install
        for job_id in (first, second):
            ended = _wait(server, job_id, "ran after the restart",
                          lambda j: j["state"] in ("succeeded", "failed", "cancelled"))
            assert ended["state"] == "succeeded", ended
    finally:
        server.kill()


@pytest.mark.parametrize("service", [False, True], ids=["jupyter lab", "hub service"])
def test_newuser31_n10_an_in_place_reinstall_or_another_wrapper_is_seen_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: bool) -> None:
    package = _copy_package(tmp_path / "site", "8d235e7")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    watch = InstallWatch(package, running="0.1.0+g8d235e7")
    watch.service = service
    assert watch.check() is None  # its own install: nothing to say
    # a wheel over the wheel (pip rewrites every file in place): another build's version
    (package / "_build_commit.py").write_text('COMMIT = "4ed6989"\n', encoding="utf-8")
    assert watch.check() == Reinstall(running="0.1.0+g8d235e7", installed="0.1.0+g4ed6989", service=service)
    (package / "_build_commit.py").write_text('COMMIT = "8d235e7"\n', encoding="utf-8")
    assert watch.check() is None  # the same version again: nothing held (a restart is not needed)
    # the same version with another wrapper (an edit of an editable checkout): the launcher differs
    wrapper = package / "executors" / "wrapper.py"
    wrapper.write_text(wrapper.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    change = watch.check()
    assert change == Reinstall(running="0.1.0+g8d235e7", installed="0.1.0+g8d235e7", wrapper_changed=True,
                               service=service)
    from jupyter_sched.scheduling.gates import reinstalled_reason

    reason = reinstalled_reason(change)
    assert reason.message == (
        "jupyter_sched was reinstalled under the running scheduler service (0.1.0+g8d235e7, its job launcher "
        "changed): the hub admin restarts it (jupyter-sched serve); jobs stay pending" if service else
        "jupyter_sched was reinstalled under this running server (0.1.0+g8d235e7, its job launcher changed): "
        "restart jupyter lab (jobs stay pending)"), reason.message
    shutil.rmtree(package)  # gone from there (what that interpreter imports now is another install's, or none)
    gone = watch.check()
    assert gone is not None and gone.wrapper_gone, gone


def test_newuser31_n10_in_a_git_checkout_a_new_commit_is_no_reinstall_but_another_wrapper_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a developer's commit or rebase in the checkout their server runs from held every job of their own tests
    checkout = tmp_path / "repo"
    package = _copy_package(checkout, "8d235e7")
    (checkout / ".git" / "refs" / "heads").mkdir(parents=True)
    (checkout / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (checkout / ".git" / "refs" / "heads" / "main").write_text("a" * 40 + "\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(checkout))
    watch = InstallWatch(package, running="0.1.0+gaaaaaaa")
    assert watch.checkout and watch.check() is None
    (checkout / ".git" / "refs" / "heads" / "main").write_text("b" * 40 + "\n", encoding="utf-8")  # a commit
    (package / "__init__.py").write_text((package / "__init__.py").read_text(encoding="utf-8"), encoding="utf-8")
    assert watch.check() is None, "the same wrapper: nothing held"
    wrapper = package / "executors" / "wrapper.py"
    wrapper.write_text(wrapper.read_text(encoding="utf-8") + "\n# pulled\n", encoding="utf-8")  # a pull that changed it
    change = watch.check()
    assert change is not None and change.wrapper_changed, change
