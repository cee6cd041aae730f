"""Whether ``c.HubSchedApp.job_python`` can import ``jupyter_sched``, checked once at start-up.

Hub-mode jobs run with that interpreter, in a clean environment (:func:`~jupyter_sched.executors.runas.
clean_environment`). Notebook jobs run through ``jupyter_sched`` there, and a job's
``jupyter_sched.report_progress`` imports it: without it every notebook job fails and every progress
report raises ``ImportError`` (newuser22 N11: the service started silently with a fresh venv, as its
own refusal of a private interpreter had advised). Only a warning: command jobs that report nothing
run fine.
"""

from __future__ import annotations

import os
import subprocess

from ..executors.runas import ENV_ALLOWLIST, job_path

__all__ = ["IMPORT_CHECK_TIMEOUT_S", "job_python_warning", "missing_jupyter_sched"]

IMPORT_CHECK_TIMEOUT_S = 30.0
"""Seconds the start-up import of ``jupyter_sched`` in the job interpreter may take (a cold disk)."""


def missing_jupyter_sched(python: str, *, timeout_s: float = IMPORT_CHECK_TIMEOUT_S) -> str | None:
    """Why ``python -c "import jupyter_sched"`` fails, as a job would run it (the job environment's
    ``PATH``, no ``PYTHONPATH``, started in ``/`` so no folder of the service's is on its path), or None
    when it imports.

    Args:
        python: the job interpreter (an absolute path, runnable by this account).
        timeout_s: seconds before the check gives up (said as the reason).

    Returns:
        None, or the reason in a few words: ``not installed there``, else the interpreter's last error
        line (a dependency that fails to import), ``it did not answer within 30 s`` or the OS error.
    """
    env = {name: os.environ[name] for name in ENV_ALLOWLIST if name in os.environ}
    env.update({"PATH": job_path(python), "HOME": "/"})
    try:
        done = subprocess.run([python, "-c", "import jupyter_sched"], env=env, cwd="/", capture_output=True,
                              text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return f"it did not answer within {timeout_s:g} s"
    except OSError as exc:
        return exc.strerror or str(exc)
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in (done.stderr or "").splitlines() if line.strip()]
    if lines and lines[-1].endswith("No module named 'jupyter_sched'"):
        return "not installed there"
    return (lines[-1] if lines else f"exit status {done.returncode}")[:300]


def job_python_warning(python: str, problem: str) -> str:
    """The one start-up warning: what fails and the fix (docs/admin.md's JupyterHub section says the same)."""
    pip = os.path.join(os.path.dirname(python), "pip")
    return (f"c.HubSchedApp.job_python {python} cannot import jupyter_sched ({problem}): notebook jobs fail and "
            f"jupyter_sched.report_progress cannot be imported in jobs — install it there ({pip} install <this "
            "repository>, which brings nbclient and ipykernel), then restart")
