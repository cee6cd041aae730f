"""The central service's refusal of a hub user whose name reads as another user's (red team 29, R2).

The rules are :mod:`jupyter_sched.admission.user_names` (pure); this is their answer: 403 naming the field
``user``, the character or the look-alike and the fix (an admin renames the account on the hub), with
``details.refused_name`` the name escaped (:func:`~jupyter_sched.admission.user_names.escaped_name`) — the
name the refusal is audited under (:meth:`~jupyter_sched.extension.web.SchedHandler._audit_refusal`), so the
audit log never shows it as the user it imitates.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..admission.user_names import REFUSED_NAME, escaped_name, lookalike_of, name_problem
from ..errors import AuthorizationError

__all__ = ["refuse_lookalike_name"]

_FIX = ("ask a hub admin to rename your hub account to plain letters and digits (jupyterhub: PATCH "
        "/hub/api/users/<name> {\"name\": ...}); a name that reads as another user's is not served")


def refuse_lookalike_name(name: str, known: Mapping[str, tuple[str, ...]]) -> None:
    """Refuse hub user ``name`` when it reads as another name (``known``: the skeletons of the hub's users).

    Raises:
        AuthorizationError: 403, field ``user``, details ``refused_name`` (escaped) and ``lookalike_of``.
    """
    problem = name_problem(name)
    other = None if problem is not None else lookalike_of(name, known)
    if problem is None and other is None:
        return
    shown = escaped_name(name)
    said = problem if problem is not None else f"reads as the name of another user, '{escaped_name(other or '')}'"
    raise AuthorizationError(f"the hub user name '{shown}' {said}: this scheduler does not serve it", field="user",
                             hint=_FIX, details={REFUSED_NAME: shown,
                                                                      "lookalike_of": other and escaped_name(other)})
