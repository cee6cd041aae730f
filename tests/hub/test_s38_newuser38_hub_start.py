"""newuser38's hub start-up log (issue 20, the first hour of a new hub admin).

- **n7**: ``scheduler admins: the hub's admins, holders of the scope …, and c.SchedApp.admin_users (none)`` named
  nobody — docs/admin.md said the log names them, and hub admin n38c was not listed. Now the log names the admins
  it resolves: ``carol (hub admin)`` once the hub's user list is read, and again when the hub's admins change.
- **n6**: a first start (a fresh log_dir) said ``user servers' fence record …: not there yet, and this service ran
  here before; every account's group is closed unless its lease holds a GPU`` (a false "ran before", and jargon),
  and the ``oom_score_adj … CAP_SYS_RESOURCE`` sentence was logged twice per start (inside the INFO ``local jobs:``
  line, then as its own WARNING).

Real parts, as tests/hub/test_newuser13_hub.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real OS
accounts, ``jupyter-sched serve`` as root on PostgreSQL, its log; hub admins changed through the hub's REST API
with a hub admin's own token.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_sched.executors.limits import oom_floor_problem
from jupyter_sched.executors.server_fence import server_fence_problem
from tests.accounts import Account

from .hub_harness import Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "s38nuhub")


def _log(hub: Hub) -> str:
    return (hub.base / "service.log").read_text(errors="replace")


def _admin_lines(hub: Hub) -> list[str]:
    """The ``scheduler admins:`` lines of the service's latest start (the log is appended to at a restart)."""
    lines = [line.split("jupyter_sched: ", 1)[1] for line in _log(hub).splitlines()
             if "jupyter_sched: " in line and "scheduler admins: " in line]
    starts = [i for i, line in enumerate(lines) if "(named here once the hub's user list is read)" in line]
    return lines[starts[-1]:] if starts else lines


def test_newuser38_n7_the_log_names_the_hub_admins_and_their_changes(hub: Hub, users: dict[str, Account]) -> None:
    """Failed before: the only line named the sources and "c.SchedApp.admin_users (none)" — carol, the hub's
    admin, appeared nowhere in the service's log."""
    scope = "custom:jupyter-sched:admin"
    hub.wait_for(lambda: any("carol (hub admin)" in line for line in _admin_lines(hub)), 60, "the admins named")
    said = _admin_lines(hub)
    assert said[0] == ("scheduler admins: the hub's admins (named here once the hub's user list is read); also any "
                       f"caller whose token holds the scope {scope} (c.HubIdentityProvider.admin_scope), named here "
                       "at their first request"), said
    assert said[1] == (f"scheduler admins: carol (hub admin); also any caller whose token holds the scope {scope} "
                       "(c.HubIdentityProvider.admin_scope), named here at their first request"), said
    assert len(said) == 2, said  # not again at every read of the hub's users (every second here)

    amy = users["amy"].name
    carol = hub.token_for("carol")  # a hub admin grants admin; the test's service may not
    made = hub.api("PATCH", f"users/{amy}", {"admin": True}, token=carol)
    assert made.status_code == 200, made.text
    hub.wait_for(lambda: len(_admin_lines(hub)) > 2, 60, "the new hub admin named")
    both = ", ".join(f"{name} (hub admin)" for name in sorted([amy, "carol"]))
    assert _admin_lines(hub)[2].startswith(f"now a hub admin: {amy} — scheduler admins: {both}; also any caller"), \
        _admin_lines(hub)
    unmade = hub.api("PATCH", f"users/{amy}", {"admin": False}, token=carol)
    assert unmade.status_code == 200, unmade.text
    hub.wait_for(lambda: len(_admin_lines(hub)) > 3, 60, "the hub admin's removal named")
    assert _admin_lines(hub)[3].startswith(f"no longer a hub admin: {amy} — scheduler admins: carol (hub admin); "
                                           "also any caller"), _admin_lines(hub)


def test_newuser38_n6_a_first_start_says_no_fence_record_line_and_the_oom_floor_once(hub: Hub) -> None:
    """Failed before: the first start of a fresh log_dir warned "not there yet, and this service ran here before;
    every account's group is closed…", and where this service lacks CAP_SYS_RESOURCE its sentence came twice."""
    text = _log(hub)
    assert "ran here before" not in text and "group is closed" not in text, text[-4000:]
    assert "let open a GPU is not known" not in text, text[-4000:]  # the new line, said only where it is unknown
    if server_fence_problem() is None:  # a host that fences: its record kept from the first start on
        assert (hub.jobs_dir / ".state" / ".server-fence.json").exists()
        hub.restart_service()
        again = _log(hub)
        assert "let open a GPU is not known" not in again and "ran here before" not in again, again[-4000:]
        text = again
    starts = text.count("local jobs: ")
    assert starts >= 1, text[-4000:]
    if oom_floor_problem() is not None:  # this VM, as Docker's default set: no CAP_SYS_RESOURCE
        assert text.count("lacks CAP_SYS_RESOURCE") == starts, text[-4000:]  # once per start, the WARNING
        floors = re.findall(r"oom_score_adj 500, no floor \(([^)]*)\)", text)
        assert floors == ["the WARNING below says why and the fix"] * starts, floors
