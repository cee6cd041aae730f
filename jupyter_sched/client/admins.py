"""The admin notebooks' first check: the caller is a scheduler admin, else one sentence and the run stops
(newuser32 n6: a bare ``assert`` showed a traceback ending ``AssertionError: run this notebook as an admin``)."""

from __future__ import annotations

from typing import Any

from ..wording.admins import not_admin_line

__all__ = ["NotAnAdmin", "require_admin"]


class NotAnAdmin(PermissionError):
    """Raised by :func:`require_admin`; IPython shows it as its sentence alone (``_render_traceback_``), no traceback."""

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


def require_admin(client: Any, what: str = "this notebook") -> dict[str, Any]:
    """``client.me()`` when its ``is_admin``; else :class:`NotAnAdmin` saying who the admins are here (a hub's when
    ``client`` found the hub's scheduler, a personal server's when it was given or found one, both otherwise).

    Raises:
        NotAnAdmin: the caller is not a scheduler admin.
    """
    me = dict(client.me())
    if not me.get("is_admin"):
        source = getattr(getattr(client, "connection", None), "source", "")
        hub = True if source == "hub-service" else False if source == "runtime-file" else None
        raise NotAnAdmin(not_admin_line(str(me.get("user") or ""), what, hub=hub))
    return me
