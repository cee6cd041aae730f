"""The example notebooks execute headless (nbclient) in kernels started by a real jupyter_sched server.

Each notebook runs unchanged from ``notebooks/`` in a tmp root dir against the simulated default
inventory (this machine has no GPU); the assertions read the cells' outputs.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from nb_harness import TOKEN, Kernel, cell_text, wait_for
from nbclient import NotebookClient

from tests.onboarding.test_readme import example_notebooks

pytestmark = pytest.mark.slow  # end-to-end: kernels, jobs and notebooks on a real server

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


async def _execute(serverapp: Any, root: Path, name: str) -> nbformat.NotebookNode:
    shutil.copy(NOTEBOOKS / name, root / name)
    nb = nbformat.read(str(root / name), as_version=4)
    kernel = await Kernel.launch(serverapp)
    try:
        client = NotebookClient(nb, km=serverapp.kernel_manager.get_kernel(kernel.id), timeout=180, allow_errors=False)
        await client.async_execute()
    finally:
        kernel.stop()
        await serverapp.kernel_manager.shutdown_kernel(kernel.id, now=True)
    return nb


def _text(nb: nbformat.NotebookNode) -> str:
    return "\n".join(text for text in (cell_text(cell) for cell in nb.cells) if text)


def _mimetypes(nb: nbformat.NotebookNode) -> set[str]:
    return {mime for cell in nb.cells for out in cell.get("outputs", []) for mime in out.get("data", {})}


def test_notebooks_are_committed_without_outputs() -> None:
    for path in example_notebooks():  # not those the examples write when run (newuser34 N7)
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            assert not cell.get("outputs") and not cell.get("execution_count"), path.name


async def test_quickstart_runs_end_to_end(sched_app: Any, jp_serverapp: Any, jp_root_dir: Path) -> None:
    # newuser31 n11: the user's own train.py beside it was overwritten by %%writefile train.py
    mine = jp_root_dir / "train.py"
    mine.write_text("print('my own training script')\n")
    nb = await _execute(jp_serverapp, jp_root_dir, "quickstart.ipynb")
    assert mine.read_text() == "print('my own training script')\n", "test_newuser31_n11: the user's train.py is left alone"
    text = _text(nb)
    assert "Allocated GPU-" in text
    granted = next(line for line in text.splitlines() if line.startswith("granted:")).split()[-1]
    assert f"CUDA_VISIBLE_DEVICES: {granted}" in text
    assert "Submitted job" in text
    assert "CUDA_VISIBLE_DEVICES in the job: GPU-" in text
    assert "checkpoint written to checkpoints/model.npz" in text
    assert "succeeded" in text
    assert "Released lease" in text
    assert (jp_root_dir / "checkpoints" / "model.npz").is_file()
    # the README's `%%schedule … import train; train.main()`: the cell's job imports train.py beside it (newuser26 N9)
    assert (jp_root_dir / "checkpoints" / "cell.npz").is_file()
    assert "text/html" in _mimetypes(nb)  # the %gpu and queue DataFrames


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[httpx.AsyncClient]:
    client = httpx.AsyncClient(base_url=f"http://localhost:{jp_http_port}/api/sched/",
                               headers={"Authorization": f"token {TOKEN}"}, timeout=30)
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


async def test_newuser20_n5_admin_quotas_previews_what_it_strands_sends_no_first_line_and_charts_usage(
        sched_app: Any, jp_serverapp: Any, jp_root_dir: Path, api: httpx.AsyncClient) -> None:
    # some GPU work to report: the notebook's own job asks for 0 GPUs (new user 18, N4)
    reply = await api.post("jobs", json={"name": "train", "gpus": 1,
                                         "command": [sys.executable, "-c", "print('trained')"]})
    assert reply.status_code in (200, 201), reply.text
    job_id = reply.json()["id"]

    async def ended() -> bool:
        return bool((await api.get(f"jobs/{job_id}")).json()["state"] == "succeeded")

    await wait_for(ended, timeout_s=60)
    nb = await _execute(jp_serverapp, jp_root_dir, "admin_quotas.ipynb")
    text = _text(nb)
    # issue 20 (new-user finding 10): a fresh server has no quotas — one sentence, not a table with no columns
    assert "No quotas set: every team shares all GPUs." in text
    assert "Empty DataFrame" not in text and "Columns: []" not in text
    preview_cell = next(c for c in nb.cells if "quota_diff(live_lines, proposed)" in c.source)
    preview = "".join(str(o.get("data", {}).get("text/plain", "")) for o in preview_cell.outputs)
    assert preview.splitlines()[0].split() == ["team", "user", "gpu_model", "guaranteed", "borrowing_limit", "change"]
    # round 3, finding 13: whole GPU counts and durations as an admin types them; no claim of a column it lacks
    assert ".0 " not in preview and "(whole team)" in preview and "- → 2" in preview and "added" in preview, preview
    assert "preview only: 2 of 4 GPUs would be guaranteed" in text
    assert "window_s" in text and "1800.0" not in text and "30m" in text
    assert "utilized where telemetry exists" not in "".join(c.source for c in nb.cells)
    assert "admin: True" in text
    # new user 25, n8: "telemetry kept: 4h03m" — the window and the 3 minutes to spare said apart
    assert "(the longest idle window) + 3m to spare" in text or "| telemetry kept: none" in text, text
    assert "refused:" in text and "guaranteed" in text
    assert "succeeded" in text
    assert "nb-quota-demo has no line; quotas as in section 1: True" in text
    assert (await api.get("quotas")).json()["quotas"] == []
    # new user 20, N5: with no line in force a demo line would have limited every other team (0 GPUs:
    # others' submits refused while it stood) — none is sent, and the dry runs' warnings say why
    audit = (await api.get("audit", params={"action": "quotas_changed"})).json()
    assert not (audit["records"] if isinstance(audit, dict) else audit), audit
    assert "nothing is sent. The server would warn:" in text
    assert "the server would warn: team default has no share of the GPUs (no quota line): it may use 0 GPUs" in text, text
    assert "application/vnd.plotly.v1+json" in _mimetypes(nb)
    # issue 20: the text promises usage "rolled up per user and team" — the table has a team column
    usage_cell = next(c for c in nb.cells if c.source.startswith("usage = sched.usage("))
    table = "".join(str(o.get("data", {}).get("text/plain", "")) for o in usage_cell.outputs)
    header = table.splitlines()[0].split()
    assert "team" in header and "user" in header, table
    assert "default" in table and "research" not in table and "nb-quota-demo" not in table, table
    # test_newuser30_n10: the period as status says it ("in the last 7 days (since Nov 29 09:18 UTC)"), not raw ISO
    assert "GPU usage in the last 7 days (since " in text and "GPU usage from 20" not in text, text


async def test_newuser18_n4_admin_notebook_preempts_nothing_and_leaves_quotas_as_they_were(
        sched_app: Any, jp_serverapp: Any, jp_root_dir: Path, api: httpx.AsyncClient) -> None:
    """New user 18, N4: the README's admin notebook, run on a server with work, replaced the live
    quotas with example teams and submitted a 1-GPU job to one of them: a borrowing job of another
    team was reclaimed, and teama had no guarantee meanwhile. It must preempt nothing and leave the
    quotas as they were."""
    # team default borrows here: the old no-limit rule for teams without a line (red team 19, R3)
    sched_app.services.store.unlisted_borrowing_limit = None
    live = {"quotas": [{"team": "teama", "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 0},
                       {"team": "teamb", "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 2}]}
    (await api.put("quotas", json=live)).raise_for_status()
    before = (await api.get("quotas")).json()
    sleep = [sys.executable, "-c", "import time; time.sleep(600)"]
    ids = []
    for name, team, gpus in (("waitA", "teama", 2), ("borrow1", "default", 1), ("borrow2", "default", 1)):
        reply = await api.post("jobs", json={"name": name, "team": team, "gpus": gpus, "command": sleep})
        assert reply.status_code in (200, 201), reply.text
        ids.append(reply.json()["id"])

    async def states() -> list[str]:
        return [(await api.get(f"jobs/{job_id}")).json()["state"] for job_id in ids]

    async def all_running() -> bool:
        return await states() == ["running"] * 3

    try:
        await wait_for(all_running, timeout_s=60)  # every GPU is busy: two borrowed by team default
        nb = await _execute(jp_serverapp, jp_root_dir, "admin_quotas.ipynb")
        assert "succeeded" in _text(nb)
        jobs = [(await api.get(f"jobs/{job_id}")).json() for job_id in ids]
        assert [(j["name"], j["state"], j["attempts"], j["preempted_by"]) for j in jobs] == [
            ("waitA", "running", 1, None), ("borrow1", "running", 1, None), ("borrow2", "running", 1, None)]
        audit = (await api.get("audit", params={"limit": 500})).json()
        rows = audit["records"] if isinstance(audit, dict) else audit
        assert not [r for r in rows if r["action"] in ("reclaim", "preempt")], rows
        after = (await api.get("quotas")).json()
        # the lines as they were; where they came from says the notebook's restoring PUT (new user 20, N26)
        assert {k: v for k, v in after.items() if k != "source"} == {k: v for k, v in before.items() if k != "source"}
        # lines were in force: the demo line was sent (it limits nobody new) and its warnings printed
        assert "nb-quota-demo has no line; quotas as in section 1: True" in _text(nb)
        assert "nothing is sent" not in _text(nb)
    finally:
        for job_id in ids:
            await api.delete(f"jobs/{job_id}")


class _OneOut:
    """The server's inventory with its last GPU marked unhealthy (an RMA): hubadmin25 B12."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def current(self) -> Any:
        from dataclasses import replace

        from jupyter_sched.model.resources import Health

        inventory = self.source.current()
        node = inventory.nodes[-1]
        gpus = (*node.gpus[:-1], replace(node.gpus[-1], health=Health.UNHEALTHY, health_reason="ECC errors, RMA"))
        return replace(inventory, nodes=(*inventory.nodes[:-1], replace(node, gpus=gpus)))


