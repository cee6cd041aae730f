"""Helpers for the notebook tests: server config, a kernel driven through the server, polling."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["TOKEN", "CellResult", "Kernel", "sched_server_config", "wait_for"]

TOKEN = "notebook-test-token"


def sched_server_config(tmp_path: Path, **sched: Any) -> dict[str, Any]:
    """jp_server_config body: jupyter_sched on a tmp store, simulated GPUs, a fast cycle."""
    settings: dict[str, Any] = {
        "db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}",
        "log_dir": str(tmp_path / "logs"),
        "inventory_source": "simulated",
        "simulated_gpus": 4,
        "cycle_interval": 0.2,
    }
    settings.update(sched)
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_sched": True},
                      "reraise_server_extension_failures": True},
        "IdentityProvider": {"token": TOKEN},
        "SchedApp": settings,
    }


@dataclass
class CellResult:
    """What one execute request produced in the kernel."""

    stdout: str = ""
    stderr: str = ""
    data: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    pages: list[str] = field(default_factory=list)  # help shown by ``%magic?`` (the reply's page payload)

    @property
    def text(self) -> str:
        """Everything a user would read: streams, text/plain of displays, the error lines."""
        parts = [self.stdout, self.stderr]
        parts += [str(d.get("text/plain", "")) for d in self.data]
        if self.error:
            parts += [f"{self.error.get('ename')}: {self.error.get('evalue')}", *self.error.get("traceback", [])]
        return "\n".join(parts)


PORT_TAKEN = "Address already in use"
"""What a kernel prints when a port jupyter_client picked for it was taken before it could bind it (see ``launch``)."""


class Kernel:
    """A kernel started by the server's kernel manager, driven through an async client."""

    def __init__(self, serverapp: Any, kernel_id: str, stderr: Any = None) -> None:
        self.serverapp = serverapp
        self.id = kernel_id
        self.client: Any = serverapp.kernel_manager.get_kernel(kernel_id).client()
        self._stderr = stderr  # the kernel process's stderr file; kept open: a restart relaunches onto it

    @classmethod
    async def launch(cls, serverapp: Any, path: str = "") -> Kernel:
        """Start a kernel through the server's kernel manager and wait until it answers ``kernel_info``.

        jupyter_client picks a kernel's five TCP ports by binding port 0 and closing the sockets; the kernel binds
        them a moment later, and in a parallel test run another process can take one meanwhile (any outgoing
        connection's ephemeral port, or another test's "free port"): the kernel then exits at start with ZMQError
        "Address already in use" and ``wait_for_ready`` says "Kernel died before replying to kernel_info". That
        start — and only that one — is tried again once on fresh ports; any other death fails with the kernel's
        stderr.

        Raises:
            RuntimeError: the kernel died at start for another reason, or its ports were taken twice.
        """
        for attempt in (1, 2):
            stderr = tempfile.TemporaryFile()  # lives as long as the kernel: see __init__
            kernel_id = await serverapp.kernel_manager.start_kernel(path=path, stderr=stderr)
            kernel = cls(serverapp, kernel_id, stderr)
            try:
                await kernel.start()
                return kernel
            except RuntimeError as died:
                said = kernel.stderr_text()
                kernel.stop()
                if kernel_id in serverapp.kernel_manager:
                    await serverapp.kernel_manager.shutdown_kernel(kernel_id, now=True)
                if attempt == 2 or PORT_TAKEN not in said:
                    raise RuntimeError(f"{died}; the kernel's stderr (start {attempt} of 2):\n{said}") from died
        raise AssertionError("unreachable")

    async def start(self) -> None:
        self.client.start_channels()
        await self.client.wait_for_ready(timeout=60)

    def stderr_text(self) -> str:
        """What the kernel process wrote to its stderr so far ('' when it was not captured)."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return str(self._stderr.read().decode(errors="replace"))

    async def run(self, code: str, *, timeout_s: float = 60.0) -> CellResult:
        """Execute ``code``; collect streams, displays and the error (never raises on cell errors)."""
        return await self._run(CellResult(), code, timeout_s)

    def start_run(self, code: str, *, timeout_s: float = 60.0) -> tuple[CellResult, asyncio.Future[CellResult]]:
        """Start executing ``code``; return the result being filled in as output arrives, and the future."""
        result = CellResult()
        return result, asyncio.ensure_future(self._run(result, code, timeout_s))

    async def _run(self, result: CellResult, code: str, timeout_s: float) -> CellResult:

        def hook(msg: dict[str, Any]) -> None:
            kind, content = msg["header"]["msg_type"], msg["content"]
            if kind == "stream":
                if content["name"] == "stdout":
                    result.stdout += content["text"]
                else:
                    result.stderr += content["text"]
            elif kind in ("display_data", "execute_result", "update_display_data"):
                result.data.append(content["data"])
            elif kind == "error":
                result.error = content

        reply = await self.client.execute_interactive(code, output_hook=hook, timeout=timeout_s)
        content = reply["content"]
        result.pages = [str(p.get("data", {}).get("text/plain", "")) for p in content.get("payload", [])
                        if p.get("source") == "page"]
        if content.get("status") == "error" and result.error is None:
            # IPython reports a UsageError on stderr only; the reply names it (its traceback field may be stale)
            result.error = {"ename": content.get("ename"), "evalue": content.get("evalue"), "traceback": []}
        return result

    def stop(self) -> None:
        self.client.stop_channels()
        if self._stderr is not None:
            sys.stderr.write(self.stderr_text())  # where it went before it was captured: a failing test shows it
            self._stderr.close()
            self._stderr = None


async def wait_for(predicate: Callable[[], Any], *, timeout_s: float = 30.0, poll_s: float = 0.1) -> Any:
    """Poll ``predicate`` (sync or async) until truthy; fail with the last value after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached within {timeout_s} s (last value {value!r})")
        await asyncio.sleep(poll_s)


def cell_text(cell: Any) -> str:
    """What one executed cell showed: its streams, plain-text results and tracebacks, in order."""
    parts: list[str] = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output["text"])
        elif "data" in output:
            parts.append(str(output["data"].get("text/plain", "")))
        elif output.get("output_type") == "error":
            parts.extend(output.get("traceback", []))
    return "\n".join(parts)
