"""A notebook whose kernel cannot start where its job runs, said one way at submit and by the runner.

A notebook carries the name of the kernel it was last saved with (``metadata.kernelspec.name``), and
the notebook runner starts that kernel — so a notebook from another machine (``conda-env-torch-py``,
``python3.10``, a colleague's venv kernel) failed after holding its GPU, with jupyter_client's
``NoSuchKernel`` traceback as its reason (newuser33 N4). The service refuses it at submit, dry run and
the panel's Check fit where it can see the job's kernels (:meth:`jupyter_sched.services.jobs.JobsService.refuse_missing_paths`);
the runner says the same sentence when it still happens (a hub job, a kernel removed since). Pure but
for :func:`source_folder`, which looks whether this package runs from a checkout.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["CHANGE_KERNEL", "install_in_its_env", "kernel_missing", "kernel_not_started", "source_folder"]

CHANGE_KERNEL = "change the notebook's kernel (Kernel → Change Kernel…, then save)"
"""The fix in JupyterLab's own words: the menu that rewrites ``metadata.kernelspec`` when the notebook is saved."""

_MOST_LISTED = 8


def _named(name: str, display: str | None) -> str:
    shown = repr(name[:100])
    return f"{shown} ({display[:100]})" if display and display != name else shown


def kernel_missing(name: str, display: str | None, here: Sequence[str], python: str | None = None) -> tuple[str, str]:
    """``(problem, fix)`` of a notebook whose kernel ``name`` (display name ``display``) is not among the
    kernels ``here`` where its job runs: the problem reads after ``notebook 'nb.ipynb' cannot run: ``
    (``its kernel 'nosuchkernel' (X) is not installed where the job runs — kernels there: python3``), the
    fix names the menu and the install from that kernel's own environment (:func:`install_in_its_env`;
    ``python``: the job's interpreter, named as the one not to register under that name)."""
    listed = sorted(here)
    kernels = ", ".join(listed[:_MOST_LISTED]) + (f" and {len(listed) - _MOST_LISTED} more"
                                                  if len(listed) > _MOST_LISTED else "")
    problem = (f"its kernel {_named(name, display)} is not installed where the job runs — "
               f"{f'kernels there: {kernels}' if listed else 'no kernels are installed there'}")
    return problem, f"{CHANGE_KERNEL} or {install_in_its_env(name, python)}"


def install_in_its_env(name: str, python: str | None = None, source: str | None = None) -> str:
    """The one sentence for installing a kernel a notebook names: from *its own* environment (newuser41
    n12). ``python -m ipykernel install --name NAME`` run with this server's (or the job's) Python
    registers *that* Python under the other environment's name, so the notebook would then run without
    that environment's packages (no torch) while looking right. As the README's "A kernel of another
    environment": install ipykernel and jupyter_sched there and register from there. ``python``: the
    Python the job runs with (said as the one not to use); ``source``: this package's folder for the pip
    line (default :func:`source_folder`)."""
    env_python = "/path/to/that-env/bin/python"
    shown = name[:100]
    return (f"install that kernel: in its own environment (a conda env, a venv; not with {python or 'this Python'}, "
            f"which would run the notebook without that environment's packages): {env_python} -m pip install "
            f"ipykernel '{source or source_folder()}[lab]' && {env_python} -m ipykernel install --user --name {shown}")


def source_folder() -> str:
    """This package's folder to ``pip install`` from: the checkout it runs from (an editable install),
    else a placeholder the reader fills (an installed wheel has no folder to name)."""
    root = Path(__file__).resolve().parents[2]
    return str(root) if (root / "pyproject.toml").is_file() else "/path/to/jupyter-sched"


def kernel_not_started(name: str, display: str | None, why: str) -> tuple[str, str]:
    """``(problem, fix)`` of a kernel that is installed but could not start (its ``kernel.json`` names a
    program that is gone — a deleted conda env —, or the kernel died before it answered): ``why`` is
    one line of the cause, said after the kernel's name."""
    return (f"its kernel {_named(name, display)} could not start: {why}",
            f"{CHANGE_KERNEL}, or reinstall that kernel in the Python it should use")
