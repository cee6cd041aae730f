"""Every %schedule subcommand and the remaining %gpu actions, in a real kernel against a real server."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from nb_harness import TOKEN, Kernel, wait_for
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_sched.client import AsyncSchedClient, Connection

pytestmark = pytest.mark.slow  # end-to-end: kernels, jobs and notebooks on a real server

StartKernel = Callable[..., Awaitable[Kernel]]

APP = '''import http.server, sys
port = int(sys.argv[1])
class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"hello from the service")
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Hello).serve_forever()
'''


@pytest.fixture
def sched_settings() -> dict[str, Any]:
    """A profile to submit with, and 4 simulated GPUs."""
    return {"profiles": {"small": {"description": "one GPU for ten minutes", "gpus": 1, "time_limit": "10m"}}}


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def _job_id(result: Any) -> str:
    return str(result.data[-1]["text/plain"]).strip("'\"")


async def test_profiles_queue_jobs_dryrun_wait_and_cancel(start_kernel: StartKernel, api: AsyncSchedClient,
                                                          jp_root_dir: Path) -> None:
    kernel = await start_kernel()
    profiles = await kernel.run("%schedule profiles")
    assert "one GPU for ten minutes" in profiles.text
    (jp_root_dir / "sleepy.py").write_text("import time, sys\nprint('start', sys.argv[1:], flush=True)\ntime.sleep(60)\n")
    submitted = await kernel.run("job = %schedule run sleepy.py --seconds 60 --profile small --name sleepy\njob")
    assert submitted.error is None, submitted.text
    job_id = _job_id(submitted)
    job = await api.job(job_id)
    assert (job["profile"], job["time_limit_s"], job["resources"]["gpus"]) == ("small", 600.0, 1)
    assert job["command"][-2:] == ["--seconds", "60"]
    await wait_for(lambda: kernel.run(f"%schedule status {job_id}"), timeout_s=5)
    queue = await kernel.run("%schedule queue")
    assert job_id in queue.text and "sleepy" in queue.text
    mine = await kernel.run("%schedule jobs")
    assert job_id in mine.text
    dry = await kernel.run("%schedule dryrun --gpus 2")
    assert dry.error is None, dry.text
    assert "Would start now on" in dry.stdout
    never = await kernel.run("%schedule dryrun --gpus 64")
    assert never.error is not None or "Would" in never.text
    assert "Traceback" not in never.text
    cancelled = await kernel.run(f"%schedule cancel {job_id}")
    assert "Cancelled" in cancelled.stdout
    waited = await kernel.run(f"%schedule wait {job_id} --timeout 1m")
    assert "cancelled" in waited.stdout
    # issue 20 (new-user round 3, finding 32): a profile's time limit is a job's, not a kernel lease's
    leased = await kernel.run("%gpu request --profile small --for 30s")
    assert leased.error is None, leased.text
    lease_id = leased.stdout.split("(lease ", 1)[1].split(")", 1)[0]
    assert (await api.job(lease_id))["time_limit_s"] is None
    assert (await kernel.run("%gpu release")).error is None


async def test_a_notebook_job_runs_headless_and_keeps_the_executed_copy(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_root_dir: Path) -> None:
    nb = new_notebook(cells=[new_code_cell("print('inside the scheduled notebook', 6 * 7)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(jp_root_dir / "analysis.ipynb"))
    kernel = await start_kernel()
    submitted = await kernel.run("%schedule notebook analysis.ipynb --gpus 0")
    assert submitted.error is None, submitted.text
    job_id = _job_id(submitted)
    follow = await kernel.run(f"%schedule logs {job_id} -f", timeout_s=120)
    assert "succeeded" in follow.stdout, follow.text
    # the id, not "JOB"; how to open it, not a path its owner may not read (newuser39 N1)
    # in the magic's words: a hub kernel has no jupyter-sched on its PATH (newuser41 n11)
    assert f"save it here with %schedule logs {job_id} --notebook" in submitted.stdout, submitted.stdout
    assert any(f"save it here with: %schedule logs {job_id} --notebook" in line for line in follow.stdout.splitlines()), \
        follow.stdout
    assert "jupyter-sched logs" not in submitted.stdout + follow.stdout
    outputs = json.dumps((await api.executed_notebook(job_id))["cells"][0]["outputs"])
    assert "inside the scheduled notebook 42" in outputs


async def test_a_service_reports_its_url_and_answers_there(start_kernel: StartKernel, api: AsyncSchedClient,
                                                          jp_root_dir: Path) -> None:
    (jp_root_dir / "app.py").write_text(APP)
    port = _free_port()
    kernel = await start_kernel()
    submitted = await kernel.run(f"%schedule serve app.py {port} --port {port} --gpus 1")
    assert submitted.error is None, submitted.text
    assert f"URL from this kernel: http://127.0.0.1:{port}/" in submitted.stdout
    job_id = _job_id(submitted)

    async def answers() -> bool:
        try:
            async with httpx.AsyncClient() as http:
                return (await http.get(f"http://127.0.0.1:{port}/", timeout=1)).text == "hello from the service"
        except httpx.HTTPError:
            return False

    await wait_for(answers, timeout_s=30)
    assert (await api.job(job_id))["kind"] == "inference"
    await kernel.run(f"%schedule cancel {job_id}")


async def test_newuser7_finding_9_a_service_gets_its_port_and_its_status_says_whether_it_answers(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_root_dir: Path) -> None:
    """New user 7, F9 (IMPORTANT): ``%schedule serve app.py --port P`` told the app nothing (it served on
    its own 8000 while P stayed silent), and ``%schedule status`` read the same for it as for a service
    that answered. The app gets ``$PORT``; status says "ready on port P" once the port answers."""
    (jp_root_dir / "app_env.py").write_text(APP.replace("port = int(sys.argv[1])",
                                                        "import os; port = int(os.environ['PORT'])"))
    port = _free_port()
    kernel = await start_kernel()
    submitted = await kernel.run(f"%schedule serve app_env.py --port {port} --gpus 1")
    assert submitted.error is None, submitted.text
    assert "The app is given the port as $PORT" in submitted.stdout
    job_id = _job_id(submitted)

    async def ready() -> bool:
        status = await kernel.run(f"%schedule status {job_id}")
        return f"ready on port {port}" in status.stdout

    await wait_for(ready, timeout_s=60)
    async with httpx.AsyncClient() as http:
        assert (await http.get(f"http://127.0.0.1:{port}/", timeout=5)).text == "hello from the service"
    await kernel.run(f"%schedule cancel {job_id}")


async def test_newuser7_finding_14_a_long_logs_end_is_shown_with_what_was_left_out(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_root_dir: Path) -> None:
    """New user 7, F14 (IMPORTANT): ``%schedule logs J`` of a finished job with a 3.9 MB log showed its
    first 64 KB, cut mid-line, said nowhere — never the traceback at its end; ``-f`` poured all of it
    into the cell. Both show the last lines, after a line saying what was left out and where it is."""
    script = ("import sys\nfor i in range(60000): print('epoch', i, 'loss', 1 / (i + 1))\n"
              "raise RuntimeError('CUDA out of memory (simulated)')\n")
    job = await api.submit({"gpus": 0, "name": "biglog", "command": [sys.executable, "-c", script],
                            "working_dir": str(jp_root_dir)})

    async def failed() -> bool:
        return (await api.job(job["id"]))["state"] == "failed"

    await wait_for(failed, timeout_s=120)
    kernel = await start_kernel()
    for line in (f"%schedule logs {job['id']}", f"%schedule logs {job['id']} -f"):
        shown = await kernel.run(line, timeout_s=120)
        assert shown.error is None, shown.text
        out = shown.stdout
        assert "RuntimeError: CUDA out of memory (simulated)" in out, out[-500:]
        assert "epoch 0 loss" not in out and len(out) < 20000, len(out)
        note = out.splitlines()[0]
        # what is shown, exactly (newuser30 n7: "the first 50 MB of 50 MB" was rounding's)
        assert note.startswith("[… only the last ") and " log are shown here" in note \
            and f"`jupyter-sched logs {job['id']}` in a terminal prints it all" in note, note
        assert out.splitlines()[1].startswith("epoch "), out.splitlines()[1]  # a whole line, not a cut one


async def test_gpu_keepalive_watch_and_release(start_kernel: StartKernel, api: AsyncSchedClient) -> None:
    kernel = await start_kernel()
    nothing = await kernel.run("%gpu keepalive")
    assert "holds no lease" in nothing.text and "Traceback" not in nothing.text
    assert (await kernel.run("%gpu request 1 --name mine")).error is None
    kept = await kernel.run("%gpu keepalive")
    assert kept.error is None and "keepalive recorded; its GPUs are kept until " in kept.stdout, kept.text
    assert "bound to the kernel" not in kept.stdout  # the lease's own message is not the keepalive's answer
    watched = await kernel.run("%gpu watch --seconds 1 --interval 0.5")
    assert watched.error is None, watched.text
    if (await api.config())["features"].get("telemetry"):
        assert any("application/vnd.plotly.v1+json" in d or "application/vnd.jupyter.widget-view+json" in d
                   for d in watched.data)
    else:
        assert "offers no live GPU telemetry yet" in watched.stdout
    released = await kernel.run("%gpu release")
    assert "Released lease" in released.stdout
    again = await kernel.run("%gpu release")
    assert "nothing to release" in again.stdout


async def test_newuser6_finding_18_a_lease_ended_from_outside_is_noticed_and_its_gpus_hidden(
        start_kernel: StartKernel, api: AsyncSchedClient) -> None:
    """New user 6, F18 (IMPORTANT): `jupyter-sched cancel` of a kernel's lease (or idle reclaim) left
    CUDA_VISIBLE_DEVICES naming the GPU in the kernel while `%gpu status` said it held none: the
    next cell would use a GPU handed to someone else. `%gpu status` now says so and hides it."""
    kernel = await start_kernel()
    granted = await kernel.run("%gpu request 1 --name outside")
    assert granted.error is None, granted.text
    named = (await kernel.run("import os; print(repr(os.environ['CUDA_VISIBLE_DEVICES']))")).stdout.strip()
    assert named.startswith("'GPU-"), named
    lease = next(le for le in await api.leases() if le.get("name") == "outside" and le["state"] == "running")
    await api.release_lease(lease["id"])  # as `jupyter-sched cancel` does, from outside the kernel
    status = await kernel.run("%gpu status")
    assert status.error is None, status.text
    said = " ".join(status.stdout.split())
    assert f"This kernel's lease {lease['id']} ended (" in said and f"CUDA_VISIBLE_DEVICES named {named[1:-1]}" in said
    assert "it is now '' (no GPU)" in said and "This kernel holds no GPUs" in said, said
    assert (await kernel.run("print(repr(os.environ['CUDA_VISIBLE_DEVICES']))")).stdout.strip() == "''"
    again = await kernel.run("%gpu status")  # said once
    assert "ended (" not in again.stdout


async def test_newuser6_finding_18_the_next_cell_after_a_release_from_the_panel_sees_no_gpu(
        start_kernel: StartKernel, api: AsyncSchedClient) -> None:
    """New user 6, F18: released from the panel (or a terminal, or idle reclaim), the kernel's next
    cell still had CUDA_VISIBLE_DEVICES naming the GPU. Before a cell (looked at every few seconds)
    the magic notices the lease ended and hides the GPU, saying so in that cell's output."""
    kernel = await start_kernel()
    # the look before a cell comes at most every LEASE_CHECK_S (5 s); this kernel's magic looks every 1 s (session 41)
    assert (await kernel.run("get_ipython().find_magic('gpu').__self__.LEASE_CHECK_S = 1.0")).error is None
    assert (await kernel.run("%gpu request 1 --name panelrel")).error is None
    # granted: the magic returned with its GPUs; the engine may not have recorded it running yet (run D of session 36)
    lease = next(le for le in await api.leases() if le.get("name") == "panelrel" and le["state"] in ("admitted", "running"))
    await api.release_lease(lease["id"])  # the panel's Release button: DELETE leases/{id}
    # a cell that outlasts the check interval, then the cell that would use the GPU
    waited = await kernel.run("import os, time; time.sleep(get_ipython().find_magic('gpu').__self__.LEASE_CHECK_S + 0.5)")
    after = await kernel.run("print(repr(os.environ['CUDA_VISIBLE_DEVICES']))")
    said = " ".join(after.stdout.split())
    assert said.endswith("''"), said
    # said before whichever cell came first after the check interval: once, in one of the two
    notices = [" ".join(r.stdout.split()).count(f"This kernel's lease {lease['id']} ended") for r in (waited, after)]
    assert sorted(notices) == [0, 1], (waited.stdout, after.stdout)
    status = await kernel.run("%gpu status")
    assert "This kernel holds no GPUs" in status.stdout and "ended (" not in status.stdout  # said once, before
