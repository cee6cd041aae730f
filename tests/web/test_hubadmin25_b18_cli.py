"""hubadmin25 B18 (CLI half): ``jupyter-sched hold|release|update|top`` as a person in a terminal uses them — one
line per job saying what changed, the server's refusal as one line and exit 1 (the other jobs go on), the
relative time limit (``+1h``, ``-5m``) and the name of one's own job taken for its id."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, EXIT_USAGE

from .conftest import BOSS_TOKEN, IVAN_TOKEN, SLEEP_JOB, running_job
from .test_cli import cli  # noqa: F401  (the fixture: a real jupyter-sched subprocess against this server)


async def test_hubadmin25_b18_hold_release_update_and_top_from_the_cli(cli: Any, api: Any) -> None:  # noqa: F811
    for i in range(4):
        await running_job(api, 1, name=f"fill-{i}")
    status, job = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "nightly"})
    assert status == 201, job
    jid = job["id"]

    run = await cli("hold", "nightly")
    assert run.code == EXIT_OK, run
    assert run.out == f"{jid} (nightly): held (release with: jupyter-sched release {jid})\n", run
    run = await cli("status", "nightly")
    assert "held by you at" in run.out and "ETA unknown: held" in run.out, run  # newuser30 n19

    run = await cli("hold", "nightly", "no-such-job")
    assert run.code == EXIT_REFUSED, run
    assert run.out.startswith(f"{jid} (nightly): already held by you since "), run
    assert run.err.count("\n") == 1 and "not_found" in run.err, run

    run = await cli("update", "nightly", "--time-limit", "+1h", "--priority", "low")
    assert run.code == EXIT_OK, run
    assert run.out == f"{jid} (nightly): time limit 10m → 1h10m; priority normal → low\n", run
    run = await cli("update", "nightly", "--time-limit", "-5m")  # written apart, as README says (newuser29 N3)
    assert run.code == EXIT_OK and "time limit 1h10m → 1h05m" in run.out, run
    run = await cli("update", "nightly")
    assert run.code == EXIT_USAGE and "say what to change" in run.err, run
    run = await cli("update", "nightly", "--priority", "high")
    assert run.code == EXIT_REFUSED and "not granted to ivan" in run.err and run.err.count("\n") == 1, run

    run = await cli("top", "nightly")
    assert run.code == EXIT_REFUSED and "only an admin puts a job first in its class" in run.err, run
    admin = await cli("--token", BOSS_TOKEN, "top", jid)
    assert admin.code == EXIT_OK and admin.out == f"{jid} (nightly): put first in its class (low)\n", admin

    run = await cli("release", "nightly")
    assert run.code == EXIT_OK and run.out.startswith(f"{jid} (nightly): released (held by you since "), run
    run = await cli("release", "nightly")
    assert run.code == EXIT_OK and run.out == f"{jid} (nightly): not held: nothing to release\n", run


async def test_hubadmin25_b18_schedule_hold_and_release_in_a_notebook(api: Any, http_server_port: Any,
                                                                    jp_base_url: str) -> None:
    import asyncio
    import contextlib
    import io

    from jupyter_sched.client import connect
    from jupyter_sched.magics.core import SchedMagics
    from jupyter_sched.magics.parsing import parse_schedule_line

    assert parse_schedule_line("hold a b").job_ids == ("a", "b")
    for i in range(4):
        await running_job(api, 1, name=f"fill-{i}")
    status, job = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "nb-job"})
    assert status == 201, job
    url = f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}"

    def magic(line: str) -> str:
        shown = io.StringIO()
        with contextlib.redirect_stdout(shown), contextlib.redirect_stderr(shown):
            SchedMagics(None, client_factory=lambda: connect(url, IVAN_TOKEN)).schedule(line)
        return shown.getvalue()

    loop = asyncio.get_running_loop()
    held = await loop.run_in_executor(None, magic, "hold nb-job")
    # in the notebook's words since newuser31 n7 (was `release with: jupyter-sched release …`)
    assert held == f"{job['id']} (nb-job): held (release with: %schedule release {job['id']})\n", held
    released = await loop.run_in_executor(None, magic, f"release {job['id']} no-such-job")
    assert released.startswith(f"{job['id']} (nb-job): released (held by you since "), released
    assert "no-such-job" in released, released  # one line for the refused one, the other went on
    assert parse_schedule_line("update j-1 --time-limit +1h --priority Low").changes == {"time_limit": "+1h",
                                                                                        "priority": "low"}
    assert parse_schedule_line("top j-1 --undo").changes == {"top": False}
    updated = await loop.run_in_executor(None, magic, "update nb-job --time-limit=-5m")
    assert updated == f"{job['id']} (nb-job): time limit 10m → 5m\n", updated
    from jupyter_sched.magics.core import MagicError

    with pytest.raises(MagicError, match="only an admin puts a job first in its class"):  # one job: the magic's error
        await loop.run_in_executor(None, magic, "top nb-job")
