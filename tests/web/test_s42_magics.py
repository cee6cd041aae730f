"""Session 42, the magics (/work/coord/s42/p-magics42.md).

newuser41 n11: a notebook job's executed copy could be saved only with ``!jupyter-sched logs JOB --notebook`` —
``%schedule logs JOB --notebook`` was "unknown argument --notebook", and a hub kernel has no ``jupyter-sched`` on
its PATH — yet every hint in a notebook named that shell escape. Now the magic saves it through the CLI's one code
path (:func:`jupyter_sched.cli.executed.save_executed_copy`: the same name, NAME_MAX bound and refusals) and the
hints in a notebook name the magic.

CI of session 41 (005cc37d, tests/web/test_s42_ci41_first_request_ridden_out.py) for the magics: ``%schedule
wait``, ``%schedule logs -f`` and ``%gpu request`` ride a restart out from their FIRST request on (the name lookup,
the first read, the look at a job with no output; ``%gpu request``'s looks and, while it surely never arrived,
the request itself), not only their later polls. As there, the server is put in its stopping state (its answer to
every request while a restart takes it down) as the magic sends the request under test, and taken out of it at
the ride-out's first pause (not slept).

race41's leftover: ``%schedule queue`` and ``%schedule jobs`` say the idle clause the CLI's ``queue``/``jobs`` say.
store41's leftover: a 503 ``scheduler_off`` and a 507 ``store_full`` are said in a notebook as one line with the
message and the hint, no traceback.

Real parts: the pytest-jupyter server with the extension (SQLite, simulated GPUs), the real client over HTTP, the
magics in-process (``SchedMagics`` with no shell, in a thread), a real kernel for the lease. Doubles: a job row with
its executed notebook and log files put in the store as the runner leaves them (no kernel has to run a notebook);
for 507, SQLite's "database or disk is full" raised by the store's insert statement (no disk is filled here: the
store's own translation, the web layer, the client and the magic are the real ones).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, main
from jupyter_sched.client import ride_out
from jupyter_sched.client.discovery import Connection
from jupyter_sched.client.sync import SchedClient
from jupyter_sched.executors.run_notebook import executed_notebook_line
from jupyter_sched.magics.core import MagicError, SchedMagics
from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord
from jupyter_sched.textsafe import printable_log
from jupyter_sched.wording.executed import NAME_BUDGET_BYTES, executed_copy_name
from tests.runtime.builders import T0, make_job

from .conftest import IVAN_TOKEN, JUDY_TOKEN, running_job, wait_for

NOTICE = "the server is stopping (shutdown) — it is likely restarting; "
EXECUTED = {"cells": [{"cell_type": "code", "source": "1/0", "metadata": {}, "execution_count": 1,
                       "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                                    "traceback": []}]}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def url(http_server: Any, http_server_port: Any, jp_base_url: str) -> str:
    return f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}"


def _magics(url: str, token: str = IVAN_TOKEN, kernel_id: str | None = None) -> SchedMagics:
    client = SchedClient(Connection(url=url, token=token, kernel_id=kernel_id, source="kernel-env"))
    return SchedMagics(None, client_factory=lambda: client)


async def _run(magics: SchedMagics, line: str, magic: str = "schedule") -> tuple[Any, str, MagicError | None]:
    """One magic line in a thread (the server runs on this loop): its value, what it printed, its refusal."""
    def go() -> tuple[Any, str, MagicError | None]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                return getattr(magics, magic)(line), out.getvalue(), None
            except MagicError as err:
                return None, out.getvalue(), err
    return await asyncio.to_thread(go)


def _refused(err: MagicError | None) -> str:
    """A refusal as IPython shows it: one line, no traceback."""
    assert err is not None
    shown = err._render_traceback_()
    assert len(shown) == 1 and "\n" not in shown[0] and "Traceback" not in shown[0], shown
    return shown[0]


def _notebook_job(sched_app: Any, tmp_path: Path, job_id: str, notebook: str) -> None:
    """An ended notebook job of ivan's as the runner leaves it: its executed notebook in its folder, and a log
    whose last line is the runner's (:func:`executed_notebook_line`)."""
    folder = tmp_path / job_id
    folder.mkdir()
    (folder / "executed.ipynb").write_text(json.dumps(EXECUTED), encoding="utf-8")
    log = folder / "log.txt"
    log.write_text(f"REGION mars\n[jupyter_sched] {executed_notebook_line(job_id)}\n", encoding="utf-8")
    job = replace(make_job(job_id, user="ivan", state=JobState.FAILED, command=(), notebook=notebook),
                  started_at=T0, finished_at=T0)
    sched_app.services.store.insert_job(JobRecord(job=job, executor="local",
                                                  handle={"log": str(log), "job_dir": str(folder)}))


