"""Who is a scheduler admin, said to someone who is not one (newuser32 n6: ``admin_quotas.ipynb`` run as a user ended in
a 10-line traceback and ``AssertionError: run this notebook as an admin``, naming no one to ask)."""

from __future__ import annotations

__all__ = ["ADMIN_SCOPE_NAME", "not_admin_line"]

ADMIN_SCOPE_NAME = "custom:jupyter-sched:admin"
"""The hub scope that makes its holder a scheduler admin (``jupyter_sched.hub.identity.ADMIN_SCOPE``'s default,
spelt here so that a client says it without importing JupyterHub)."""


def not_admin_line(user: str, what: str = "this notebook", *, hub: bool | None = None) -> str:
    """One sentence for ``user``, not an admin, about ``what`` needs one: who the admins are here and whom to ask.

    ``hub``: True when the caller talks to a hub's scheduler, False on a personal server (``jupyter lab``), None when
    not known (both are said), e.g. ``n32a is not a scheduler admin here — on a hub its admins are the hub's admins,
    holders of the scope custom:jupyter-sched:admin and the users in c.SchedApp.admin_users; ask one of them to run
    this notebook``."""
    on_hub = (f"the hub's admins, holders of the scope {ADMIN_SCOPE_NAME} and the users in c.SchedApp.admin_users")
    personal = "the account that runs jupyter lab and the users in c.SchedApp.admin_users"
    who = (f"on a hub its admins are {on_hub}" if hub else f"its admins are {personal}" if hub is False
           else f"its admins are, on a hub, {on_hub}; on a personal server, {personal}")
    return f"{user or 'you'} is not a scheduler admin here — {who}; ask one of them to run {what}"
