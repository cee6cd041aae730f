"""Verify 24, V4 (words): a user removed from a hub group that still exists — now empty — read "held: team teama
is no hub group any more … it never starts charged to teama", the words of a renamed or deleted group
(hubadmin23 A9), whose only way out is to cancel and submit again: the group was there, and an admin may add
them back.

The service knew groups only from its users' models, so a group nobody is in looked deleted. Now the
offboarding check asks the hub about each team of live work no listed user is in (``GET groups/{name}``,
:func:`jupyter_sched.hub.hubapi.group_exists`): one the hub still has is no vanished group, and the job's
reason says its owner is no longer a member (the way back: an admin adds them again). A group the hub no
longer has keeps the rename words.

Real parts: a ``SchedulerService`` on a real SQLite store, the real :class:`~jupyter_sched.hub.hubapi.HubAPI`
against the loopback hub double (its user models carry ``groups``; ``GET groups/{name}`` answers 404 for a
group it does not have), the real offboarding check.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.hub.membership import TEAM_LEFT_ACTION
from tests.hub.test_red15_offboarding import offboard_against
from tests.hub.test_red18_team import SLEEP, _job, _records, _service, _submit
from tests.in_process import cancel_all_and_close


@pytest.mark.parametrize(("still_there", "want", "way_out"), [
    pytest.param({"teama"}, "held: v24a is no longer a member of team teama", "an admin adds v24a back to teama",
                 id="the group still exists, empty: its member was removed"),
    pytest.param(set(), "held: team teama is no hub group any more", "submit it again",
                 id="the group is gone: the rename words, as before"),
])
def test_verify24_v4_an_emptied_group_is_no_vanished_one(tmp_path: Path, still_there: set[str], want: str,
                                                         way_out: str) -> None:
    svc, off = _service(tmp_path, gpus=2)
    users: dict[str, dict[str, bool]] = {"v24a": {"": True}, "v24b": {"": True}}
    roles: dict[str, dict[str, Any]] = {"v24a": {"groups": ["teama"], "admin": False},
                                        "v24b": {"groups": ["teamb"], "admin": False}}
    try:
        queued = _submit(svc, "v24a", ["teama"], {"gpus": 1, "team": "teama", "command": SLEEP, "name": "a-queued"})
        roles["v24a"]["groups"] = []  # the hub admin removes v24a, teama's only member, from the group
        asyncio.run(offboard_against(svc, off, users, roles, groups=still_there))
        (left,) = _records(svc, TEAM_LEFT_ACTION, 1)
        assert left["message"].startswith("v24a is no longer a member of team teama"), left
        for _ in range(2):
            svc.tick()
        job = _job(svc, queued)
        reason = job["reason"]
        assert job["state"] == "pending" and reason["code"] == "TeamMembership", job
        # failed before (the group still there): "held: team teama is no hub group any more (found …)"
        assert reason["message"].startswith(want), reason
        assert way_out in reason["unblock"], reason
    finally:
        cancel_all_and_close(svc)
