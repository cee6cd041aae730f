"""jupyter_sched: GPU scheduling for people who work in Jupyter.

Importing the package is cheap and pure: the server extension, the magics and their heavy
dependencies load only through the entry points below.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "_jupyter_labextension_paths", "_jupyter_server_extension_points",
           "load_ipython_extension", "report_progress"]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """Tell jupyter_server which ExtensionApp to load (``jupyter_sched.extension.SchedApp``)."""
    from .extension.app import SchedApp

    return [{"module": "jupyter_sched.extension.app", "app": SchedApp}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where JupyterLab finds the prebuilt panel (shipped inside the package)."""
    return [{"src": "labextension", "dest": "@jupyter-sched/labextension"}]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_sched``: register ``%gpu`` / ``%%schedule`` (from :mod:`jupyter_sched.magics`).

    Raises:
        ImportError: the magics module does not provide ``load_ipython_extension``.
    """
    from . import magics

    loader = getattr(magics, "load_ipython_extension", None)
    if loader is None:
        raise ImportError("jupyter_sched.magics does not provide load_ipython_extension yet")
    loader(ipython)


def report_progress(done: float, total: float) -> dict[str, Any] | None:
    """Inside a scheduled job: report that it has done ``done`` of ``total`` steps, so the ETAs of the
    jobs waiting for its GPUs read its end from its progress (never a scheduling decision). A no-op
    with a warning outside a job; calls sooner than 10 s after the last one sent are skipped. Never
    raises: whatever goes wrong is warned once and the job runs on. See
    :func:`jupyter_sched.client.progress.report_progress` (arguments, answer)."""
    try:
        from .client.progress import report_progress as report
    except Exception as exc:  # inside the user's loop: a client that cannot load is warned, never raised (N1)
        import warnings

        warnings.warn(f"jupyter_sched.report_progress: the client could not be loaded ({type(exc).__name__}: "
                      f"{str(exc)[:200]}); the job runs on, its progress is not reported", RuntimeWarning, stacklevel=2)
        return None
    return report(done, total)
