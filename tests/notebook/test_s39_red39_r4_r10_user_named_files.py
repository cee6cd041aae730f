"""red39 R4 and R10: the files a job names are read only as regular files, in bounds, and never under the job
folder's own names.

R4: the notebook runner read a definition's notebook whole with no bound — a 20 GB sparse ``.ipynb`` took 10.8 GB
of the host's memory, a link to ``/dev/zero`` ran out of memory, a FIFO ran "running" for ever (one more each
firing, each able to hold a GPU). Now the runner (a real ``python -m jupyter_sched.executors.run_notebook``
process here) ends at once with one sentence naming the path, what it is or its size and the bound; a real
server refuses such a notebook at a definition's create and at "run now" (400 naming ``notebook``), and a
firing after the file changed records a rejected run saying so — before the job waits for or holds a GPU.

R10: a carried script named ``output.log`` became the job's log, ``wrapper.json`` was replaced by the wrapper's
own record (the user's script never ran): every name of the job folder's own files is refused (400 naming
``script`` / ``notebook``), the list taken from the executor's one constant.

Real parts: the runner process, a real ``jupyter server`` with jupyter_sched (simulated GPUs: no GPU here),
FIFOs, sparse files and a link to ``/dev/zero`` on the real file system.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.executors.run_notebook import EXIT_BAD_INPUT
from jupyter_sched.executors.wrapper import OWN_NAMES
from jupyter_sched.userfiles import NOTEBOOK_RUN_BYTES, NotRunnable, read_run_file
from tests.reliability.harness import EmbeddedServer, no_strays, wait_until

NOTEBOOK = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "x = 1", "outputs": [],
                       "execution_count": None, "id": "c1"}],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}
HANG_GUARD_S = 120
"""Not a timing: before the fix the FIFO's runner never ended, and this turns that into a failure, not a hang."""
RSS_MOST_KIB = 400 << 10

PEAK = "peak-kib="
_LAUNCH = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[1:]); "
           f"print('{PEAK}%d' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(rc)")
"""Runs the runner as its only child and says that child's peak RSS (KiB): the test process's own RUSAGE_CHILDREN
holds the largest child it ever reaped — a JupyterLab an earlier test of the same worker ran (run A: 665,812 KiB)."""
"""The runner's peak RSS may not reach this (400 MiB): a Python with nbformat loaded is ~60 MiB; before the fix
the 20 GB file's read grew it to 10.8 GB."""