async def test_hubadmin25_b12_admin_notebook_runs_while_a_gpu_is_out_for_an_rma(
        sched_app: Any, jp_serverapp: Any, jp_root_dir: Path, api: httpx.AsyncClient) -> None:
    """Hubadmin25 B12: with one GPU marked unhealthy and the lines in force guaranteeing every GPU,
    the notebook's section 4 (the live lines plus its demo line) was refused "teams are guaranteed 4
    GPUs … but only 3 exist" — now sent, with the warning naming the GPU out."""
    live = {"quotas": [{"team": "teama", "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 0},
                       {"team": "teamb", "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 2}]}
    (await api.put("quotas", json=live)).raise_for_status()
    before = (await api.get("quotas")).json()
    ctx = sched_app.services.ctx
    ctx.inventory_source = _OneOut(ctx.inventory_source)
    nb = await _execute(jp_serverapp, jp_root_dir, "admin_quotas.ipynb")
    text = _text(nb)
    assert "nb-quota-demo has no line; quotas as in section 1: True" in text
    assert "only 3 of its 4 may get work now" in text and "marked unhealthy (ECC errors, RMA)" in text, text
    after = (await api.get("quotas")).json()
    assert after["quotas"] == before["quotas"]
    audit = (await api.get("audit", params={"action": "quotas_changed"})).json()
    assert len(audit["records"] if isinstance(audit, dict) else audit) >= 3  # ours, the demo's and its restore


async def test_definitions_notebook_defines_runs_with_parameters_and_reads_a_failure(
        sched_app: Any, jp_serverapp: Any, jp_root_dir: Path) -> None:
    nb = await _execute(jp_serverapp, jp_root_dir, "definitions.ipynb")
    text = _text(nb)
    assert "At 07:00 on Monday through Friday (Europe/Berlin); next run" in text
    assert "apac: mean GPU load over 30 days" not in text  # the run's log, not the notebook, has the numbers
    assert "succeeded" in text and "failed" in text
    assert ("cell 3 (In [4] in the executed notebook) raised ValueError: unknown region 'mars'; use one of "
            "['apac', 'eu', 'us']") in text
    assert "failing cell source: if region not in KNOWN:" in text
    assert "its error: ValueError - unknown region 'mars'" in text
    assert "Deleted" in text


def test_newuser31_n11_the_example_notebooks_write_no_train_py_of_the_users() -> None:
    # before: quickstart's `%%writefile train.py` replaced the user's own train.py ("Overwriting train.py");
    # the executed quickstart test checks a train.py beside it is left as it was
    for path in example_notebooks():  # not those the examples write when run (newuser34 N7)
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"])
            for written in re.findall(r"^%%writefile(?:\s+-a)?\s+(\S+)", source, flags=re.M):
                assert written.startswith(path.stem.split("_")[0] + "_"), (path.name, written)
