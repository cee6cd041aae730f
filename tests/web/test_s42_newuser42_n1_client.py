"""newuser42 N1: the Python client a newcomer uses — ``submit`` with keywords, ``wait`` (riding a restart out,
``check`` and ``timeout``), ``usage(since="2026-12-01")`` — and docs/details.md's "From Python" example, run as a
user runs it. One real server for all (tests/web's fixture: jupyter_server with the extension, SQLite, simulated
GPUs, jobs as real processes); the example runs as a subprocess in a folder holding its train.py.

Before: no ``wait`` (AttributeError), ``submit(command=…)`` a TypeError from Python's internals, ``usage(since=
"2026-12-01")`` a TimestampError (in-process checks of the arguments: tests/onboarding/test_s42_newuser42_n1_client_args.py).
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.client import JobFailed, SchedClient, WaitTimeout, ride_out
from jupyter_sched.client.aio import AsyncSchedClient
from jupyter_sched.client.discovery import Connection

from .conftest import IVAN_TOKEN, SLEEP_JOB, running_job

ROOT = Path(__file__).resolve().parents[2]


def _docs_example() -> str:
    """The first Python block of docs/details.md's "From Python" section."""
    details = (ROOT / "docs" / "details.md").read_text(encoding="utf-8")
    section = details.split("## From Python", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "docs/details.md's From Python section has no Python example"
    return found.group(1)


async def _run_example(env: dict[str, str], folder: Path, train: str) -> tuple[int, str, str]:
    (folder / "train.py").write_text(train, encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", _docs_example(), env=env, cwd=str(folder),
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_newuser42_N1_submit_with_keywords_wait_usage_and_the_docs_example(
        sched_app: Any, api: Any, http_server: Any, http_server_port: Any, jp_base_url: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": url, "JUPYTER_SCHED_TOKEN": IVAN_TOKEN, "PYTHONPATH": str(ROOT)})

    # the docs' example as a user runs it: a job that succeeds, then one that fails
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    code, out, err = await _run_example(env, good, "print('epoch 1')\n")
    assert code == 0, err
    assert out.strip() == "succeeded 0", (out, err)
    code, out, err = await _run_example(env, bad, "import sys\nsys.exit(3)\n")
    assert code == 0, err
    assert "(train): failed, exit code 3" in out, (out, err)

    notices: list[str] = []
    client = SchedClient(Connection(url=url, token=IVAN_TOKEN), notice=notices.append)
    try:
        # keywords: the wire's fields, the command a list, run in this process's folder (as the CLI's submit)
        job = await asyncio.to_thread(client.submit, command=[sys.executable, "-c", "print('hi')"], gpus=0,
                                      name="kw", time_limit="10m")
        assert (job["name"], job["command"][-1], job["time_limit_s"]) == ("kw", "print('hi')", 600)
        assert job["working_dir"] == os.getcwd()

        # a restart of the server while waiting (it answers 503 stopping) is ridden out, said once
        pauses: list[float] = []

        def back(seconds: float) -> None:
            pauses.append(seconds)
            sched_app.stopping = False

        monkeypatch.setattr(ride_out, "_sleep", back)
        sched_app.stopping = True
        try:
            ended = await asyncio.to_thread(client.wait, "kw", check=True)  # by name, as `jupyter-sched wait kw`
        finally:
            sched_app.stopping = False
        assert ended["id"] == job["id"] and ended["state"] == "succeeded", ended
        assert pauses and len(notices) == 1 and "still waiting for kw" in notices[0], notices

        # check=True: a job that did not succeed raises JobFailed with its state and exit code
        failing = await asyncio.to_thread(client.submit, command=[sys.executable, "-c", "raise SystemExit(7)"],
                                          gpus=0, name="kw-fail", time_limit="10m")
        with pytest.raises(JobFailed) as failed:
            await asyncio.to_thread(client.wait, failing["id"], check=True)
        assert failed.value.job["state"] == "failed" and "exit code 7" in failed.value.message
        plain = await asyncio.to_thread(client.wait, failing["id"])  # without check: the ended job
        assert plain["exit_code"] == 7

        # timeout: WaitTimeout (a TimeoutError) saying its state; the job goes on
        long_id = await running_job(api, gpus=1, name="long")
        with pytest.raises(TimeoutError) as timed_out:
            await asyncio.to_thread(client.wait, long_id, timeout=0)
        assert isinstance(timed_out.value, WaitTimeout)
        assert timed_out.value.message.startswith("still running after") and "goes on" in str(timed_out.value.hint)
        _, still = await api("GET", f"jobs/{long_id}")
        assert still["state"] == "running"

        # usage(since=) takes the CLI's date (the reader's midnight), a duration too
        monkeypatch.setenv("TZ", "America/Los_Angeles")
        frame = await asyncio.to_thread(client.usage, since="2026-12-01")
        assert frame is not None
        await asyncio.to_thread(client.usage, since="7d", until="2099-01-01")
    finally:
        client.close()

    # the async client's wait: the same poll and errors
    aclient = AsyncSchedClient(Connection(url=url, token=IVAN_TOKEN))
    try:
        with pytest.raises(JobFailed, match="exit code 7"):
            await aclient.wait(failing["id"], check=True)
        with pytest.raises(WaitTimeout):
            await aclient.wait("long", timeout=0)
        queued = await aclient.submit(command=SLEEP_JOB["command"], gpus=0, name="a-kw", time_limit="1m")
        await aclient.cancel(queued["id"])
        assert (await aclient.wait(queued["id"]))["state"] == "cancelled"
    finally:
        await aclient.aclose()
