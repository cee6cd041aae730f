"""newuser36 n5 and n6 (CLI and magics wording; issue 20's first hour).

n5: ``jupyter-sched jobs --all --team nlp --state failed --since 7d`` with nothing found said "… submitted since
2026-11-30T04:26:10Z." where ``status`` and ``usage`` say a period as ``since Nov 30 04:26 UTC``: now the same clock
words (the reader's zone, named; ``--utc``: UTC).

n6: ``%schedule logs JOB -n 20`` was "unknown argument -n" while ``jupyter-sched logs JOB -n 20`` works, and
``jupyter-sched logs JOB -n -3`` was refused naming ``--tail``. The option is one table now
(``wording.flags.TAIL_OPTIONS``/``line_count``, both parsers): the magic shows the last N lines (within its bytes
bound, said when that cut some), and a refusal names the option typed.

Real parts: the pytest-jupyter server with the extension and its SQLite store; the CLI's ``main`` and the magics in
this process against it over HTTP; the job's log a real file (its record inserted as the newuser35 N2 tests do).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE, main
from jupyter_sched.client import connect
from jupyter_sched.magics.core import LOG_TAIL_BYTES, MagicError, SchedMagics
from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job

from .conftest import IVAN_TOKEN


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):  # argparse's usage errors are written to sys.stderr
        rc = main(list(argv), out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


async def test_newuser36_n5nit_jobs_found_none_since_says_the_period_in_clock_words(
        sched_app: Any, api: Any, http_server_port: Any, jp_base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_URL", f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}")
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)
    loop = asyncio.get_running_loop()
    rc, out, err = await loop.run_in_executor(None, lambda: _cli("--utc", "jobs", "--state", "failed", "--since", "7d"))
    # before: "No failed jobs submitted since 2026-11-30T04:26:10Z."
    assert rc == EXIT_OK and re.fullmatch(r"No failed jobs submitted since \w{3} \d{1,2} \d\d:\d\d UTC\.\n", out), (out, err)
    rc, out, err = await loop.run_in_executor(None, lambda: _cli("--utc", "jobs", "--since", "2026-11-01",
                                                                 "--until", "2026-11-02T06:30:00+02:00"))
    assert (rc, out) == (EXIT_OK, "No jobs submitted since Nov 1 00:00 UTC and before Nov 2 04:30 UTC.\n"), (out, err)
    rc, out, err = await loop.run_in_executor(None, lambda: _cli("jobs", "--until", "2026-11-02"))
    assert rc == EXIT_OK and "T00:00:00Z" not in out and out.startswith("No jobs submitted before Nov "), (out, err)


async def test_newuser36_n6nit_schedule_logs_takes_the_clis_n_and_a_refusal_names_the_option_typed(
        sched_app: Any, api: Any, http_server_port: Any, jp_base_url: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "j-n36n6.log"
    log.write_text("".join(f"row {i:03d} {'x' * 490}\n" for i in range(300)), encoding="utf-8")  # 150 KB
    job = replace(make_job("j-n36n6", user="ivan", state=JobState.SUCCEEDED), started_at=T0, finished_at=T0)
    sched_app.services.store.insert_job(JobRecord(job=job, executor="local", handle={"log": str(log)}))
    url = f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}"
    monkeypatch.setenv("JUPYTER_SCHED_URL", url)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)

    def magic(line: str) -> str:
        shown = io.StringIO()
        with contextlib.redirect_stdout(shown):
            SchedMagics(None, client_factory=lambda: connect(url, IVAN_TOKEN)).schedule(line)
        return shown.getvalue()

    def refused(line: str) -> str:
        with pytest.raises(MagicError) as caught:
            magic(line)
        return str(caught.value)

    loop = asyncio.get_running_loop()
    rc, cli_out, _ = await loop.run_in_executor(None, lambda: _cli("logs", "j-n36n6", "-n", "3"))
    assert rc == EXIT_OK and cli_out == "".join(lines[-3:]), cli_out[:200]
    for typed in ("-n 3", "--tail 3", "--tail=3", "-f -n 3"):  # before: "unknown argument -n"
        said = await loop.run_in_executor(None, magic, f"logs j-n36n6 {typed}")
        assert said.startswith(cli_out) and "[…" not in said, (typed, said[:300])
    said = await loop.run_in_executor(None, magic, "logs j-n36n6 -n 0")
    assert said == "", said  # nothing asked for, and no "no output" (the log has some)
    # more lines than the notebook's bytes bound holds: the last that fit, and a line saying so and where all are
    said = await loop.run_in_executor(None, magic, "logs j-n36n6 -n 200")
    shown = said.splitlines(keepends=True)
    assert shown[0].startswith("[… the last 200 lines are more than a notebook shows: only the last "), shown[0]
    assert "`jupyter-sched logs j-n36n6 -n 200` in a terminal prints them all]" in shown[0], shown[0]
    assert shown[1:] == lines[-(len(shown) - 1):] and len("".join(shown[1:]).encode()) <= LOG_TAIL_BYTES, shown[:2]
    # a refusal names the option as typed, in the CLI and the magic alike (before: `-n -3` was said as --tail)
    for flag in ("-n", "--tail"):
        rc, _, err = await loop.run_in_executor(None, _cli, "logs", "j-n36n6", flag, "-3")
        assert rc == EXIT_USAGE and err.startswith(f"jupyter-sched logs: {flag}: '-3' is not a count of lines"), err
        said = await loop.run_in_executor(None, refused, f"logs j-n36n6 {flag} -3")
        assert f"{flag}: '-3' is not a count of lines — give 0 or more" in said and "-n/--tail" not in said, said
    said = await loop.run_in_executor(None, refused, "logs j-n36n6 -n many")
    assert "-n: 'many' is not a count of lines" in said, said
