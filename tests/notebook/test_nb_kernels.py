"""%gpu and %schedule in real kernels started by a real jupyter_server with jupyter_sched.

No GPU and no CUDA runtime exist on this machine: the inventory is the simulated default, and
case 017 uses a tiny stand-in module named ``torch`` (in a tmp dir on the kernel's sys.path)
whose ``torch.cuda.is_initialized()`` answers True — the same call the magic makes on a real
torch. On a GPU machine the real check runs unchanged.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from nb_harness import TOKEN, Kernel, wait_for

from jupyter_sched.client import AsyncSchedClient, Connection
from jupyter_sched.magics.core import CUDA_ALREADY_INITIALISED

StartKernel = Callable[..., Awaitable[Kernel]]


@pytest.fixture
def sched_settings() -> dict[str, Any]:
    """Two simulated GPUs, so two kernels can compete for them."""
    return {"simulated_gpus": 2}


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    """The async client against the same server (the REST API the kernels use)."""
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


async def _lease_of(api: AsyncSchedClient, kernel: Kernel) -> dict[str, Any] | None:
    leases = [lease for lease in await api.leases() if lease.get("kernel_id") == kernel.id]
    return leases[-1] if leases else None


async def _env(kernel: Kernel, name: str) -> str:
    result = await kernel.run(f"import os; print(repr(os.environ.get({name!r})))")
    return result.stdout.strip()


async def test_the_kernel_gets_the_scheduler_address_from_the_server(start_kernel: StartKernel) -> None:
    kernel = await start_kernel(load=False)
    result = await kernel.run("import os; print(os.environ['JUPYTER_SCHED_KERNEL_ID'], "
                              "bool(os.environ['JUPYTER_SCHED_URL']), bool(os.environ['JUPYTER_SCHED_TOKEN']))")
    assert result.stdout.split() == [kernel.id, "True", "True"]


@pytest.mark.parametrize("magic", ["%gpu?", "%schedule?"])
async def test_every_magic_has_help_with_examples(start_kernel: StartKernel, magic: str) -> None:
    kernel = await start_kernel()
    result = await kernel.run(magic)
    assert result.error is None, result.text
    assert "Examples" in result.pages[0] and "Usage" in result.pages[0]


async def test_a_lease_sets_cuda_visible_devices_to_the_granted_uuids(
        start_kernel: StartKernel, api: AsyncSchedClient) -> None:
    kernel = await start_kernel()
    result = await kernel.run("%gpu request 2")
    assert result.error is None, result.text
    lease = await _lease_of(api, kernel)
    assert lease is not None and lease["allocation"] is not None
    uuids = lease["allocation"]["gpu_uuids"]
    assert len(uuids) == 2
    assert await _env(kernel, "CUDA_VISIBLE_DEVICES") == repr(",".join(uuids))
    assert await _env(kernel, "CUDA_DEVICE_ORDER") == repr("PCI_BUS_ID")
    assert f"Allocated {', '.join(uuids)}" in result.stdout
    status = await kernel.run("%gpu")
    assert "This kernel: lease" in status.stdout
    assert any("this_kernel" in str(d.get("text/html", "")) for d in status.data)


async def test_a_second_kernel_waits_with_a_reason_and_gets_the_gpus_when_the_first_releases(
        start_kernel: StartKernel, api: AsyncSchedClient) -> None:
    first, second = await start_kernel(), await start_kernel()
    assert (await first.run("%gpu request 2")).error is None
    live, waiting = second.start_run("%gpu request 1", timeout_s=120)

    async def pending_with_reason() -> dict[str, Any] | None:
        lease = await _lease_of(api, second)
        return lease if lease and lease["state"] == "pending" and lease.get("reason") else None

    lease = await wait_for(pending_with_reason)
    assert lease["reason"]["code"]

    async def wait_display() -> bool:  # the updating display names the position and the reason (its sentence)
        shown = [str(d.get("text/plain", "")) for d in live.data]
        # the one renderer's sentence (reason.text), which every surface shows, not the core's raw message — as it
        # is now: its holders and ETA clauses may change between two cycles (a run-1 failure under load)
        now = await _lease_of(api, second) or lease
        said = [held["reason"]["text"]["summary"].rstrip(".") for held in (lease, now) if held.get("reason")]
        return any("queued #" in text and any(words in text for words in said) for text in shown)

    await wait_for(wait_display)
    assert not waiting.done()
    released = await first.run("%gpu release")
    assert "Released lease" in released.stdout
    result = await asyncio.wait_for(waiting, timeout=60)
    assert result.error is None, result.text
    granted = await _lease_of(api, second)
    assert granted is not None and granted["allocation"] is not None
    assert await _env(second, "CUDA_VISIBLE_DEVICES") == repr(",".join(granted["allocation"]["gpu_uuids"]))
    assert await _env(first, "CUDA_VISIBLE_DEVICES") == repr("")


async def test_a_kernel_shutdown_frees_its_lease_within_one_cycle(
        start_kernel: StartKernel, api: AsyncSchedClient, jp_serverapp: Any) -> None:
    kernel = await start_kernel()
    assert (await kernel.run("%gpu request 1")).error is None
    lease = await _lease_of(api, kernel)
    assert lease is not None and lease["state"] in ("admitted", "running")
    kernel.stop()
    await jp_serverapp.kernel_manager.shutdown_kernel(kernel.id)

    async def released() -> bool:
        return (await api.lease(lease["id"]))["state"] in ("succeeded", "cancelled", "failed", "lost")

    await wait_for(released, timeout_s=5.0)  # cycle_interval is 0.2 s; 5 s only bounds a broken run


async def test_a_second_request_checks_the_model_against_the_gpus_it_remembers(start_kernel: StartKernel) -> None:
    """Issue 17: a later %gpu request skips GET inventory (it remembers the models) and GET leases
    (it remembers this kernel's lease), and the checks that read them stay right: a second lease
    for the kernel is refused, an unknown model is still refused, a known one still granted."""
    kernel = await start_kernel()
    assert (await kernel.run("%gpu request 1")).error is None
    again = await kernel.run("%gpu request 1")  # the lease it remembers is still live: one per kernel
    assert again.error is not None and "this kernel already has lease" in again.text, again.text
    assert (await kernel.run("%gpu release")).error is None
    refused = await kernel.run("%gpu request 1 --model Z999")
    assert refused.error is not None and "--model" in refused.text and "Traceback" not in refused.text
    granted = await kernel.run("%gpu request 1 --model simulated")
    assert granted.error is None and "Allocated GPU-" in granted.stdout, granted.text


FAKE_TORCH = '''"""Stand-in for torch: a real CUDA runtime is unavailable on this machine (test double)."""
class cuda:
    @staticmethod
    def is_initialized():
        return {initialized}

    @staticmethod
    def device_count():
        return 4
'''


def _fake_torch(tmp_path: Path, *, initialized: bool) -> Path:
    root = tmp_path / ("torch_init" if initialized else "torch_imported")
    (root / "torch").mkdir(parents=True)
    (root / "torch" / "__init__.py").write_text(FAKE_TORCH.format(initialized=initialized))
    return root


async def test_case_017_gpu_magic_after_cuda_initialised_refuses_and_charges_nothing(
        start_kernel: StartKernel, api: AsyncSchedClient, tmp_path: Path) -> None:
    kernel = await start_kernel()
    fake = _fake_torch(tmp_path, initialized=True)
    await kernel.run(f"import sys; sys.path.insert(0, {str(fake)!r}); import torch; torch.cuda.device_count()")
    result = await kernel.run("%gpu 1")
    assert result.error is not None
    assert CUDA_ALREADY_INITIALISED in result.text
    assert "Traceback" not in result.text
    assert "torch.cuda.is_initialized()" in result.text
    lease = await _lease_of(api, kernel)
    assert lease is None or lease["state"] in ("cancelled", "succeeded")  # nothing stays charged
    assert await _env(kernel, "CUDA_VISIBLE_DEVICES") == "''"  # as launched: no GPU (case 029), untouched


async def test_case_017_torch_imported_but_not_initialised_sets_the_variable_and_warns(
        start_kernel: StartKernel, api: AsyncSchedClient, tmp_path: Path) -> None:
    kernel = await start_kernel()
    fake = _fake_torch(tmp_path, initialized=False)
    await kernel.run(f"import sys; sys.path.insert(0, {str(fake)!r}); import torch")
    result = await kernel.run("%gpu 1")
    assert result.error is None, result.text
    assert "warning: torch was imported before %gpu" in result.stderr
    lease = await _lease_of(api, kernel)
    assert lease is not None and lease["allocation"] is not None
    assert await _env(kernel, "CUDA_VISIBLE_DEVICES") == repr(",".join(lease["allocation"]["gpu_uuids"]))


@dataclass(frozen=True)
class BadMagic:
    line: str
    want: str  # the argument the one-line error must name


BAD_MAGICS = [
    pytest.param(BadMagic("%gpu request -1", "%gpu request: gpus must be > 0"), id="negative GPUs"),
    pytest.param(BadMagic("%gpu request 1 --model Z999", "--model"), id="an unknown GPU model"),
    pytest.param(BadMagic("%gpu request 1 --timeout 2hh", "--timeout"), id="an unparseable duration"),
    pytest.param(BadMagic("%gpu request 1 --gpu-count 2", "--gpu-count"), id="an unknown flag"),
    pytest.param(BadMagic("%schedule logs", "JOB"), id="a missing job id"),
    pytest.param(BadMagic("%gpu request 1 --priority urgent", "--priority"), id="a bad priority"),
    pytest.param(BadMagic("%gpu request 1 --mem-per-gpu 20XB", "--mem-per-gpu"), id="a bad memory size"),
    pytest.param(BadMagic("%schedule run missing_script.py --gpus 1", "script 'missing_script.py' does not exist"),
                 id="a script that does not exist"),
    pytest.param(BadMagic("%schedule serve app.py --port 99999", "--port"), id="a port out of range"),
    pytest.param(BadMagic("%schedule frobnicate", "subcommand"), id="an unknown subcommand"),
    pytest.param(BadMagic("%%schedule --time-limit 2hh\nprint(1)", "--time-limit"), id="a cell with a bad time limit"),
    pytest.param(BadMagic("%schedule dryrun --gpus two", "--gpus"), id="GPUs spelled as a word"),
    pytest.param(BadMagic("%schedule status no-such-job", "no-such-job"), id="a job id that does not exist"),
]


async def test_bad_magic_input_gives_one_line_errors_naming_the_argument(start_kernel: StartKernel) -> None:
    kernel = await start_kernel()
    for param in BAD_MAGICS:
        bad: BadMagic = param.values[0]
        result = await kernel.run(bad.line)
        assert result.error is not None, f"{param.id}: no error for {bad.line!r}"
        lines = [line for line in result.text.splitlines() if line.strip()]
        assert "Traceback" not in result.text, f"{param.id}: {result.text}"
        assert any(bad.want in line for line in lines), f"{param.id}: {result.text}"
        error_lines = [line for line in result.stderr.splitlines() + result.error.get("traceback", []) if line.strip()]
        assert len(error_lines) == 1, f"{param.id}: {error_lines}"


async def test_schedule_cell_runs_the_body_with_the_kernels_python_and_logs_follow(
        start_kernel: StartKernel, api: AsyncSchedClient, tmp_path: Path) -> None:
    kernel = await start_kernel()
    submitted = await kernel.run("%%schedule --gpus 1 --name hello --time-limit 5m\n"
                                 "import os, sys\nprint('hello from', sys.executable, os.environ.get('CUDA_VISIBLE_DEVICES'))\n")
    assert submitted.error is None, submitted.text
    assert "variables are not shared" in submitted.stdout
    job_id = submitted.data[-1]["text/plain"].strip("'\"")
    follow = await kernel.run(f"%schedule logs {job_id} -f", timeout_s=120)
    assert follow.error is None, follow.text
    assert "hello from" in follow.stdout and "GPU-" in follow.stdout
    assert "succeeded" in follow.stdout
    jobs = await api.jobs()
    assert any(job["id"] == job_id and job["name"] == "hello" for job in jobs)  # visible to REST at once


async def test_the_event_stream_reports_a_lease_from_a_kernel(
        start_kernel: StartKernel, api: AsyncSchedClient) -> None:
    kernel = await start_kernel()
    events = api.events()
    first = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0.5)  # the stream is open before the lease is asked for
    await kernel.run("%gpu request 1 --no-wait")

    async def a_lease_event() -> dict[str, Any]:
        event = await first
        while event["type"] != "lease":
            event = await anext(events)
        return event

    event = await asyncio.wait_for(a_lease_event(), timeout=30)
    assert event["data"]["kernel_id"] == kernel.id
    await events.aclose()


@pytest.mark.slow
async def test_jupyter_execute_on_the_same_machine_finds_the_server_through_its_runtime_file(
        sched_app: Any, jp_serverapp: Any, api: AsyncSchedClient, tmp_path: Path) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    jp_serverapp.write_server_info_file()  # what `jupyter server` does at start (pytest-jupyter skips it)
    nb = new_notebook(cells=[new_code_cell("%load_ext jupyter_sched\n%gpu request 1"),
                             new_code_cell("import os; print('visible:', os.environ['CUDA_VISIBLE_DEVICES'])")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "batch.ipynb"
    nbformat.write(nb, str(path))
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "jupyter", "execute", "--inplace", str(path), env=env, cwd=str(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 0, output.decode()
    executed = nbformat.read(str(path), as_version=4)
    printed = "".join(o.get("text", "") for c in executed.cells for o in c.get("outputs", []))
    assert "Allocated GPU-" in printed and "visible: GPU-" in printed
    leases = await api.leases()
    assert len(leases) == 1 and leases[0]["kernel_id"] is None
    assert leases[0]["state"] in ("cancelled", "succeeded")  # released when that kernel exited
