"""red31 R6 (second half): r31b bound r31a's service's declared port from a terminal, and r31a's service
pended "port … is bound on this host by a process outside the scheduler" for as long as r31b liked — r31a was
never told whose process (only the service log, for admins, said it). Now once the port has stayed bound for
``HOLDER_NAMED_AFTER_S`` (10 min) the edge names the holder's account (``Snapshot.port_holders``) and the
waiting job's reason says it to its owner; not at once, so declaring ports is no quick way to learn who
listens where. Another user reading the queue reads neither the port nor the account
(tests/web/test_s32_red31_r6_queue_port.py).

The edge part with a real listening socket of a real other OS account (the edge's monotonic clock is
injected: ten minutes are not waited for); the core part through ``run_cycle``."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest

from jupyter_sched.executors.bound_ports import HOLDER_NAMED_AFTER_S, BoundPorts
from jupyter_sched.model import JobKind
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason
from tests.accounts import account_python, os_accounts, skip_reason
from tests.core.core_builders import T0, make_job, make_node, snapshot

HOLD = ("import socket, time; s = socket.create_server(('127.0.0.1', 0)); "
        "print(s.getsockname()[1], flush=True); time.sleep(600)")


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_red31_r6_a_port_bound_for_a_while_is_named_by_its_holders_account() -> None:
    with os_accounts(1) as (squatter,):
        holder = subprocess.Popen([account_python() or sys.executable, "-c", HOLD], stdout=subprocess.PIPE, text=True,
                                  user=squatter.uid, group=squatter.gid, cwd="/")
        try:
            assert holder.stdout is not None
            port = int(holder.stdout.readline())
            clock = [1000.0]
            ports = BoundPorts(monotonic=lambda: clock[0])
            assert ports([port]) == {port} and ports.holders() == {}, "not named at once"
            clock[0] += HOLDER_NAMED_AFTER_S - 1
            assert ports([port]) == {port} and ports.holders() == {}
            clock[0] += 1
            assert ports([port]) == {port} and ports.holders() == {port: squatter.name}
        finally:
            holder.kill()
            holder.wait(timeout=30)
        assert ports([port]) == frozenset() and ports.holders() == {}, "freed: forgotten"
        clock[0] += HOLDER_NAMED_AFTER_S
        assert ports.holders() == {}


def test_red31_r6_the_waiting_services_reason_names_the_holders_account_to_its_owner() -> None:
    job = make_job("a-serve", gpus=1, user="r31a")
    job = replace(job, spec=replace(job.spec, kind=JobKind.INFERENCE, port=19961))
    base = replace(snapshot([make_node("vm", gpus=4)], [job]), ports_bound_outside=frozenset({19961}))
    first = next(p.reason for p in run_cycle(base).pending if p.job_id == "a-serve")
    assert "r31b" not in first.message and "holder_account" not in first.details
    later = next(p.reason for p in run_cycle(replace(base, port_holders={19961: "r31b"})).pending
                 if p.job_id == "a-serve")
    assert later.code == "PortInUse" and later.details["holder_account"] == "r31b", later
    text = render_reason(reason_to_dict(later), now=T0, relative=True)
    assert "by a process of r31b" in text.summary and "ask r31b to free port 19961" in text.line, text
