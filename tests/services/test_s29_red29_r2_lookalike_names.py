"""red29 R2: hub user names that read as another user's were served and audited unflagged.

On a hub where users pick their names, four look-alikes of amy's ``r2937a464`` — a Cyrillic a (U+0430), a fullwidth
a (U+FF41), a trailing zero-width space (U+200B), a right-to-left override with the name reversed — each got 200 on
``GET me`` and their acts were audited under names that read as amy's (the U+202E one returned raw; the CLI escaped
it but not U+200B). Now the central service answers such a hub user 403 (field ``user``) naming the character and the
fix, on every request, and audits it once a minute under the name escaped; ``escaped_controls`` (every error's and
log line's rendering of a user's text) escapes the invisible format characters too.

Real parts: :meth:`HubSchedApp.resolve_identity` as every request calls it, on real services and a SQLite store (the
audit record read back), with a :class:`~jupyter_sched.hub.identity.HubUser` as the hub's token check makes one.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("jupyterhub", reason="hub mode needs jupyterhub (pip install jupyterhub)")

from jupyter_sched.errors import AuthorizationError, shown
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.hub.identity import HubUser
from jupyter_sched.hub.lookalike_names import LookalikeNames
from jupyter_sched.services import Services
from jupyter_sched.textsafe import escaped_controls

AMY = "r2937a464"
LOOKALIKES = {
    "r2937\u0430464": ("r2937\u0430464", "mixes Latin and Cyrillic letters"),
    "r2937\uff41464": ("r2937\\uff41464", "U+FF41 (fullwidth latin small letter a)"),
    AMY + "\u200b": (AMY + "\\u200b", "invisible character U+200B"),
    "\u202e464a7392r": ("\\u202e464a7392r", "invisible character U+202E"),
}


def _app(services: Services) -> Any:
    app = SimpleNamespace(services=services, admin_users=[], _provider=lambda: SimpleNamespace(admin_scope=None),
                          _lookalikes=LookalikeNames(), log=None)
    app._audit_lookalike = lambda refused: HubSchedApp._audit_lookalike(app, refused)  # type: ignore[arg-type]
    return app


def _user(name: str) -> HubUser:
    return HubUser({"name": name, "scopes": []}, admin=False, groups=["vision"])


@pytest.mark.parametrize("name", list(LOOKALIKES))
def test_red29_r2_a_lookalike_hub_name_is_refused_403_naming_the_character_and_audited_escaped(
        services: Services, name: str) -> None:
    app = _app(services)
    assert HubSchedApp.resolve_identity(app, _user(AMY)).name == AMY  # amy herself is served
    escaped, why = LOOKALIKES[name]
    for _ in range(3):  # every request is refused; the audit says it once a minute
        with pytest.raises(AuthorizationError) as refused:
            HubSchedApp.resolve_identity(app, _user(name))
    err = refused.value
    assert err.field == "user" and err.details["user"] == escaped, err.details
    assert f"the hub user name '{escaped}' may read as another user's" in err.message and why in err.message, err.message
    assert "\u200b" not in err.message and "\u202e" not in err.message and "\uff41" not in err.message
    assert "renames the user" in (err.hint or "")
    rows = [row for row in services.store.list_events(action="refused") if row.user == escaped]
    assert len(rows) == 1, rows
    assert rows[0].details["field"] == "user" and rows[0].details["status"] == 403, rows[0].details


def test_red29_r2_plain_names_of_any_one_alphabet_are_served(services: Services) -> None:
    app = _app(services)
    for name in ("alice.smith@example.org", "jos\u00e9", "\u0438\u0432\u0430\u043d", "\u7530\u4e2d", "bob-2_x"):
        assert HubSchedApp.resolve_identity(app, _user(name)).name == name
    assert services.store.list_events(action="refused") == []


def test_red29_r2_escaped_controls_escapes_invisible_format_characters() -> None:
    assert escaped_controls(AMY + "\u200b") == AMY + "\\u200b"
    assert escaped_controls("a\u2060b\ufeffc\u200ed\u00ad") == "a\\u2060b\\ufeffc\\u200ed\\xad"
    assert shown(AMY + "\u200b") == f"'{AMY}\\u200b'"
