"""New user 22, N6: the lease's owner was not told when the lease would be reclaimed while the job waiting for
it was told to the minute ("ETA 05:18 UTC … if your own kernel lease cvlease stays idle"): ``queue`` said
"held until released … no time limit" all along, ``jobs`` only once the warning was out, 8 s before.

``GET idle`` lists idle work from its first idle sample with its reclaim deadline — the idle candidates the
waiter's ETA reads too (:mod:`jupyter_sched.engine.idle_ends`). The owner's line now says it from then on
(stage ``idle``, not only ``warned``) in ``queue``, ``jobs``, ``status`` and ``%gpu``, and says nothing while
the lease is in use (no entry) or where idle work is only reported (``notify``).
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from jupyter_sched.cli.commands import jobs, queue, status
from jupyter_sched.cli.main import EXIT_OK, Streams, build_parser
from jupyter_sched.wording.jobs import idle_note


class _Server:
    """A server's answers where the caller's kernel lease ``cvlease`` is idle, not warned yet (wire dicts)."""

    def __init__(self, idle: list[dict[str, Any]]) -> None:
        from types import SimpleNamespace

        self.connection = SimpleNamespace(url="http://127.0.0.1:1/")
        self.lease = {"id": "l-1", "name": "cvlease", "user": "root", "kind": "lease", "state": "running",
                      "priority": "normal", "resources": {"gpus": 1}, "kernel_id": "k", "mine": True,
                      "idle_release": {"action": "release", "after_s": 240},
                      "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-1"], "gpu_milli": 1000}}
        self.idle = idle

    def config(self) -> dict[str, Any]:
        return {"version": "x"}

    def me(self) -> dict[str, Any]:
        return {"user": "root", "in_use": {"leases": 1, "gpus": 1}, "pending": 0}

    def inventory(self) -> dict[str, Any]:
        return {"gpus": [], "simulated": True}

    def idle_candidates(self) -> list[dict[str, Any]]:
        return self.idle

    def queue(self, limit: int | None = None) -> list[dict[str, Any]]:
        return [self.lease]

    def queue_head(self, limit: int) -> tuple[list[dict[str, Any]], int | None]:
        return self.queue(limit), None

    def jobs(self, **_: Any) -> list[dict[str, Any]]:
        return [self.lease]

    def jobs_upto(self, most: int, **_: Any) -> tuple[list[dict[str, Any]], bool]:
        return [self.lease][:most], most < 1


def _entry(deadline: datetime, **fields: Any) -> dict[str, Any]:
    return {"job_id": "l-1", "user": "root", "kind": "lease", "stage": "idle", "action": "release",
            "idle_since": (deadline - timedelta(minutes=4)).isoformat(), "deadline": deadline.isoformat(),
            "warn_at": (deadline - timedelta(seconds=30)).isoformat(), "rule": "kernel idle and GPU < 5 % for 4 min",
            "grace_s": 0.0, **fields}


def _said(server: _Server) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, command in (("queue", queue), ("jobs", jobs), ("status", status)):
        buf = io.StringIO()
        assert command(server, build_parser().parse_args([name]), Streams(out=buf, err=io.StringIO(),
                                                                           stdin=io.StringIO())) == EXIT_OK
        out[name] = " ".join(buf.getvalue().split())
    return out


def test_s22_newuser22_n6_an_idle_leases_line_says_its_reclaim_before_the_warning() -> None:
    deadline = (datetime.now(timezone.utc) + timedelta(minutes=3)).replace(microsecond=0)
    day = "" if deadline.date() == datetime.now(timezone.utc).date() else f"{deadline:%b} {deadline.day} "
    since = deadline - timedelta(minutes=4)
    sday = "" if since.date() == datetime.now(timezone.utc).date() else f"{since:%b} {since.day} "
    for surface, said in _said(_Server([_entry(deadline)])).items():
        assert (f"idle since {sday}{since:%H:%M} UTC (rule: kernel idle and GPU < 5 % for 4 min): its GPUs are "
                f"released at {day}{deadline:%H:%M} UTC (in ") in said, (surface, said)
        assert "unless it is used — `%gpu keepalive` in its notebook keeps them" in said, (surface, said)
    # %gpu (the magic's words: %gpu keepalive is run where it is read)
    assert idle_note(_entry(deadline), None, magic=True).endswith("unless it is used — %gpu keepalive keeps them")


@pytest.mark.parametrize("idle", [[], "notify"], ids=["in use: no idle entry", "idle work only reported"])
def test_s22_newuser22_n6_nothing_said_while_it_is_busy_or_only_reported(idle: Any) -> None:
    deadline = datetime.now(timezone.utc) + timedelta(minutes=3)
    entries = [_entry(deadline, action="notify")] if idle == "notify" else idle
    for surface, said in _said(_Server(entries)).items():
        assert "idle since" not in said and "released at" not in said, (surface, said)


def test_s22_newuser22_n6_a_job_its_time_limit_ends_first_is_not_told_an_idle_reclaim_after_it() -> None:
    # a 10m job idle under a 60-min rule: "requeued at … (in 57m)" would come after its own end (the panel's
    # rule, new user 11, N23); once warned it is said whatever the limit
    now = datetime.now(timezone.utc).replace(microsecond=0)
    server = _Server([_entry(now + timedelta(minutes=57), kind="training", job_id="j-1", action="requeue",
                             rule="GPU < 5 % for 60 min")])
    server.lease = {**server.lease, "id": "j-1", "name": "train", "kind": "training", "kernel_id": None,
                    "idle_release": None, "time_limit_s": 600, "started_at": (now - timedelta(minutes=2)).isoformat()}
    said = _said(server)
    assert "idle since" not in said["queue"] and "idle since" not in said["jobs"], said
    server.lease = {**server.lease, "time_limit_s": 7200}
    said = _said(server)
    assert "it is requeued (its GPUs freed) at " in said["queue"] and "using its GPUs keeps them" in said["jobs"], said
