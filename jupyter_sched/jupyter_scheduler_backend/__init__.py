"""jupyter-scheduler's UI and REST API on jupyter_sched's queue (optional: ``pip install jupyter_sched[scheduler]``).

Users who know jupyter-scheduler's "Create Notebook Job" dialog and job list keep them; with this
backend the jobs and job definitions they create there are jupyter_sched's — one store, the same
admission, quotas, queue, pending reasons and accounting, visible in the GPU panel, ``%schedule``
and ``jupyter-sched``. The compute types offered are the admin's GPU profiles.

Enable (``jupyter_server_config.py``; the package's server config does this when both are installed)::

    c.ServerApp.jpserver_extensions = {"jupyter_sched": True, "jupyter_scheduler": True}
    c.SchedulerApp.scheduler_class = "jupyter_sched.jupyter_scheduler_backend.GpuScheduler"
    c.SchedulerApp.environment_manager_class = "jupyter_sched.jupyter_scheduler_backend.GpuEnvironmentManager"
    c.SchedulerApp.job_files_manager_class = "jupyter_sched.jupyter_scheduler_backend.GpuJobFilesManager"

The classes need jupyter-scheduler 2.x and load it on first use; :mod:`.mapping` does not.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SCHEDULER_APP_CONFIG", "GpuEnvironmentManager", "GpuExecutionManager", "GpuJobFilesManager", "GpuScheduler"]

SCHEDULER_APP_CONFIG = {
    "scheduler_class": "jupyter_sched.jupyter_scheduler_backend.GpuScheduler",
    "environment_manager_class": "jupyter_sched.jupyter_scheduler_backend.GpuEnvironmentManager",
    "job_files_manager_class": "jupyter_sched.jupyter_scheduler_backend.GpuJobFilesManager",
}
"""``c.SchedulerApp`` settings that make jupyter-scheduler use this backend."""


def __getattr__(name: str) -> Any:
    """Load the classes (and jupyter-scheduler) only when asked for."""
    if name == "GpuJobFilesManager":
        from .files import GpuJobFilesManager

        return GpuJobFilesManager
    if name in ("GpuEnvironmentManager", "GpuExecutionManager", "GpuScheduler"):
        from . import scheduler

        return getattr(scheduler, name)
    raise AttributeError(name)
