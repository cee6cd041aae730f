"""Issue 20's magic findings, each as a new user met it: a real kernel against a real server.

``%%schedule --team``, ``%schedule wait`` printing its end once, a GPU-memory refusal that talks
about memory per GPU, ``%gpu release`` saying what CUDA_VISIBLE_DEVICES is now and why, and
``%gpu`` showing the utilization its banner promises for simulated GPUs.
"""

from __future__ import annotations

import asyncio
import getpass
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from nb_harness import TOKEN, Kernel, wait_for

from jupyter_sched.client import AsyncSchedClient, Connection

pytestmark = pytest.mark.slow

StartKernel = Callable[..., Awaitable[Kernel]]


@pytest.fixture
def sched_settings() -> dict[str, Any]:
    """Telemetry sampled often, so a simulated GPU's utilization shows within a second; the owner is
    in teams default and research (a request may charge only the caller's own teams, issue 15)."""
    return {"telemetry_interval_s": 0.5, "stop_grace_s": 5,
            "user_teams": {getpass.getuser(): ["default", "research"]}}


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


def _job_id(result: Any) -> str:
    return str(result.data[-1]["text/plain"]).strip("'\"")


async def test_the_cell_magic_submits_to_the_team_it_is_given(start_kernel: StartKernel,
                                                              api: AsyncSchedClient) -> None:
    kernel = await start_kernel()
    result = await kernel.run("%%schedule --gpus 0 --team research --name teamed\nprint('hi')")
    assert result.error is None, result.text
    job = await api.job(_job_id(result))
    assert job["team"] == "research"


async def test_schedule_wait_prints_the_final_line_once(start_kernel: StartKernel, jp_root_dir: Path) -> None:
    kernel = await start_kernel()
    (jp_root_dir / "short.py").write_text("import time\ntime.sleep(1.5)\nprint('done')\n")
    submitted = await kernel.run("job = %schedule run short.py --gpus 1 --name short\njob")
    job_id = _job_id(submitted)
    # the text display (no widgets): every update of the bar is a message the harness records
    waited = await kernel.run(f"%env JUPYTER_SCHED_WIDGETS=0\n%schedule wait {job_id} --timeout 2m")
    assert waited.error is None, waited.text
    final = f"job {job_id} (short): succeeded, exit code 0"
    assert waited.text.count(final) == 1, waited.text  # the bar ends as a "waited" note, not a second copy
    assert f"job {job_id} (short): waited" in waited.text  # titled with its name (new user 12, N1)


async def test_a_request_above_every_gpus_memory_says_memory_per_gpu(start_kernel: StartKernel) -> None:
    kernel = await start_kernel()
    result = await kernel.run("%gpu request 1 --mem-per-gpu 200GiB")
    assert result.error is not None
    said = result.text
    assert "--mem-per-gpu" in said and "200 GiB of memory per GPU" in said and "80 GiB" in said, said
    assert "fewer GPUs" not in said and "Traceback" not in said


async def test_a_request_beyond_any_memory_is_refused_naming_the_bound(start_kernel: StartKernel) -> None:
    kernel = await start_kernel()
    result = await kernel.run("%gpu request 1 --mem-per-gpu 99999999999999999999999TiB")
    assert result.error is not None
    assert "--mem-per-gpu must be at most 1 PiB per GPU" in result.text, result.text
    assert "104857599999999991203906977792" not in result.text


async def test_release_says_what_cuda_visible_devices_is_now_and_why(start_kernel: StartKernel) -> None:
    kernel = await start_kernel()
    assert (await kernel.run("%gpu request 1")).error is None
    released = await kernel.run("%gpu release")
    assert released.error is None, released.text
    assert "CUDA_VISIBLE_DEVICES is now '' (empty)" in released.stdout
    assert "unset would show it all of this host's GPUs" in released.stdout
    assert "cleared" not in released.stdout
    check = await kernel.run("import os; print(repr(os.environ.get('CUDA_VISIBLE_DEVICES')))")
    assert check.stdout.strip() == "''"


async def test_gpu_status_shows_utilization_of_simulated_gpus(start_kernel: StartKernel) -> None:
    """The banner says utilization follows the CPU activity of the work on simulated GPUs: the
    table must then show numbers, not ``None``, in ``util_pct``."""
    kernel = await start_kernel()
    probe = ("frame = %gpu\n"
             "print('UTIL', list(frame['util_pct']))")

    async def utilization() -> list[Any] | None:
        result = await kernel.run(probe)
        line = next((ln for ln in result.stdout.splitlines() if ln.startswith("UTIL ")), "")
        values = eval(line[5:]) if line else []  # a printed list of floats / None
        return values if values and all(isinstance(v, (int, float)) for v in values) else None

    values = await wait_for(utilization, timeout_s=30)
    assert all(0.0 <= v <= 100.0 for v in values)
    banner = await kernel.run("%gpu")
    assert "utilization comes from the CPU activity" in banner.stdout


def test_the_magics_module_still_imports_without_ipywidgets() -> None:  # the text path of Progress
    from jupyter_sched.magics.display import text_bar

    assert text_bar(0.5, 10) == "[#####-----]"  # its number said in words after it (newuser23 N18)
    assert text_bar(None, 10).startswith("[") and "..." in text_bar(None, 10)
    assert sys.modules.get("jupyter_sched.magics.display") is not None


async def test_a_dryrun_that_can_never_fit_says_never_not_wait(start_kernel: StartKernel) -> None:
    """Found trying the first hour again: "Would wait: queued · needs 8 GPUs … largest node has 4"."""
    kernel = await start_kernel()
    result = await kernel.run("%schedule dryrun --gpus 8")
    assert result.stdout.startswith("Would never start here: needs 8 GPUs"), result.text
    assert "Would wait" not in result.stdout and "queued" not in result.stdout


def test_a_job_no_cycle_has_looked_at_yet_says_so_in_the_queue_table() -> None:
    from datetime import datetime, timezone

    from jupyter_sched.magics.render import queue_frame

    frame = queue_frame([{"id": "j-1", "state": "pending", "resources": {"gpus": 1}, "reason": None}],
                        datetime(2026, 3, 30, tzinfo=timezone.utc))
    assert frame.loc[0, "detail"] == "waiting for the next scheduling cycle"