async def test_newuser41_n11_schedule_logs_notebook_saves_the_executed_copy_as_the_cli_does(
        sched_app: Any, api: Any, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")
    job_id = "j-n11exec"
    notebook = "Auswertung " + "é" * 130 + ".ipynb"  # a legal name whose executed copy's would pass NAME_MAX
    _notebook_job(sched_app, tmp_path, job_id, notebook)
    name = executed_copy_name(notebook, job_id)
    assert len(name.encode()) <= NAME_BUDGET_BYTES < len(f"{notebook} (executed {job_id}).ipynb".encode())
    here = tmp_path / "kernel-folder"
    here.mkdir()
    monkeypatch.chdir(here)
    magics = _magics(url)

    # before: "%schedule logs: unknown argument --notebook"
    _, out, err = await _run(magics, f"logs {job_id} --notebook")
    assert err is None and json.loads((here / name).read_text(encoding="utf-8")) == EXECUTED, (out, err)
    assert f"{job_id}'s executed notebook saved to {here / name}" in out, out
    _, out, err = await _run(magics, f"logs {job_id} --notebook")  # the same again: done, not a mistake
    assert err is None and f"already saved, the same, in {here / name}" in out, (out, err)

    # the CLI's code path: the CLI saves the same file under the same name from its folder
    cli_folder = tmp_path / "terminal"
    cli_folder.mkdir()
    monkeypatch.chdir(cli_folder)
    monkeypatch.setenv("JUPYTER_SCHED_URL", url)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)
    cli_out, cli_err = io.StringIO(), io.StringIO()
    code = await asyncio.to_thread(main, ["logs", job_id, "--notebook"], out=cli_out, err=cli_err, stdin=io.StringIO())
    assert code == EXIT_OK and [p.name for p in cli_folder.iterdir()] == [name], (cli_out.getvalue(), cli_err.getvalue())
    assert (cli_folder / name).read_bytes() == (here / name).read_bytes()
    monkeypatch.chdir(here)

    # the CLI's refusals, each one line opening with the magic: a file that differs is never overwritten
    (here / name).write_text("my own edits", encoding="utf-8")
    _, out, err = await _run(magics, f"logs {job_id} --notebook")
    said = _refused(err)
    assert said == (f"jupyter_sched: %schedule logs: {name} already exists and holds something else; not overwritten "
                    "— remove it or name another file with -o FILE"), said  # no "-o:" the user did not type
    assert (here / name).read_text(encoding="utf-8") == "my own edits"
    _, out, err = await _run(magics, f"logs {job_id} --notebook -o {here / 'no-such-folder' / 'x.ipynb'}")
    said = _refused(err)
    assert said.startswith(f"jupyter_sched: %schedule logs: -o: cannot write {here / 'no-such-folder' / 'x.ipynb'}: "
                           "No such file or directory — name another file with -o FILE"), said
    _, out, err = await _run(magics, f"logs {job_id} --notebook -o mine.ipynb")
    assert err is None and json.loads((here / "mine.ipynb").read_text(encoding="utf-8")) == EXECUTED, (out, err)
    _, out, err = await _run(magics, f"logs {job_id} --notebook -o -")
    assert err is None and json.loads(out) == EXECUTED, (out, err)
    for line, words in ((f"logs {job_id} -o x.ipynb", "-o FILE saves the executed notebook: add --notebook"),
                        (f"logs {job_id} --notebook -f", "--notebook saves the executed notebook; -f reads the log"),
                        (f"logs {job_id} --notebook -n 5", "--notebook saves the executed notebook; -n reads the log"),
                        (f"logs {job_id} --notebook --tail=3", "--notebook saves the executed notebook; --tail reads the "
                                                               "log: give one of them")):
        _, out, err = await _run(magics, line)
        assert words in _refused(err) and not (here / "x.ipynb").exists(), (line, out, err)

    # another user's: the server's refusal, one line; nothing written where they are
    theirs = tmp_path / "judy"
    theirs.mkdir()
    monkeypatch.chdir(theirs)
    _, out, err = await _run(_magics(url, JUDY_TOKEN), f"logs {job_id} --notebook")
    assert job_id in _refused(err) and list(theirs.iterdir()) == [], (out, err)
    monkeypatch.chdir(here)

    # the hints in a notebook name the magic, never the CLI a hub kernel lacks
    _, out, err = await _run(magics, f"status {job_id}")
    assert err is None and f"%schedule logs {job_id} --notebook saves it here" in out, out
    assert "jupyter-sched" not in out, out
    _, out, err = await _run(magics, f"logs {job_id}")
    last = out.rstrip("\n").splitlines()[-1]
    assert last == (f"[jupyter_sched] executed notebook kept (outputs and errors): open it from the panel (My work → "
                    f"{job_id} → Open notebook) or save it here with: %schedule logs {job_id} --notebook"), out
    # the submission's line: a notebook job waiting behind a job that holds every GPU
    await running_job(api, gpus=4)
    (here / "nb.ipynb").write_text(json.dumps({**EXECUTED, "cells": []}), encoding="utf-8")
    submitted, out, err = await _run(magics, "notebook nb.ipynb --gpus 1")
    assert err is None and f"save it here with %schedule logs {submitted} --notebook." in out, (out, err)
    assert "jupyter-sched" not in out, out


