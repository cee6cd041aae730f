"""newuser38 n7: the scheduler admins the service's log names (:class:`~jupyter_sched.hub.admin_roll.AdminRoll`),
from the hub's user models as its poll reads them (``GET users``: ``name``, ``admin``), ``c.SchedApp.admin_users``
and the admin scope of a request's token. The real hub's log: tests/hub/test_s38_newuser38_hub_start.py."""

from __future__ import annotations

from typing import Any

from jupyter_sched.hub.admin_roll import SHOWN, AdminRoll

SCOPE = "custom:jupyter-sched:admin"
ALSO = (f"; also any caller whose token holds the scope {SCOPE} (c.HubIdentityProvider.admin_scope), named here at "
        "their first request")


def _models(**admin: bool) -> dict[str, dict[str, Any]]:
    return {name: {"name": name, "admin": flag, "groups": []} for name, flag in admin.items()}


def test_newuser38_n7_each_admin_is_named_once_with_its_sources() -> None:
    """Failed before: "the hub's admins, holders of the scope …, and c.SchedApp.admin_users (boss)" — no hub admin
    by name, ever."""
    roll = AdminRoll(SCOPE, ["boss", "carol"])
    assert roll.line() == ("scheduler admins: boss (c.SchedApp.admin_users), carol (c.SchedApp.admin_users), and "
                           "the hub's admins (named here once the hub's user list is read)" + ALSO)
    said = roll.seen(_models(carol=True, n38c=True, amy=False))
    assert said == ("scheduler admins: boss (c.SchedApp.admin_users), carol (hub admin, c.SchedApp.admin_users), "
                    "n38c (hub admin)" + ALSO)
    assert roll.seen(_models(carol=True, n38c=True, amy=False)) is None  # unchanged: not at every poll
    changed = roll.seen(_models(carol=False, n38c=True, amy=True))
    assert changed == ("now a hub admin: amy; no longer a hub admin: carol — scheduler admins: amy (hub admin), "
                       "boss (c.SchedApp.admin_users), carol (c.SchedApp.admin_users), n38c (hub admin)" + ALSO)


def test_newuser38_n7_no_admin_by_name_is_said_so_and_many_are_counted() -> None:
    roll = AdminRoll(SCOPE, [])
    assert roll.line().startswith("scheduler admins: the hub's admins (named here once the hub's user list is read);")
    assert roll.seen({}) == "scheduler admins: no one by name (the hub has no admin and c.SchedApp.admin_users is " \
                            "empty)" + ALSO
    many = roll.seen(_models(**{f"a{i:02d}": True for i in range(SHOWN + 3)}))
    assert many is not None and many.startswith("now a hub admin: a00, a01,") and " and 3 more — " in many, many
    assert many.endswith("a19 (hub admin) and 3 more" + ALSO), many


def test_newuser38_n7_a_scope_admin_is_named_once_and_names_are_escaped() -> None:
    roll = AdminRoll(SCOPE, ["boss"])
    assert roll.scope_admin("boss", hub_admin=False) is None  # named already, by admin_users
    assert roll.scope_admin("carol", hub_admin=True) is None  # named already, as a hub admin
    assert roll.scope_admin("ops", hub_admin=False) == (
        f"scheduler admins: ops is one through the scope {SCOPE} of the token of this request "
        "(c.HubIdentityProvider.admin_scope)")
    assert roll.scope_admin("ops", hub_admin=False) is None
    said = roll.seen(_models(**{"ev\x1b[31mil": True}))
    assert said is not None and "\x1b" not in said and "ev\\x1b[31mil (hub admin)" in said, said
