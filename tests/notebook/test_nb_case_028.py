"""Case 028 (outcomes): a failed notebook run says which cell and exception; a dead kernel says so promptly.

Real notebooks executed by real kernels through nbclient, as jobs of a real jupyter_server with
jupyter_sched (simulated GPUs: this machine has none). The package whose import fails is a source
directory on the job's ``PYTHONPATH`` — what an editable install puts on ``sys.path``.
The kernel of ``train.ipynb`` is killed with SIGKILL from inside cell 5 (the signal the kernel's
OOM killer sends; a real OOM kill in a memory cgroup is exercised in ``test_nb_outcomes.py``).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nb_harness import TOKEN, wait_for
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from jupyter_sched.client import AsyncSchedClient, Connection

pytestmark = pytest.mark.slow

IMPORT_MESSAGE = "mypkg.render needs libfoo >= 2.0 (found 1.4)"
HEARTBEAT_TIMEOUT_S = 30


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


def write_notebook(path: Path, *sources: str) -> Path:
    cells = [new_markdown_cell(s[3:]) if s.startswith("md:") else new_code_cell(s) for s in sources]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


def editable_package(root: Path) -> Path:
    """``mypkg`` as a source tree (an editable install): importing ``mypkg.render`` raises ImportError."""
    src = root / "src"
    (src / "mypkg").mkdir(parents=True)
    (src / "mypkg" / "__init__.py").write_text("VERSION = '0.1'\n")
    (src / "mypkg" / "render.py").write_text(f"raise ImportError({IMPORT_MESSAGE!r})\n")
    return src


async def finished(api: AsyncSchedClient, job_id: str, timeout_s: float = 120) -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        job = await api.job(job_id)
        return job if job["state"] in ("succeeded", "failed", "cancelled", "lost") else None

    result: dict[str, Any] = await wait_for(done, timeout_s=timeout_s, poll_s=0.2)
    return result


async def test_case_028_failed_cell_dead_kernel_and_success_read_as_they_happened(
        api: AsyncSchedClient, jp_root_dir: Path, sched_app: Any) -> None:
    src = editable_package(jp_root_dir)
    killed_at = jp_root_dir / "killed_at"
    report = write_notebook(jp_root_dir / "report.ipynb", "import mypkg\nprint('mypkg', mypkg.VERSION)",
                            "md:Render the report", "from mypkg.render import render\nrender()", "print('never runs')")
    train = write_notebook(jp_root_dir / "train.ipynb", "x = 1", "y = 2", "buffer = bytearray(64 * 1024 * 1024)",
                           "z = 3",
                           "import os, signal, time\n"
                           f"open({str(killed_at)!r}, 'w').write(repr(time.time()))\n"
                           "os.kill(os.getpid(), signal.SIGKILL)")
    ok = write_notebook(jp_root_dir / "ok.ipynb", "print('all good', 6 * 7)")
    r1 = await api.submit({"name": "r1", "notebook": str(report), "gpus": 1, "env": {"PYTHONPATH": str(src)}})
    r2 = await api.submit({"name": "r2", "notebook": str(train), "gpus": 1})
    r3 = await api.submit({"name": "r3", "notebook": str(ok), "gpus": 1})

    done1 = await finished(api, r1["id"])
    assert done1["state"] == "failed"
    assert done1["message"] == (f"cell 3 (In [2] in the executed notebook) raised ImportError: {IMPORT_MESSAGE} "
                                "(cell starts: from mypkg.render import render)")
    executed = nbformat.read(str(Path(sched_app.job_log_dir) / r1["id"] / "executed.ipynb"), as_version=4)
    error = [o for o in executed.cells[2].outputs if o.output_type == "error"]
    assert error and error[0].ename == "ImportError" and error[0].evalue == IMPORT_MESSAGE
    assert executed.cells[3].execution_count is None and not executed.cells[3].outputs, "later cells not run"

    done2 = await finished(api, r2["id"])
    assert done2["state"] == "failed"
    # the kernel killed itself: no OOM kill counted, no limit near its peak — not "likely out of memory" (newuser25 N7)
    assert re.match(r"kernel died \(signal 9, SIGKILL(; no out-of-memory kill was counted)?\) during cell 5 "
                    r"\(cell starts: import os, signal, time\)", done2["message"]), done2["message"]
    assert "; peak memory " in done2["message"]
    kill = float(killed_at.read_text())
    ended = datetime.fromisoformat(done2["finished_at"].replace("Z", "+00:00")).timestamp()
    assert 0 <= ended - kill <= HEARTBEAT_TIMEOUT_S, "failed within the heartbeat timeout of the kill"
    [interval] = [u for u in sched_app.services.store.usage_rows() if u.job_id == r2["id"]]
    assert interval.ended_at is not None and abs(interval.ended_at.timestamp() - ended) < 1, \
        "the GPU is released and GPU-seconds stop at the detected death"
    assert (await api.job(r2["id"]))["allocation"] is None or done2["state"] == "failed"

    done3 = await finished(api, r3["id"])
    assert done3["state"] == "succeeded", done3["message"]


async def test_a_failed_script_quotes_its_exit_code_and_last_log_lines(api: AsyncSchedClient, jp_root_dir: Path) -> None:
    script = jp_root_dir / "prep.py"
    script.write_text("print('loading 3 files')\nimport sys\nprint('bad row 17', file=sys.stderr)\nsys.exit(3)\n")
    job = await api.submit({"name": "prep", "script": str(script), "gpus": 0})
    done = await finished(api, job["id"])
    assert done["state"] == "failed"
    # its last line first, the lines before it after (newuser34 N2: the line that says what went wrong leads)
    assert done["message"] == "exited with code 3: bad row 17; earlier lines: loading 3 files"


async def test_a_cell_past_the_time_limit_says_the_limit(api: AsyncSchedClient, jp_root_dir: Path) -> None:
    slow = write_notebook(jp_root_dir / "slow.ipynb", "import time\ntime.sleep(120)")
    job = await api.submit({"name": "slow", "notebook": str(slow), "gpus": 0, "time_limit": "3s"})
    started = time.monotonic()
    done = await finished(api, job["id"])
    assert done["state"] == "failed"
    assert done["message"].startswith("time limit of 3s exceeded")
    assert time.monotonic() - started < 60
