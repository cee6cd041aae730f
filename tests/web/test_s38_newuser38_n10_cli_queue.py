"""newuser38 n10 through the CLI: ``jupyter-sched queue`` showed a held job at ``POS 1`` while the next waiting job
was the one to start. A held job has no start position (its POS is empty, its line says it is held); the next
waiting job is 1 — a real server (engine ticking, simulated GPUs) and a real ``jupyter-sched`` subprocess."""

from __future__ import annotations

from typing import Any

from jupyter_sched.cli.main import EXIT_OK

from .conftest import SLEEP_JOB, running_job, wait_for
from .test_cli import cli  # noqa: F401  (the fixture: a real jupyter-sched subprocess against this server)


def _rows(out: str) -> dict[str, list[str]]:
    """The queue table's rows by NAME (the last column), each split into its cells."""
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("ID "))
    columns = lines[head].split()
    rows: dict[str, list[str]] = {}
    for line in lines[head + 1:]:
        if line.startswith(" "):
            continue  # a detail line
        cells = line.split()
        if len(cells) == len(columns) - 1:  # an empty POS cell
            cells.insert(columns.index("POS"), "")
        rows[cells[-1]] = cells
    return rows


async def test_newuser38_n10_a_held_job_has_no_pos_and_the_next_waiting_job_is_1(cli: Any, api: Any) -> None:  # noqa: F811
    for i in range(4):
        await running_job(api, 1, name=f"fill-{i}")
    for name in ("p1", "p2"):
        status, job = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": name})
        assert status == 201, job
    run = await cli("hold", "p1")
    assert run.code == EXIT_OK, run

    async def numbered() -> Any:
        run = await cli("queue")
        rows = _rows(run.out)
        return run if rows.get("p1", [""])[5] == "" and rows.get("p2", ["", "", "", "", "", ""])[5] == "1" else None

    run = await wait_for(numbered, timeout_s=60.0, poll_s=0.5)
    assert "held by you at" in run.out, run.out  # its line says why it has no place
