"""newuser27 n2: holding my own pending job on my own lab (I am its owner and the admin) answered "held (an
admin's hold: only an admin releases it)"; an admin's hold on their own job is the owner's hold (the
owner's words, "release with: …"), while an admin's hold on another user's job stays an admin's."""

from __future__ import annotations

from core_builders import T0, make_job

from jupyter_sched.admission import Caller
from jupyter_sched.services.job_update import _hold


def _held(caller: Caller) -> tuple[bool, list[str]]:
    job = make_job("j-own", user="root")
    lines: list[str] = []
    new = _hold(caller, job, True, T0, [], lines, None)
    assert new.held is not None
    return new.held.admin, lines


def test_newuser27_n2_an_admins_hold_of_their_own_job_is_the_owners() -> None:
    admin, lines = _held(Caller(user="root", teams=("default",), admin=True))
    assert admin is False and lines == ["held (release with: jupyter-sched release j-own)"], lines
    admin, lines = _held(Caller(user="boss", teams=("default",), admin=True))
    assert admin is True and lines == ["held (an admin's hold: only an admin releases it)"], lines
