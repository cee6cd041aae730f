"""red29 R2, the rest: a hub name that passes every one-name rule (s29-door's
:mod:`jupyter_sched.hub.lookalike_names`) can still read as a colleague's — a whole-script look-alike, every letter
Cyrillic (``\\u0430\\u0441\\u0435`` for ``ace``), or a dotless i. The central service now refuses a name whose Unicode
TR39 skeleton is another hub user's (the hub poll's names), never the ASCII one, said and audited with its
non-ASCII letters escaped; and the CLI's tables (``audit``, ``jobs``…) escape zero-width and bidi characters in every
cell (``amy\\u200b`` printed as ``amy`` before).

Real parts: :meth:`HubSchedApp.resolve_identity` and :meth:`HubSchedApp._seen_models` (the hub poll's names),
:class:`HubUser`, the CLI's ``audit`` command on a stand-in client.
"""

from __future__ import annotations

import argparse
import io
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.admission.user_names import lookalike_of, skeleton, skeletons
from jupyter_sched.errors import AuthorizationError
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.hub.identity import HubUser
from jupyter_sched.hub.lookalike_names import name_problem

ACE_CYRILLIC = "\u0430\u0441\u0435"  # a, es, ie: every letter Cyrillic
AMY = "r2937a464"


def _app(*names: str) -> Any:
    app = SimpleNamespace(services=SimpleNamespace(), _provider=lambda: None, admin_users=[], audited=[])
    app._audit_lookalike = app.audited.append
    HubSchedApp._seen_models(app, {name: {"groups": ["vision"]} for name in names})
    return app


def _user(name: str) -> HubUser:
    return HubUser({"name": name, "scopes": ["self"]}, admin=False, groups=["vision"])


def test_red29_r2_a_whole_script_lookalike_of_another_hub_user_is_refused_403_escaped_and_audited() -> None:
    assert name_problem(ACE_CYRILLIC) is None  # passes every one-name rule: only the other name shows it
    app = _app("ace", "carol", ACE_CYRILLIC)
    with pytest.raises(AuthorizationError) as refused:
        HubSchedApp.resolve_identity(app, _user(ACE_CYRILLIC))
    err = refused.value
    assert err.field == "user" and err.code == "forbidden", err
    assert err.message.startswith("the hub user name '\\u0430\\u0441\\u0435' may read as another user's, so this "
                                  "service refuses it: it reads as the name of another hub user, 'ace'"), err.message
    assert err.message.isascii() and err.details == {"user": "\\u0430\\u0441\\u0435", "lookalike_of": "ace"}
    assert err.hint is not None and "hub admin renames the user" in err.hint
    assert app.audited == [err]  # audited under the escaped name (s29-door's _audit_lookalike)
    assert HubSchedApp.resolve_identity(app, _user("ace")).name == "ace"  # the plain name is served
    assert HubSchedApp.resolve_identity(app, _user("carol")).name == "carol"


@pytest.mark.parametrize("name,other", [
    ("\u0430\u0441\u0435", "ace"), ("b\u0131ll", "bill"), ("\u0440\u0435\u0440", "pep"), ("\u03bf\u03c1\u03b1", "opa"),
    ("ACE", None), ("ace", None), ("jos\u00e9", None), ("\u0440\u0443\u0441\u0441\u043a\u0438\u0439", None),
])
def test_red29_r2_the_skeleton_finds_the_other_user_and_never_refuses_the_ascii_one(name: str, other: str | None) -> None:
    known = skeletons(["ace", "bill", "pep", "opa", "jose", name])
    assert lookalike_of(name, known) == other
    assert skeleton("\u0430\u0441\u0435") == skeleton("ACE") == "ace"


def test_red29_r2_before_the_first_hub_poll_only_the_one_name_rules_apply() -> None:
    app = SimpleNamespace(services=SimpleNamespace(), _provider=lambda: None, admin_users=[], audited=[])
    app._audit_lookalike = app.audited.append
    assert HubSchedApp.resolve_identity(app, _user(ACE_CYRILLIC)).name == ACE_CYRILLIC  # no names known yet
    HubSchedApp._seen_models(app, {"ace": {}, ACE_CYRILLIC: {}})
    with pytest.raises(AuthorizationError):
        HubSchedApp.resolve_identity(app, _user(ACE_CYRILLIC))


def test_red29_r2_the_cli_tables_escape_zero_width_and_bidi_characters() -> None:
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

    from jupyter_sched.cli.commands import _print_table

    out = io.StringIO()
    _print_table([["ID", "USER"], ["j-1", AMY + "\u2060"], ["j-2", AMY]], SimpleNamespace(out=out))
    assert out.getvalue().splitlines()[1].split() == ["j-1", "r2937a464\\u2060"], out.getvalue()
