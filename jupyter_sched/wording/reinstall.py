"""The words of a server that finds jupyter_sched reinstalled under it (newuser31 N10).

One sentence, on every surface that shows a job's reason (CLI line, magics, panel): "jupyter_sched
was reinstalled under this running server (0.1.0+g8d235e7 → 0.1.0+g4ed6989): restart jupyter lab
(jobs stay pending)". Pure: no I/O.
"""

from __future__ import annotations

__all__ = ["REINSTALLED", "reinstalled_text"]

REINSTALLED = "Reinstalled"
"""The pending-reason code of a job held because jupyter_sched was reinstalled under the running server."""


def _versions(running: str, installed: str, *, wrapper_gone: bool) -> str:
    if running != installed:
        return f"{running} → {installed}"
    # the same version on both sides: only the job launcher's file says it (an edit of an editable checkout)
    return f"{running}, its job launcher {'gone' if wrapper_gone else 'changed'}"


def reinstalled_text(running: str, installed: str, *, service: bool = False, wrapper_gone: bool = False) -> str:
    """The job's reason while it is held for a reinstall (``service``: a hub's scheduler service, which its
    admin restarts; else a ``jupyter lab`` its user restarts). It names the way out itself: the reason has no
    separate ``unblock`` (a line read "restart jupyter lab … · starts once jupyter lab is restarted")."""
    versions = _versions(running, installed, wrapper_gone=wrapper_gone)
    if service:
        return (f"jupyter_sched was reinstalled under the running scheduler service ({versions}): "
                "the hub admin restarts it (jupyter-sched serve); jobs stay pending")
    return f"jupyter_sched was reinstalled under this running server ({versions}): restart jupyter lab (jobs stay pending)"
