"""newuser31 N11: a hub job whose ``import torch`` failed was told "its Python, python, has no torch: install it
into that Python — python -m pip install torch": on a hub a bare ``python`` is the hub's job Python
(``c.HubSchedApp.job_python``, root's), which its users cannot install into; run in their shell, the command
installs into their own Python and the job still has none. A job run as its owner's account is now told which
Python that was and to ask the hub admin, or to run a Python of its own; a lab's job keeps the pip line."""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.executors.outcome import describe_exit, missing_module_hint

FAILED = "ModuleNotFoundError: No module named 'torch'"


def test_newuser31_n11_the_hubs_job_python_is_named_and_the_admin_asked(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_text(f"Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n{FAILED}\n")
    said = describe_exit(1, log=log, python="/opt/jobs-venv/bin/python", shared_python=True)
    assert "the hub's job Python, /opt/jobs-venv/bin/python, has no torch: check the spelling first; if it is right, " \
           "ask your hub admin to install torch there " \
           "(c.HubSchedApp.job_python), or run a Python of your own by its full path" in said, said
    assert "pip install" not in said, said
    sklearn = missing_module_hint("ModuleNotFoundError: No module named 'sklearn'", "/opt/p", shared=True)
    assert sklearn is not None and "install scikit-learn there" in sklearn  # the install name, as for a lab


def test_newuser31_n11_a_labs_job_keeps_the_install_line(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_text(FAILED + "\n")
    said = describe_exit(1, log=log, python="/home/ann/.venv/bin/python3")
    assert "install it into that Python — /home/ann/.venv/bin/python3 -m pip install torch" in said, said
    assert "hub admin" not in said