async def test_s42_magics_wait_and_logs_follow_ride_out_a_restart_at_their_first_requests(
        sched_app: Any, api: Any, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")
    pauses: list[float] = []

    def back(seconds: float) -> None:  # the ride-out's pause: the server is back by the next poll
        pauses.append(seconds)
        sched_app.stopping = False

    monkeypatch.setattr(ride_out, "_sleep", back)
    status, job = await api("POST", "jobs", {"gpus": 1, "time_limit": "5m", "name": "s42m",
                                             "command": [sys.executable, "-c", "print('said once')"]})
    assert status == 201, job
    quiet_status, quiet = await api("POST", "jobs", {"gpus": 1, "time_limit": "5m", "name": "s42m-quiet",
                                                     "command": [sys.executable, "-c", "pass"]})
    assert quiet_status == 201, quiet

    async def ended() -> bool:
        return all([(await api("GET", f"jobs/{made['id']}"))[1]["state"] == "succeeded" for made in (job, quiet)])

    await wait_for(ended)

    async def magic(stops_at: str, line: str) -> tuple[str, MagicError | None]:
        pauses.clear()
        real = getattr(SchedClient, stops_at)

        def sent(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not pauses:  # the server begins to stop as the magic sends its first request of this kind
                sched_app.stopping = True
            return real(self, *args, **kwargs)

        monkeypatch.setattr(SchedClient, stops_at, sent)
        try:
            _, out, err = await _run(_magics(url), line)
        finally:
            monkeypatch.setattr(SchedClient, stops_at, real)
            sched_app.stopping = False
        return out, err

    # before: "jupyter_sched: the server is stopping (shutdown): this request was not carried out …" at once
    for stops_at in ("job_named", "logs", "job"):
        out, err = await magic(stops_at, "logs s42m -f")
        assert err is None and out.count("said once") == 1, (stops_at, out, err)
        if stops_at != "job":  # an ended job's log is read, the job not looked at
            assert out.count(NOTICE) == 1 and f"{NOTICE}still following s42m's log" in out, (stops_at, out)
            assert pauses == [1.0], (stops_at, pauses)

        out, err = await magic(stops_at, "logs s42m-quiet -f")  # its log is empty: the job is looked at
        assert err is None and f"{quiet['id']} succeeded with no output." in out, (stops_at, out, err)
        assert out.count(NOTICE) == 1 and pauses == [1.0], (stops_at, out, pauses)

        out, err = await magic(stops_at, "wait s42m")
        assert err is None and f"job {job['id']} (s42m): succeeded" in out, (stops_at, out, err)
        if stops_at != "logs":  # a wait reads no log
            assert out.count(NOTICE) == 1 and f"{NOTICE}still waiting for s42m" in out and pauses == [1.0], \
                (stops_at, out, pauses)


async def test_s42_magics_gpu_request_rides_out_a_restart_at_its_first_requests(
        sched_app: Any, api: Any, url: str, kernel: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "JUPYTER_SCHED_GPU_MILLI"):
        monkeypatch.delenv(name, raising=False)  # set by the grant, put back after the test
    kernel_id = await kernel()
    pauses: list[float] = []

    def back(seconds: float) -> None:
        pauses.append(seconds)
        sched_app.stopping = False

    monkeypatch.setattr(ride_out, "_sleep", back)
    # before: "jupyter_sched: the server is stopping (shutdown): this request was not carried out …", no lease
    for stops_at in ("inventory", "leases", "request_lease"):
        pauses.clear()
        real = getattr(SchedClient, stops_at)

        def sent(self: Any, *args: Any, real: Any = real, **kwargs: Any) -> Any:
            if not pauses:
                sched_app.stopping = True
            return real(self, *args, **kwargs)

        monkeypatch.setattr(SchedClient, stops_at, sent)
        magics = _magics(url, kernel_id=kernel_id)
        try:
            _, out, err = await _run(magics, "request 1 --timeout 5m", magic="gpu")
        finally:
            monkeypatch.setattr(SchedClient, stops_at, real)
            sched_app.stopping = False
        assert err is None and "Allocated" in out and out.count(NOTICE) == 1, (stops_at, out, err)
        assert pauses == [1.0] and magics.lease is not None, (stops_at, pauses)
        _, leases = await api("GET", "leases", params={"state": "pending,admitted,running"})
        assert [lease["id"] for lease in leases] == [magics.lease["id"]], (stops_at, leases)  # one, not two
        _, out, err = await _run(magics, "release", magic="gpu")
        assert err is None, (stops_at, out, err)


async def test_s42_magics_queue_and_jobs_say_the_idle_clause_the_cli_says(
        sched_app: Any, api: Any, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_sched.client.status import idle_notes

    job_id = await running_job(api, gpus=1, name="s42idle")
    client = SchedClient(Connection(url=url, token=IVAN_TOKEN, source="kernel-env"))
    rows = await asyncio.to_thread(client.queue)
    # the idle pass's verdict (its sampling is not this test's): the CLI's idle_notes reads it as GET idle gives it
    monkeypatch.setattr(SchedClient, "idle_candidates", lambda self: [
        {"job_id": job_id, "stage": "warned", "action": "release", "kind": "job", "rule": "GPU < 5 % for 30 min",
         "idle_since": "2026-12-07T09:58:00+00:00", "deadline": "2026-12-07T10:28:00+00:00"}])
    said = (await asyncio.to_thread(idle_notes, client, rows))[job_id]
    assert said.startswith("idle since") and "unless it is used" in said, said
    magics = _magics(url)
    for line in ("queue", "jobs"):
        frame, out, err = await _run(magics, line)
        assert err is None, (line, out, err)
        detail = frame.set_index("id").loc[job_id, "detail"]
        # before: the CLI's line had the idle clause, the magic's row none
        # its clocks as the reader's now says them ("09:58 UTC" today, "Dec 7 09:58 UTC" after midnight): the CLI's own
        assert said in detail and "idle since " in detail and "GPU < 5 % for 30 min" in detail, (line, detail)


async def test_s42_magics_scheduler_off_and_store_full_are_one_line_with_message_and_hint(
        sched_app: Any, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlalchemy as sa

    from jupyter_sched.errors import SchedulerOffError
    from jupyter_sched.store.store import StoreTx

    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    def full(self: Any, *args: Any, **kwargs: Any) -> Any:
        import sqlite3

        raise sa.exc.OperationalError("INSERT INTO jobs", {}, sqlite3.OperationalError("database or disk is full"))

    monkeypatch.setattr(StoreTx, "insert_job", full)
    _, out, err = await _run(_magics(url), f"run {script.name} --gpus 1")
    said = _refused(err)
    assert said.startswith("jupyter_sched: the scheduler's database is out of disk space: nothing of this request "
                           "was saved. Free space on the disk of the scheduler's store"), said
    assert "retry in a moment" not in said and "Submitted" not in out, (said, out)
    monkeypatch.undo()

    sched_app.off_error = SchedulerOffError(
        "the scheduler is not running: the store's disk /srv/sched is full (0 bytes free of 16 MiB; ENOSPC)",
        hint="free space on that disk (or set c.SchedApp.db_url to another folder); then restart the server")
    try:
        for magic, line in (("schedule", "jobs"), ("gpu", ""), ("schedule", f"run {script} --gpus 1")):
            _, out, err = await _run(_magics(url), line, magic=magic)
            said = _refused(err)
            assert said.startswith("jupyter_sched: the scheduler is not running: the store's disk /srv/sched is full "
                                   "(0 bytes free of 16 MiB; ENOSPC). Free space on that disk (or set "
                                   "c.SchedApp.db_url to another folder); then restart the server"), (line, said)
            assert "restarting" not in out and "retry" not in said, (line, out, said)
    finally:
        sched_app.off_error = None


def test_s42_magics_race41_an_idle_lease_of_a_kernel_the_server_did_not_start_is_not_sent_to_a_notebook() -> None:
    """race41's leftover: the idle clause of a lease held by a kernel this server did not start (nbconvert's,
    papermill's: ``released_at_exit``, no ``kernel_id``) ended "`%gpu keepalive` in its notebook keeps them" — a
    notebook run headless has no one to run a cell. In-process: the clause's rule, as ``queue``/``jobs`` and the
    magics' tables read ``GET idle`` (its entry as the server sends it)."""
    from jupyter_sched.client.status import idle_notes
    from jupyter_sched.wording.jobs import UNSEEN_KERNEL_KEEP

    class _Idle:
        def idle_candidates(self) -> list[dict[str, Any]]:
            return [{"job_id": job_id, "stage": "warned", "action": "release", "kind": "lease",
                     "idle_since": "2026-12-07T09:58:00+00:00", "deadline": "2026-12-07T10:28:00+00:00",
                     "rule": "no process and < 5 % for 30 min, its kernel's state is not seen by this server"}
                    for job_id in ("l-headless", "l-lab")]

    notes = idle_notes(_Idle(), [{"id": "l-headless", "kind": "lease", "kernel_id": None, "released_at_exit": True},
                                 {"id": "l-lab", "kind": "lease", "kernel_id": "5b0e4c3a"}])
    assert notes["l-headless"].endswith(f"unless it is used — {UNSEEN_KERNEL_KEEP}"), notes
    assert "in its notebook" not in notes["l-headless"] and "a notebook run headless" in UNSEEN_KERNEL_KEEP, notes
    assert notes["l-lab"].endswith("`%gpu keepalive` in its notebook keeps them"), notes  # a kernel of this server


async def test_newuser42_N2_schedule_logs_escapes_a_jobs_control_bytes_as_the_cli_does(
        sched_app: Any, api: Any, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """newuser42 N2: ``%schedule logs`` wrote a job's ESC, BEL, NUL and OSC title/clipboard sequences into the
    kernel's stream as written (``jupyter console`` obeys them; a notebook ANSI-renders them) where ``jupyter-sched
    logs`` shows them escaped. Every way the magic prints a log — whole, ``-n``, ``-f`` on an ended job, the
    executed notebook with ``-o -`` — now prints what the CLI prints (:func:`~jupyter_sched.textsafe.printable_log`)."""
    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")
    job_id = "j-n42ctrl"
    _notebook_job(sched_app, tmp_path, job_id, "junk.ipynb")
    log = tmp_path / job_id / "log.txt"
    hostile = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07\x00\x00end\x9b\u202e\x7f"
    log.write_bytes(f"start \x1b[31mred\x1b[0m\n{hostile}\nlast\x07\n".encode())
    (tmp_path / job_id / "executed.ipynb").write_text(json.dumps({**EXECUTED, "metadata": {"t": hostile}}),
                                                     encoding="utf-8")
    monkeypatch.setenv("JUPYTER_SCHED_URL", url)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)
    cli_out, cli_err = io.StringIO(), io.StringIO()
    code = await asyncio.to_thread(main, ["logs", job_id], out=cli_out, err=cli_err, stdin=io.StringIO())
    assert cli_out.getvalue() == printable_log(log.read_text()) == "start red\n^@^@end<U+009B><U+202E>^?\nlast^G\n", \
        (code, cli_out.getvalue(), cli_err.getvalue())
    control = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
    for line, shown in ((f"logs {job_id}", cli_out.getvalue()), (f"logs {job_id} -f", cli_out.getvalue()),
                        (f"logs {job_id} -n 2", "^@^@end<U+009B><U+202E>^?\nlast^G\n")):
        _, out, err = await _run(_magics(url), line)
        assert err is None and not control.search(out), (line, out)  # before: ESC, BEL, NUL as written
        assert out.startswith(shown), (line, out)  # the CLI's own escaping
    _, out, err = await _run(_magics(url), f"logs {job_id} --notebook -o -")
    assert err is None and not control.search(out), out
    assert json.loads(out)["metadata"]["t"] == hostile, out  # the same notebook, its controls as JSON escapes
