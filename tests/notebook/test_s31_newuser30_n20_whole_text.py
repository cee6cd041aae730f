"""newuser30 n20: ``%schedule queue`` (and the magics' other DataFrames) cut text at pandas' 50 characters
in a notebook — a waiting job's reason and a long name ended in "…", in the HTML table and in plain text.

A notebook runs headless (nbclient) in a kernel of a real jupyter_sched server: the queue holds a running
job and a waiting one with a long name and a long reason; the queue's table shows every cell whole in both
views, stays a DataFrame (one filtered from it too), and pandas' own option in the user's kernel is unchanged.
"""

from __future__ import annotations

import asyncio
import html
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from nb_harness import TOKEN, Kernel, wait_for
from nbclient import NotebookClient

pytestmark = pytest.mark.slow  # a kernel and jobs on a real server

HOLDER = "n20-holds-every-gpu-while-the-long-named-one-waits-behind-it-x"
WAITER = "n20-a-training-run-whose-name-is-longer-than-fifty-characters-end"


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[httpx.AsyncClient]:
    client = httpx.AsyncClient(base_url=f"http://localhost:{jp_http_port}/api/sched/",
                               headers={"Authorization": f"token {TOKEN}"}, timeout=30)
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


CELLS = [
    "%load_ext jupyter_sched",
    "import json, time\nimport pandas as pd\nbefore = pd.get_option('display.max_colwidth')",
    # the engine numbers the waiting job on a cycle: until then its reason is "waiting for the next cycle"
    "for _ in range(600):\n"
    "    q = get_ipython().run_line_magic('schedule', 'queue')\n"
    f"    waiting = q[q['name'] == {WAITER!r}]\n"
    "    if len(waiting) and waiting['position'].iloc[0] != '':\n"
    "        break\n"
    "    time.sleep(0.1)\n"
    "print(json.dumps({c: [str(v) for v in q[c]] for c in q.columns}))",
    "q",
    "waiting",
    "print(json.dumps({'before': before, 'after': pd.get_option('display.max_colwidth'),"
    " 'frame': isinstance(q, pd.DataFrame), 'filtered': isinstance(waiting, pd.DataFrame),"
    " 'rows': len(q)}))",
]


def _outputs(cell: Any, mime: str) -> str:
    return "".join(str(o.get("data", {}).get(mime, "")) for o in cell.outputs)


async def test_newuser30_n20_the_queue_table_shows_whole_names_and_reasons_in_html_and_plain_text(
        sched_app: Any, jp_serverapp: Any, jp_root_dir: Path, api: httpx.AsyncClient) -> None:
    made = []
    for name, gpus in ((HOLDER, 4), (WAITER, 2)):
        reply = await api.post("jobs", json={"name": name, "gpus": gpus, "time_limit": "10m",
                                             "command": [sys.executable, "-c", "import time; time.sleep(600)"]})
        assert reply.status_code == 201, reply.text
        made.append(reply.json()["id"])

    async def holding() -> bool:
        return bool((await api.get(f"jobs/{made[0]}")).json()["state"] == "running")

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    try:
        await wait_for(holding, timeout_s=60)
        kernel = await Kernel.launch(jp_serverapp)
        try:
            client = NotebookClient(nb, km=jp_serverapp.kernel_manager.get_kernel(kernel.id), timeout=180,
                                    allow_errors=False)
            await client.async_execute()
        finally:
            kernel.stop()
            await jp_serverapp.kernel_manager.shutdown_kernel(kernel.id, now=True)
    finally:
        for job_id in made:
            await api.delete(f"jobs/{job_id}")
    cells = nb.cells
    whole = json.loads(_outputs(cells[2], "text/plain") or "".join(o.get("text", "") for o in cells[2].outputs))
    assert WAITER in whole["name"] and HOLDER in whole["name"], whole
    texts = [t for column in whole.values() for t in column if len(t) > 50]
    # the waiting job's ETA names what it waits for, the holder's long name: a sentence long enough to be cut
    assert any(len(t) > 60 and HOLDER in t for t in whole["eta"]), whole
    table_html, table_plain = _outputs(cells[3], "text/html"), _outputs(cells[3], "text/plain")
    for text in texts:  # each long cell whole, in both views (before: cut at 50 characters with "...")
        assert html.escape(text) in table_html, (text, table_html)
        assert text in table_plain, (text, table_plain)
    filtered_html, filtered_plain = _outputs(cells[4], "text/html"), _outputs(cells[4], "text/plain")
    assert WAITER in filtered_html and WAITER in filtered_plain, filtered_plain
    said = json.loads("".join(o.get("text", "") for o in cells[5].outputs))
    assert said == {"before": 50, "after": 50, "frame": True, "filtered": True, "rows": 2}, said
