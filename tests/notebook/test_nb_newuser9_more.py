"""New user 9, N10 in a real kernel: ``%schedule logs <name>`` takes a unique name of the caller's own
job for its id; several jobs of that name → the ids listed (the CLI's ``logs``/``wait``: tests/onboarding/
test_newuser9_more.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from nb_harness import wait_for
from test_nb_newuser import _job_id, _seen, _state, api  # noqa: F401  (api: the fixture)

from jupyter_sched.client import AsyncSchedClient


@pytest.mark.slow
async def test_newuser9_n10_schedule_logs_takes_a_unique_job_name(start_kernel: Any, api: AsyncSchedClient,  # noqa: F811
                                                                   jp_root_dir: Path) -> None:
    kernel = await start_kernel()
    await kernel.run(f"import os; os.chdir({str(jp_root_dir)!r})\n%env JUPYTER_SCHED_WIDGETS=0")
    ids = []
    for name in ("cellA", "dup", "dup"):
        cell = await kernel.run(f"%%schedule --gpus 0 --name {name}\nprint('hi from {name}')")
        assert cell.error is None, cell.text
        ids.append(_job_id(cell))
    for job_id in ids:
        await wait_for(lambda j=job_id: _state(api, j, "succeeded"), timeout_s=60)
    logs = await kernel.run("%schedule logs cellA")
    assert logs.error is None and "hi from cellA" in _seen(logs), _seen(logs)
    dup = _seen(await kernel.run("%schedule logs dup"))  # a rerun's name: the newest, said (newuser22 N4)
    assert f"dup is {ids[2]} (" in dup and "the newest of 2 jobs named dup" in dup and "hi from dup" in dup, dup
