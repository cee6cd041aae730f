"""newuser39 n12: for up to a minute after an admin took n39b out of hub group ml (her default; she was also in cv),
``jupyter-sched status`` said ``user n39b, team cv`` and under it ``you are now also in cv; new work still goes to ml``.
The team line came from the request's identity (its hub groups, cached up to ``token_cache_s``), the note from the
order the hub's poll last saw. Now the note is said of the groups and the default team the answer itself was read
from (``TeamOrder.noted``, what ``GET me``'s handler calls): the two never disagree; a submit's note likewise.

Real parts: ``SchedulerService`` in-process (real SQLite store and admission step, simulated GPUs), the hub poll's
user listing read from the loopback hub double of the other hub tests (it speaks the hub's REST wire format: a real
JupyterHub's ``DELETE /hub/api/groups/ml/users`` is what its changed listing stands for), GET me's answer as the REST
handler serialises it and the CLI's summary (:func:`~jupyter_sched.wording.status.status_lines`) rendered from it.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.default_team import TeamOrder, record_order
from jupyter_sched.hub.offboard import Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.jobs import SubmitJobRequest
from jupyter_sched.services.models.quotas import SetQuotasRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording.status import status_lines
from tests.hub.test_red15_offboarding import offboard_against

NOW = datetime(2026, 12, 7, 14, 17, tzinfo=timezone.utc)


def _service(tmp_path: Path) -> tuple[SchedulerService, TeamOrder, Offboarding]:
    """As the central service wires them: the poll's models to the order, the order to admission."""
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(4, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0)
    svc.services.quotas.set(svc.services.caller("root", admin=True), parse(SetQuotasRequest, {"quotas": [
        {"team": "ml", "guaranteed": 2}, {"team": "cv", "guaranteed": 1}]}))
    order = TeamOrder(record=lambda user, teams: record_order(svc.store, user, teams))
    order.prime(svc.store)
    svc.services.admission.group_order = order.order
    svc.services.admission.team_note = order.submit_note
    off = Offboarding(grace_s=0.0)
    off.on_models = lambda models: order.observe(models, NOW)
    return svc, order, off


def _poll(svc: SchedulerService, off: Offboarding, groups: dict[str, list[str]]) -> None:
    asyncio.run(offboard_against(svc, off, {u: {"": False} for u in groups},
                                 roles={u: {"groups": g} for u, g in groups.items()}))


def _status(svc: SchedulerService, order: TeamOrder, user: str, groups: list[str]) -> tuple[str, str]:
    """``status``'s ``user`` line and the note under it (""), from GET me as its handler answers a request whose
    identity holds ``groups``."""
    answer = order.noted(svc.services.accounting.me(svc.services.caller(user, admin=False, groups=groups)), groups,
                         NOW)
    me: dict[str, Any] = answer.to_wire()
    lines = status_lines("http://x", {}, me, {"gpus": []}, now=NOW)
    at = next(i for i, line in enumerate(lines) if line.startswith("user "))
    note = lines[at + 1].strip() if not lines[at + 1].startswith(("gpus", "jobs")) else ""
    return lines[at], note


def test_newuser39_n12_the_team_line_and_its_note_read_the_same_groups(tmp_path: Path) -> None:
    svc, order, off = _service(tmp_path)
    try:
        _poll(svc, off, {"n39b": ["ml"]})
        _poll(svc, off, {"n39b": ["ml", "cv"]})  # added to cv: ml stays the default
        line, note = _status(svc, order, "n39b", ["ml", "cv"])
        assert line == "user       n39b, teams ml (default), cv", line
        assert note == "you are now also in cv; new work still goes to ml — --team cv to charge it", note

        # the admin takes n39b out of ml; her next request reads the hub (groups [cv]) before the poll does
        line, note = _status(svc, order, "n39b", ["cv"])
        assert line == "user       n39b, team cv", line
        assert note == "you are no longer in ml; new work now goes to cv", note  # not "still goes to ml"
        job = svc.services.jobs.submit(svc.services.caller("n39b", admin=False, groups=["cv"]),
                                       parse(SubmitJobRequest, {"gpus": 0, "command": ["true"]}))
        assert job.team == "cv" and not any("goes to ml" in w for w in job.warnings or []), job.warnings

        _poll(svc, off, {"n39b": ["cv"]})  # the poll catches up: the same words, and the submit's once
        assert _status(svc, order, "n39b", ["cv"]) == (line, note)
        again = svc.services.jobs.submit(svc.services.caller("n39b", admin=False, groups=["cv"]),
                                         parse(SubmitJobRequest, {"gpus": 0, "command": ["true"]}))
        assert note in (again.warnings or []), again.warnings

        # the other way round: the poll saw her join vision, the request's identity is older (groups [cv])
        _poll(svc, off, {"n39b": ["cv", "vision"]})
        line, note = _status(svc, order, "n39b", ["cv"])
        assert line == "user       n39b, team cv" and "vision" not in note, (line, note)
    finally:
        svc.store.close()


def test_newuser39_n12_a_note_sending_work_elsewhere_than_the_default_is_not_said(tmp_path: Path) -> None:
    """A group with a quota line comes before one without (the default team), whatever the join order: n39c joined
    zz (no line) first, then cv — her default is cv, so "new work still goes to zz" would contradict the line."""
    svc, order, off = _service(tmp_path)
    try:
        _poll(svc, off, {"n39c": ["zz"]})
        _poll(svc, off, {"n39c": ["zz", "cv"]})
        line, note = _status(svc, order, "n39c", ["zz", "cv"])
        assert line == "user       n39c, teams cv (default), zz" and note == "", (line, note)
        job = svc.services.jobs.submit(svc.services.caller("n39c", admin=False, groups=["zz", "cv"]),
                                       parse(SubmitJobRequest, {"gpus": 0, "command": ["true"]}))
        assert job.team == "cv" and not any("goes to zz" in w for w in job.warnings or []), job.warnings
    finally:
        svc.store.close()
