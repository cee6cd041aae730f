"""red40 R4: ``DELETE leases/{id}?why=kernel_restart`` with the user's own token made the record say "released by the
server: its kernel was restarted" — the user had released it by hand, and an admin read the user's word as this
service's. A hub user's server says these causes with its owner's token, which the owner's code holds too: the record
now names the owner's server ("released by r40c's Jupyter server: …"), and only the lease's owner may give one.

Real parts: the service layer on a real SQLite store (the REST handler passes the query model as is).
"""

from __future__ import annotations

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.services.models.jobs import CancelJobRequest


def test_red40_r4_a_server_cause_from_the_owner_names_the_owners_server_not_this_service(services: Services) -> None:
    carol = services.caller("r40c", admin=False)
    lease = services.leases.request(carol, SubmitJobRequest(gpus=1, kernel_id="k-made-up"))
    services.engine.tick()
    ended = services.jobs.cancel(carol, lease.id, cause=CancelJobRequest(why="kernel_restart"))
    said = str(ended.to_wire()["message"])
    assert said == "released by r40c's Jupyter server: its kernel was restarted", said  # was "released by the server"


def test_red40_r4_another_users_server_cause_is_refused_naming_the_field(services: Services) -> None:
    carol, boss = services.caller("r40c", admin=False), services.caller("boss", admin=True)
    lease = services.leases.request(carol, SubmitJobRequest(gpus=1, kernel_id="k-1"))
    services.engine.tick()
    with pytest.raises(ValidationError) as refused:
        services.jobs.cancel(boss, lease.id, cause=CancelJobRequest(why="server_stop"))
    assert refused.value.field == "why" and "r40c's" in refused.value.message, refused.value
    for why in ("kernel_exit", "interrupt", "timeout"):  # verify40 V1: facts about r40c's kernel on boss's say-so
        with pytest.raises(ValidationError) as refused:
            services.jobs.cancel(boss, lease.id, cause=CancelJobRequest(why=why))
        assert refused.value.field == "why" and "own kernel or client (r40c's)" in refused.value.message, refused.value
    assert services.jobs.get(carol, lease.id).to_wire()["state"] == "running"  # nothing ended by the refusal
    ended = services.jobs.cancel(boss, lease.id)  # without a why: boss's own release, said as boss's
    assert "released by boss" in str(ended.to_wire()["message"]), ended.to_wire()
