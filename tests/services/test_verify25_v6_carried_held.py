"""verify25 V6: a pending carried notebook costs the service several times its size in memory (store rows,
row cache, the engine's snapshot: 2.5-6x measured), and only a per-user bound (64 MiB) held it — twenty users
at their bound, gigabytes. All users' carried content together is now bounded too: ``c.SchedApp.
max_carried_bytes_held`` (default 256 MiB; 0 = none), a submit past it refused 429 naming the field, the limit
and the fix, audited; work that carries nothing is not affected.

Real parts: the in-process services on a SQLite store (tests/services/conftest.py), the SchedApp trait read
through the settings the server builds.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from jupyter_sched.admission.policy import AdmissionPolicy
from jupyter_sched.errors import BusyError, ValidationError
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest


def _notebook(size: int) -> str:
    return json.dumps({"cells": [], "metadata": {"pad": "x" * size}, "nbformat": 4, "nbformat_minor": 5})


def test_verify25_v6_all_users_carried_notebooks_are_bounded_together_429_naming_the_setting(
        services: Services) -> None:
    admission = services.jobs.ctx.admission
    admission.policy = replace(admission.policy, max_carried_bytes_held=1 << 20)  # 256 MiB in production
    body = {"gpus": 4, "notebook": "carried.ipynb", "notebook_json": _notebook(300_000)}
    for user in ("amy", "bob", "cat"):  # three users, each well under their own bound
        services.jobs.submit(services.caller(user, admin=False), SubmitJobRequest(**body))
    dan = services.caller("dan", admin=False)
    with pytest.raises(BusyError) as refused:  # a fourth would make ~1.2 MiB held by all
        services.jobs.submit(dan, SubmitJobRequest(**body))
    error = refused.value
    assert error.field == "notebook_json", error
    assert "the unfinished jobs of all users would carry 1.1 MiB of notebooks and scripts" in error.message, error
    assert "at most 1 MiB (c.SchedApp.max_carried_bytes_held)" in error.message, error
    assert "notebook: path" in (error.hint or "") and "c.SchedApp.max_carried_bytes_held" in (error.hint or "")
    assert error.details["limit"] == 1 << 20 and error.details["carried_bytes_held"] > 1 << 20, error.details
    assert [e.actor for e in services.store.list_events(action="refused")] == ["dan"]
    services.jobs.submit(dan, SubmitJobRequest(gpus=4, command=["true"]))  # work that carries nothing still goes


def test_verify25_v6_the_setting_reaches_the_policy_and_is_checked() -> None:
    from traitlets import TraitError

    from jupyter_sched.extension.app import SchedApp

    assert SchedApp().max_carried_bytes_held == 256 << 20
    with pytest.raises(TraitError, match=r"c\.SchedApp\.max_carried_bytes_held = -1: must be >= 0\. Fix: e\.g\. 268435456"):
        SchedApp(max_carried_bytes_held=-1)
    assert AdmissionPolicy.from_settings({"max_carried_bytes_held": 5 << 20}).max_carried_bytes_held == 5 << 20
    assert AdmissionPolicy.from_settings({}).max_carried_bytes_held == 0  # in-process default: none
    with pytest.raises(ValidationError) as bad:
        AdmissionPolicy.from_settings({"max_carried_bytes_held": -1})
    assert bad.value.field == "max_carried_bytes_held"
