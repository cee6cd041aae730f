"""red29 R2: hub users whose names read as another's (Cyrillic a, fullwidth a, a trailing U+200B, U+202E + the
name reversed) were served and audited unflagged; the CLI printed U+200B as nothing. Now the central service
refuses such a caller 403 naming the field ``user`` and the fix, audited under the name escaped; a name whose
TR39 skeleton is another known user's is refused too (never an ASCII one); the CLI's tables escape Cf.

Real parts: :meth:`HubSchedApp.resolve_identity` and :meth:`HubSchedApp._seen_models` (the hub poll's names),
:class:`HubUser`, :meth:`SchedHandler._audit_refusal` and :meth:`Admission.record_refusal` with its refusal windows,
the CLI's ``audit`` command on a stand-in client.
"""

from __future__ import annotations

import argparse
import io
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.admission.user_names import escaped_name, lookalike_of, name_problem, skeletons
from jupyter_sched.errors import AuthorizationError
from jupyter_sched.extension.web import SchedHandler
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.hub.identity import HubUser
from jupyter_sched.textsafe import escaped_controls

AMY = "r2937a464"
VARIANTS = {
    "cyrillic a": AMY.replace("a", "\u0430", 1),
    "fullwidth a": AMY.replace("a", "\uff41", 1),
    "zero-width space": AMY + "\u200b",
    "right-to-left override": "\u202e" + AMY[::-1],
    "no-break space": AMY + "\u00a0",
    "word joiner": "r29\u206037a464",
}


def _app(*names: str) -> Any:
    app = SimpleNamespace(services=SimpleNamespace(), _provider=lambda: None, admin_users=[])
    HubSchedApp._seen_models(app, {name: {"groups": ["vision"]} for name in names})
    return app


def _user(name: str) -> HubUser:
    return HubUser({"name": name, "scopes": ["self"]}, admin=False, groups=["vision"])


@pytest.mark.parametrize("tag", sorted(VARIANTS))
def test_red29_r2_a_lookalike_hub_name_is_refused_403_naming_user_and_the_fix(tag: str) -> None:
    name = VARIANTS[tag]
    app = _app(AMY, "carol", name)
    assert HubSchedApp.resolve_identity(app, _user(AMY)).name == AMY  # amy herself is served
    with pytest.raises(AuthorizationError) as refused:
        HubSchedApp.resolve_identity(app, _user(name))
    err = refused.value
    assert err.field == "user" and err.code == "forbidden", err
    shown = escaped_name(name)
    assert shown.isascii() and shown != AMY and err.details["refused_name"] == shown
    assert f"the hub user name '{shown}' " in err.message and err.message.isascii(), err.message
    assert err.hint is not None and "rename your hub account" in err.hint


def test_red29_r2_the_reasons_are_named() -> None:
    assert name_problem(AMY + "\u200b") == "holds U+200B (zero width space), an invisible or reordering character"
    assert name_problem("\u202e" + AMY[::-1]) == ("holds U+202E (right-to-left override), an invisible or "
                                                 "reordering character")
    assert name_problem(AMY.replace("a", "\uff41", 1)) == ("holds U+FF41 (fullwidth latin small letter a), a styled "
                                                           "form of 'a' (the name is not in Unicode's NFKC form)")
    assert name_problem(AMY.replace("a", "\u0430", 1)) == "mixes Latin and Cyrillic letters in one word"
    for fine in (AMY, "jos\u00e9", "\u0440\u0443\u0441\u0441\u043a\u0438\u0439", "\u5c71\u7530", "anne-marie"):
        assert name_problem(fine) is None, fine


def test_red29_r2_a_whole_script_lookalike_of_a_known_user_is_refused_never_the_ascii_one() -> None:
    known = skeletons(["ace", "carol", "\u0430\u0441\u0435"])  # all-Cyrillic a-es-ie passes every one-name rule
    assert name_problem("\u0430\u0441\u0435") is None
    assert lookalike_of("\u0430\u0441\u0435", known) == "ace"
    assert lookalike_of("ace", known) is None  # the plain name is never the one refused
    assert lookalike_of("\u0440\u0443\u0441\u0441\u043a\u0438\u0439", known) is None
    app = _app("ace", "\u0430\u0441\u0435")
    with pytest.raises(AuthorizationError) as refused:
        HubSchedApp.resolve_identity(app, _user("\u0430\u0441\u0435"))
    assert "reads as the name of another user, 'ace'" in refused.value.message
    assert refused.value.details["lookalike_of"] == "ace"
    assert HubSchedApp.resolve_identity(app, _user("ace")).name == "ace"


def test_red29_r2_the_refusal_is_audited_under_the_escaped_name() -> None:
    """The refusal happens in ``prepare`` (no caller resolved): before, the web layer audited nothing then."""
    audited: list[tuple[Any, Any, str]] = []
    handler = SimpleNamespace(_sched_caller=None, _late=False, current_user=_user(VARIANTS["zero-width space"]),
                              request=SimpleNamespace(method="GET", body=b""), _template="me",
                              sched=SimpleNamespace(audit_refusal=lambda who, err, request: audited.append(
                                  (who, err, request))))
    with pytest.raises(AuthorizationError) as refused:
        HubSchedApp.resolve_identity(_app(AMY), handler.current_user)
    SchedHandler._audit_refusal(handler, refused.value)
    [(who, err, request)] = audited
    assert who.user == "r2937a464\\u200b" and who.teams == () and err is refused.value and request == "GET me"


def test_red29_r2_the_cli_tables_escape_zero_width_and_bidi_characters() -> None:
    assert escaped_controls(AMY + "\u200b") == "r2937a464\\u200b"
    assert escaped_controls("\u202e" + AMY[::-1]) == "\\u202e464a7392r"
    assert escaped_controls("a\u2060b\ufeffc\u200ed") == "a\\u2060b\\ufeffc\\u200ed"
    assert escaped_controls("jos\u00e9 \u5c71\u7530") == "jos\u00e9 \u5c71\u7530"

    from jupyter_sched.cli.admin_views import audit

    rows = [{"id": 1, "at": "2026-12-06T05:33:00Z", "actor": AMY + "\u200b", "action": "squat_refused",
             "user": "\u202e" + AMY[::-1], "job_id": None, "message": f"{AMY}\u200b's Jupyter server says"}]
    client = SimpleNamespace(call=lambda req: rows)
    out = io.StringIO()
    args = argparse.Namespace(limit=100, action=None, user=None, actor=None, job=None, since=None, until=None,
                              exclude=None, json=False, csv=False)
    assert audit(client, args, SimpleNamespace(out=out, err=io.StringIO())) == 0
    printed = out.getvalue()
    assert "r2937a464\\u200b" in printed and "\\u202e464a7392r" in printed, printed
    assert "\u200b" not in printed and "\u202e" not in printed
