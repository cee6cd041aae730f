"""Hub mode, local executor: a job whose owner has no OS account it may run as is refused at
admission (red-team finding 14) — before a 201, audited — never accepted and failed at start.

Real store (SQLite), real services and admission step, this host's real ``/etc/passwd`` (``nobody``
and ``root`` exist on every Linux host); a fake passwd lookup only for an account name this host
does not have with the overflow uid.
"""

from __future__ import annotations

import pwd
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import AuthorizationError, ExecutorError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.runas import AccountMapping
from jupyter_sched.hub.central import refuse_unrunnable
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


def passwd(name: str, uid: int) -> pwd.struct_passwd:
    return pwd.struct_passwd((name, "x", uid, uid, name, f"/home/{name}", "/bin/bash"))


def test_shared_and_system_accounts_are_never_run_as() -> None:
    with pytest.raises(ExecutorError) as nobody:
        AccountMapping().resolve("nobody")  # uid 65534 here: above min_uid, shared by daemons
    assert nobody.value.field == "user" and "share" in nobody.value.message
    with pytest.raises(ExecutorError) as squashed:  # the overflow uid under another name
        AccountMapping().resolve("squash", lookup=lambda name: passwd(name, 65534))
    assert "uid 65534" in squashed.value.message
    with pytest.raises(ExecutorError):  # an admin's own deny list
        AccountMapping(denied_accounts=frozenset({"shared-lab"})).resolve(
            "shared-lab", lookup=lambda name: passwd(name, 5000))
    assert AccountMapping().resolve("ana", lookup=lambda name: passwd(name, 5000),
                                    grouplist=lambda _n, gid: [gid]).uid == 5000
    pods = AccountMapping(accounts={"nob": "nobody"}, default_ids=(1000, 100))
    assert pods.pod_ids("nob") == (1000, 100)  # a pod never gets nobody's uid either


@pytest.fixture
def service(tmp_path: Path) -> SchedulerService:
    clock = ManualClock(T0)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                           inventory=SimulatedInventory(2, node="n1"), executor=LocalExecutor(tmp_path / "jobs"),
                           clock=clock, cycle_interval_s=60.0)
    svc.services.admission.run_as_check = refuse_unrunnable(AccountMapping())
    return svc


@pytest.mark.parametrize("user", ["nobody", "root", "daemon", "no-such-account-here"])
def test_a_job_of_a_user_without_a_runnable_account_is_refused_before_it_is_stored(
        service: SchedulerService, user: str) -> None:
    with pytest.raises(AuthorizationError) as refused:
        service.submit({"gpus": 0, "command": ["id"]}, user=user)
    assert refused.value.field == "user" and "refused" in refused.value.message and refused.value.hint
    assert service.list_jobs(user=None, state=None) == []
    audit = [e for e in service.audit(limit=20) if e["action"] == "refused"]
    assert [(e["user"], e["details"]["field"], e["details"]["status"]) for e in audit] == [(user, "user", 403)]
    lease = service.submit({"gpus": 1, "kernel_id": "k-1"}, user=user, kind="lease")  # a lease runs nothing
    assert lease["state"] == "pending"


@pytest.mark.parametrize("user", ["nobody", "root", "daemon", "no-such-account-here"])
def test_newuser13_n15_the_refusal_says_job_refused_then_why_without_a_chain_of_sos(
        service: SchedulerService, user: str) -> None:
    """New user 13, N15: ``hub user 'ghost' has no OS account 'ghost' on this host, so their job cannot
    run as them, so this job is refused`` — the admission step appended ", so this job is refused" to
    whatever the account mapping said, which had its own "so". The refusal now leads with what happened
    and gives the mapping's sentence as the why, whichever rule refused the account."""
    with pytest.raises(AuthorizationError) as refused:
        service.submit({"gpus": 0, "command": ["id"]}, user=user)
    message = refused.value.message
    assert message.startswith(f"job refused: hub user {user!r} "), message
    assert ", so " not in message, message
    assert refused.value.hint and refused.value.field == "user"
