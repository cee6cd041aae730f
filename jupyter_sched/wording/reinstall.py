"""The words of a server that finds jupyter_sched reinstalled under it (newuser31 N10).

One sentence, on every surface that shows a job's reason (CLI line, magics, panel): "jupyter_sched
was reinstalled under this running server (0.1.0+g8d235e7 → 0.1.0+g4ed6989): restart jupyter lab
(jobs stay pending)"; before any job waits, the server-wide notice (:func:`reinstalled_notice`). Pure: no I/O
but :func:`reinstalled_notice_of`'s question to the executor it is given.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REINSTALLED", "reinstalled_notice", "reinstalled_notice_of", "reinstalled_text"]

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


def reinstalled_notice(running: str, installed: str, *, service: bool = False, wrapper_gone: bool = False) -> str:
    """The server-wide notice of a reinstall, said before any job waits on it (newuser38 n12: ``status`` and the
    panel's header showed a live server with free GPUs while every batch job would pend): ``GET config``'s
    ``reinstalled``, a ``status`` line and the panel header's notice. Leases are still granted (they launch
    nothing), so it says what is held."""
    versions = _versions(running, installed, wrapper_gone=wrapper_gone)
    if service:
        return (f"jupyter_sched was reinstalled under the running scheduler service ({versions}): the hub admin "
                "restarts it (jupyter-sched serve) — batch jobs are held until then, GPU leases are still granted")
    return (f"jupyter_sched was reinstalled under this running server ({versions}): restart jupyter lab — batch jobs "
            "are held until then, GPU leases are still granted")


def reinstalled_notice_of(executor: Any) -> str | None:
    """:func:`reinstalled_notice` of ``executor``'s :meth:`reinstalled` (the local executor's install watch: a few
    ``stat`` calls), None while it runs what is installed or where no executor says (a hub user's forwarding
    server, Kubernetes)."""
    check = getattr(executor, "reinstalled", None)
    change = check() if callable(check) else None
    if change is None:
        return None
    return reinstalled_notice(change.running, change.installed, service=change.service,
                              wrapper_gone=change.wrapper_gone)
