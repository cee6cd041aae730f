"""jupyter-scheduler's "Download job files": the executed notebook and the input, into the server's root.

jupyter-scheduler's own files manager reads staging paths with fsspec in a subprocess; ours are
behind this server's REST API (the executed notebook lives in the run's job directory, with the
retention of ``executed_notebook_retention_days``), so :class:`GpuJobFilesManager` fetches them
through it and writes them where jupyter-scheduler's UI looks:
``<root>/<output_directory>/<notebook>-<job id>/`` (``BaseScheduler.get_local_output_path``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from typing import Any

from jupyter_scheduler.exceptions import SchedulerError
from jupyter_scheduler.job_files_manager import JobFilesManager

from ..client._routes import routes
from ..errors import SchedError

__all__ = ["GpuJobFilesManager"]


class GpuJobFilesManager(JobFilesManager):  # type: ignore[misc]  # jupyter-scheduler ships no type hints
    """Copies a job's executed notebook (through our API) and its input notebook into the root."""

    async def copy_from_staging(self, job_id: str, redownload: bool | None = False) -> None:
        scheduler: Any = self.scheduler
        job = await scheduler.get_job(job_id, False)
        names = scheduler.get_job_filenames(job)
        output_dir = scheduler.get_local_output_path(model=job)
        api_job = await scheduler.api.call(routes.job(job_id))
        await asyncio.to_thread(os.makedirs, output_dir, exist_ok=True)
        executed = os.path.join(output_dir, names["ipynb"])
        if redownload or not os.path.exists(executed):
            try:
                notebook = await scheduler.api.executed_notebook(job_id)
            except SchedError as err:
                raise SchedulerError(f"no executed notebook for {job_id} yet: {err.message}") from None
            text = json.dumps(notebook, indent=1)
            await asyncio.to_thread(_write, executed, text)
        source = str(api_job.get("notebook") or "")
        target = os.path.join(output_dir, names["input"])
        if source and os.path.isfile(source) and (redownload or not os.path.exists(target)):
            await asyncio.to_thread(shutil.copyfile, source, target)


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