def unusable(kind: str, path: Path) -> Path:
    """``path`` made the unusable thing of ``kind``: a FIFO, a sparse file 20 GiB long, a link to /dev/zero."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "sparse":
        with open(path, "wb") as fh:
            fh.truncate(20 << 30)
    else:
        path.symlink_to("/dev/zero")
    return path


WANT = {"fifo": "is a FIFO (named pipe), not a regular file", "sparse": "is 20 GiB (21,474,836,480 bytes); at most "
        "8 MiB (8,388,608 bytes) is run", "zero": "is a character device, not a regular file"}


@pytest.mark.parametrize("kind", ["fifo", "sparse", "zero"])
def test_red39_r4_definition_notebook_that_is_a_fifo_or_huge_fails_at_once(tmp_path: Path, kind: str) -> None:
    nb = unusable(kind, tmp_path / f"{kind}.ipynb")
    out = tmp_path / "run" / "executed.ipynb"
    proc = subprocess.Popen([sys.executable, "-c", _LAUNCH, sys.executable, "-m", "jupyter_sched.executors.run_notebook",
                             str(nb), str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)  # the launcher and the runner under it
            proc.wait()
    assert proc.returncode == EXIT_BAD_INPUT, stderr
    outcome = json.loads((out.parent / "outcome.json").read_text())
    assert outcome["status"] == "failed"
    assert outcome["reason"].startswith(f"notebook {str(nb)!r} {WANT[kind]}"), outcome["reason"]
    assert WANT[kind] in stderr and "Traceback" not in stderr
    peak_kib = int(stderr.rsplit(PEAK, 1)[1].split()[0])  # the runner's own peak (_LAUNCH)
    assert peak_kib < RSS_MOST_KIB, f"the runner's RSS grew to {peak_kib} KiB"


def test_red39_r4_read_run_file_takes_a_file_at_the_bound_and_refuses_one_byte_more(tmp_path: Path) -> None:
    at = tmp_path / "at.ipynb"
    with open(at, "wb") as fh:
        fh.truncate(NOTEBOOK_RUN_BYTES)
    assert len(read_run_file(at)) == NOTEBOOK_RUN_BYTES
    with open(at, "ab") as fh:
        fh.write(b"x")
    with pytest.raises(NotRunnable) as refused:
        read_run_file(at)
    assert "8 MiB (8,388,609 bytes); at most 8 MiB (8,388,608 bytes) is run" in refused.value.message
    assert "Clear Outputs" in refused.value.hint
    fifo_link = tmp_path / "link.ipynb"  # a link to a FIFO: refused by what it leads to, never opened
    os.mkfifo(tmp_path / "fifo")
    fifo_link.symlink_to(tmp_path / "fifo")
    with pytest.raises(NotRunnable, match="is a FIFO"):
        read_run_file(fifo_link)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    workdir = tmp_path_factory.mktemp("r39r4")
    with no_strays(workdir):
        srv = EmbeddedServer.start(workdir, definition_min_interval_s=1.0, simulated_gpus=1)
        try:
            yield srv
        finally:
            srv.kill()


def _runs(server: EmbeddedServer, definition_id: str) -> list[dict[str, Any]]:
    with server.client() as c:
        r = c.get(f"definitions/{definition_id}/runs", params={"limit": 50})
        r.raise_for_status()
        found: list[dict[str, Any]] = r.json()
        return found


@pytest.mark.slow
def test_red39_r4_a_real_servers_definition_refuses_and_its_firing_rejects_an_unusable_notebook(
        server: EmbeddedServer, tmp_path: Path) -> None:
    with server.client() as c:
        for kind in ("fifo", "sparse", "zero"):  # at the create: 400 naming the notebook, what it is, the bound
            nb = unusable(kind, tmp_path / f"create-{kind}.ipynb")
            r = c.post("definitions", json={"name": f"bad-{kind}", "notebook": str(nb), "schedule": "0 3 * * *",
                                            "gpus": 0})
            assert r.status_code == 400, r.text
            error = r.json()["error"]
            assert error["field"] == "notebook" and WANT[kind] in error["message"], error
            assert "Traceback" not in r.text
        good = tmp_path / "p.ipynb"
        good.write_text(json.dumps(NOTEBOOK))
        r = c.post("definitions", json={"name": "swapped", "notebook": str(good), "schedule": "* * * * * *",
                                        "gpus": 1})
        assert r.status_code == 201, r.text
        definition = r.json()["id"]
        try:
            good.unlink()
            os.mkfifo(good)  # the file changed after the create, as red39's t16.py swapped it
            r = c.post(f"definitions/{definition}/runs", json={})
            assert r.status_code == 400 and r.json()["error"]["field"] == "notebook", r.text
            assert WANT["fifo"] in r.json()["error"]["message"]
            seen = wait_until(lambda: [run for run in _runs(server, definition) if run["job"]], "a firing's run",
                              timeout_s=60)
            job = seen[0]["job"]
            assert job["state"] == "rejected", job  # never pending: it did not wait for nor take the GPU
            assert "could not submit this run" in job["message"] and WANT["fifo"] in job["message"], job
            assert not job.get("started_at") and not job.get("allocation"), job  # no GPU held, ever
        finally:
            c.delete(f"definitions/{definition}")


EARLIER = ("is a notebook: send it as notebook", "is not a .ipynb file")
"""What a script named ``*.ipynb`` or a notebook named otherwise is told before its name is looked at."""


@pytest.mark.slow
def test_red39_r10_carried_script_cannot_take_a_job_folder_file_name(server: EmbeddedServer) -> None:
    notebook = json.dumps(NOTEBOOK)
    assert {"output.log", "exit.json", "wrapper.json", "outcome.json", "executed.ipynb", "input.ipynb",
            "stop.fifo"} <= OWN_NAMES
    with server.client() as c:
        for name in sorted(OWN_NAMES):
            for body, field in (({"script": name, "source": "print(1)"}, "script"),
                                ({"notebook": name, "notebook_json": notebook}, "notebook")):
                r = c.post("jobs", json={"name": "carry", "gpus": 0, **body})
                assert r.status_code == 400, (body, r.text)
                error = r.json()["error"]
                assert error["field"] == field, error
                if (field == "script") == name.endswith(".ipynb"):  # refused before for its kind of name
                    assert any(said in error["message"] for said in EARLIER), error
                    continue
                assert "job folder's own files" in error["message"] and "another file name" in error["hint"], error
        r = c.post("jobs", json={"name": "carry", "gpus": 0, "script": "mine.py", "source": "print('ran mine')"})
        assert r.status_code == 201, r.text  # any other name is carried as before
        job = r.json()["id"]
        wait_until(lambda: c.get(f"jobs/{job}").json()["state"] in ("succeeded", "failed"), "the carried job's end")
        assert c.get(f"jobs/{job}").json()["state"] == "succeeded"
        log = c.get(f"jobs/{job}/logs")
        assert "ran mine" in log.text, log.text


_CLIENT_READS = """
import json, sys
from pathlib import Path
from jupyter_sched.definitions.parameters import parameters_file_note
from jupyter_sched.magics.core import MagicError, _carried_text
said = {"note": parameters_file_note(sys.argv[1], {"x": 2})}
for name in sys.argv[1:]:
    try:
        _carried_text(Path(name), "notebook")
        said[name] = "read"
    except MagicError as exc:
        said[name] = str(exc)
print(json.dumps(said))
"""


@pytest.mark.parametrize("kind", ["fifo", "sparse", "zero"])
def test_red39_r4_the_clients_reads_of_a_named_file_refuse_a_fifo_or_huge_one_at_once(tmp_path: Path, kind: str) -> None:
    """The kind on the client side: ``%schedule notebook`` on a hub carries the file (read whole: a FIFO hung the
    kernel, 20 GB filled it), the parameters note read the notebook whole. Each refuses it before a read (a
    subprocess: before the fix the FIFO's read never ended). ``--token-file`` takes a pipe on purpose
    (``<(pass show …)``, newuser14 N24) and reads it to a bound: left as it is."""
    nb = unusable(kind, tmp_path / f"{kind}.ipynb")
    done = subprocess.run([sys.executable, "-c", _CLIENT_READS, str(nb)], capture_output=True, text=True,
                          timeout=HANG_GUARD_S, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])
    assert said["note"] == ""
    assert said[str(nb)].startswith(f"notebook {str(nb)!r} {WANT[kind]}"), said
