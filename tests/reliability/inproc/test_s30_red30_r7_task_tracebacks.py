"""red30 R7: every request of a refused look-alike hub user wrote a ~3 KB "Task exception was never retrieved …
AuthorizationError" traceback into service.log (1,454 requests in 10 s → +4.5 MiB). The refusal's audit record was
a fire-and-forget task (``SchedApp.audit_refusal``) that resolved the caller again — and the identity step refused
it again inside the task, whose exception nobody retrieved, so asyncio logged the whole traceback when the task
was collected.

Now the look-alike refusal is marked audited where it is audited (once a minute per name), a refusal recorder
whose caller the identity step refuses writes nothing more, and every fire-and-forget task
(:func:`jupyter_sched.extension.background.fire_and_forget`) says a failure in one line, at most one a minute
per kind, never as asyncio's traceback.

Real parts: the real server (pytest-jupyter) on a SQLite store, its identity step refusing one user as the
central service refuses a look-alike hub name (:func:`~jupyter_sched.hub.lookalike_names.lookalike_refusal`);
:meth:`HubSchedApp.resolve_identity`; the background tasks on the real event loop.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.admission.user_names import skeletons
from jupyter_sched.errors import AuthorizationError
from jupyter_sched.extension import background
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.hub.identity import HubUser
from jupyter_sched.hub.lookalike_names import lookalike_refusal
from tests.web.conftest import EVE_TOKEN

NEVER_RETRIEVED = "Task exception was never retrieved"
LOOKALIKE = "\uff45ve"  # a fullwidth e: reads as "eve"


async def test_red30_r7_twenty_requests_of_a_refused_identity_write_no_task_traceback(
        sched_app: Any, api: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    real = sched_app._resolver

    def resolver(user: Any) -> Any:  # eve's hub name refused at the identity step, as a look-alike's
        if getattr(user, "username", None) == "eve":
            refused = lookalike_refusal(LOOKALIKE, skeletons(["eve", LOOKALIKE]))
            assert refused is not None
            raise refused
        return real(user)

    monkeypatch.setattr(sched_app, "_resolver", resolver)
    caplog.set_level(logging.DEBUG)
    statuses = []
    for i in range(20):  # GET me and GET jobs resolve the caller late (on the call's thread), GET quotas early
        route = ("me", "jobs", "quotas", f"jobs/j-{i}")[i % 4]
        status, body = await api("GET", route, token=EVE_TOKEN)
        statuses.append(status)
        assert body["error"]["field"] == "user", body
    await sched_app.refusals_written()
    await asyncio.sleep(0)
    gc.collect()  # a task nobody retrieved says so when it is collected
    await asyncio.sleep(0)
    assert statuses == [403] * 20, statuses
    assert not [r for r in caplog.records if NEVER_RETRIEVED in r.getMessage()]  # was one per late request
    assert not [r for r in caplog.records if r.exc_info and isinstance(r.exc_info[1], AuthorizationError)]
    rows = [e for e in sched_app.services.store.list_events(limit=1000) if "eve" in f"{e.actor} {e.user}"]
    assert len(rows) <= 1, rows


def test_red30_r7_the_central_services_lookalike_refusal_is_audited_once_not_again_by_the_request() -> None:
    app = SimpleNamespace(services=SimpleNamespace(), _provider=lambda: None, admin_users=[], audited=[])
    app._audit_lookalike = app.audited.append
    HubSchedApp._seen_models(app, {"eve": {}, LOOKALIKE: {}})
    user = HubUser({"name": LOOKALIKE, "scopes": ["self"]}, admin=False, groups=[])
    with pytest.raises(AuthorizationError) as refused:
        HubSchedApp.resolve_identity(app, user)
    assert refused.value.audited and app.audited == [refused.value]  # the request's own audit step skips it


async def test_red30_r7_a_failed_fire_and_forget_task_is_one_line_a_minute_never_a_traceback(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(background.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(background, "_said", {})
    caplog.set_level(logging.DEBUG)

    async def fails(i: int) -> None:
        raise AuthorizationError(f"refused {i}\nsecond line")

    kept: set[Any] = set()
    for i in range(5):
        background.fire_and_forget(fails(i), what="an audit record of a refusal", keep=kept)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    now[0] += background.FAILURE_LINE_EVERY_S
    background.fire_and_forget(fails(5), what="an audit record of a refusal", keep=kept)
    for _ in range(3):
        await asyncio.sleep(0)
    gc.collect()
    await asyncio.sleep(0)
    lines = [r.getMessage() for r in caplog.records if "an audit record of a refusal failed" in r.getMessage()]
    assert lines == ["jupyter_sched: an audit record of a refusal failed: AuthorizationError: refused 0 second line",
                     "jupyter_sched: an audit record of a refusal failed: AuthorizationError: refused 5 second line "
                     "(4 more since the last such line)"], lines
    assert not [r for r in caplog.records if NEVER_RETRIEVED in r.getMessage() or r.exc_info]
    assert not kept  # each one let go once done
