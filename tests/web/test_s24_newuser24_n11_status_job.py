"""New user 24, N11: ``%schedule status JOB`` prints a job's line and the quickstart teaches it, but
``jupyter-sched status JOB`` was refused ("unexpected arguments: lowml"). Now ``status JOB`` (an id,
or a name of the caller's) prints that job's one line, as the magic does; ``--json`` its record.

Real parts: the ``jupyter-sched`` program as a subprocess against a real Jupyter server with the
scheduler extension (tests/web/conftest.py)."""

from __future__ import annotations

import json
import sys
from typing import Any

from jupyter_sched.cli.main import EXIT_OK

from .test_cli import cli  # noqa: F401  (the fixture: the program against the test server)


async def test_newuser24_n11_status_job_prints_the_jobs_line_by_id_and_by_name(cli: Any) -> None:  # noqa: F811
    run = await cli("submit", "--gpus", "0", "--name", "n11job", "--", sys.executable, "-c", "print('n11')")
    assert run.code == EXIT_OK, run.err
    job_id = run.out.split()[1].rstrip(":")
    assert (await cli("wait", job_id)).code == EXIT_OK
    by_id = await cli("status", job_id)
    assert by_id.code == EXIT_OK and "unexpected arguments" not in by_id.err, by_id
    assert job_id in by_id.out and "succeeded" in by_id.out.lower() and len(by_id.out.strip().splitlines()) == 1, by_id
    by_name = await cli("status", "n11job")
    assert by_name.code == EXIT_OK and by_name.out == by_id.out, (by_name, by_id)
    record = await cli("status", "n11job", "--json")
    assert record.code == EXIT_OK and json.loads(record.out)["id"] == job_id, record.out
    missing = await cli("status", "no-such-job")
    assert missing.code != EXIT_OK and "no-such-job" in missing.err and "Traceback" not in missing.err, missing
    summary = await cli("status")  # no JOB: the summary, as before
    assert summary.code == EXIT_OK and job_id not in summary.out.splitlines()[0], summary.out
