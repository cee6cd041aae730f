"""New user 19's findings fixed in the services and their wording (session 19)."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_sched.errors import UnschedulableError, ValidationError
from jupyter_sched.model.validation import as_sent
from jupyter_sched.services import Services
from jupyter_sched.services.host_size import host_memory_mib
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest


def _host() -> int:
    host = host_memory_mib()
    if not host:
        pytest.skip("this host says no memory size")
    return host


def _gib(mib: int) -> str:
    """The host's memory as the refusal says it beside the MiB: GiB cut (never rounded up) to 0.1."""
    return f"{mib * 10 // 1024 / 10:g} GiB"


@pytest.mark.parametrize("where", ["top", "resources"])
@pytest.mark.parametrize("route", ["submit", "dryrun"])
def test_newuser19_n1_memory_over_the_host_names_the_field_sent_and_echoes_its_value(
        services: Services, route: str, where: str) -> None:
    """``{"memory": "64 GiB"}`` on a 24 GiB host was refused as ``memory_mib 65536 is more than this
    host's 24105 MiB``, field ``memory_mib``: neither the field nor the value the caller sent (the CLI
    read ``--memory 65536 …``). The field as sent, the value as sent with its MiB, the host in GiB too."""
    host = _host()
    asked_gib = host // 1024 + 1
    sent = f"{asked_gib} GiB"
    body: dict[str, Any] = {"gpus": 0, "command": ["true"]}
    body.update({"memory": sent} if where == "top" else {"resources": {"memory": sent}})
    bo = services.caller("bo", admin=False)
    message = (f"memory '{sent}' ({asked_gib * 1024} MiB) is more than this host's {host} MiB ({_gib(host)})")
    hint = f"ask for at most {_gib(host)} ({host} MiB), or leave memory out"
    if route == "dryrun":  # the dry run says "never", as of more GPUs than any node has (newuser39 n1)
        said = services.jobs.dryrun(bo, SubmitJobRequest.model_validate(body)).model_dump()
        assert said["never"] is True and said["reason"]["details"]["field"] == "memory", said
        assert said["reason"]["message"] == message and hint[1:] in said["reason"]["unblock"], said["reason"]
        return
    with pytest.raises(UnschedulableError) as info:
        getattr(services.jobs, route)(bo, SubmitJobRequest.model_validate(body))
    err = info.value
    assert err.field == "memory", err.field
    assert err.message == message, err.message
    assert err.hint == hint, err.hint


def test_newuser19_n1_memory_mib_over_the_host_stays_in_mib(services: Services) -> None:
    """Sent in MiB, said in MiB (no second figure of the same number), with the host's GiB beside."""
    host = _host()
    bo = services.caller("bo", admin=False)
    with pytest.raises(UnschedulableError) as info:
        services.jobs.submit(bo, SubmitJobRequest.model_validate({"gpus": 0, "command": ["true"],
                                                                  "memory_mib": host + 1}))
    assert info.value.field == "memory_mib"
    assert info.value.message == f"memory_mib {host + 1} is more than this host's {host} MiB ({_gib(host)})"
    assert info.value.hint == f"ask for at most {host} MiB, or leave memory_mib out"


@pytest.mark.parametrize(("named", "body", "want"), [
    ("memory_mib", {"memory": "64GiB"}, "memory"),
    ("min_memory_mib", {"mem_per_gpu": "40GiB"}, "mem_per_gpu"),
    ("cpu_millis", {"resources": {"cpu": 4}}, "cpu"),
    ("time_limit_s", {"time_limit": "2h"}, "time_limit"),
    ("memory", {"memory_mib": 65536}, "memory_mib"),  # the direction that held before
    ("memory_mib", {"memory_mib": 65536}, "memory_mib"),
    ("memory_mib", {}, "memory_mib"),  # neither sent (a profile's default): as raised
])
def test_newuser19_n1_a_refusal_naming_a_converted_field_names_the_spelling_sent(
        named: str, body: dict[str, Any], want: str) -> None:
    """The kind of N1: a rule that speaks of a converted field (``memory_mib``, ``min_memory_mib``,
    ``cpu_millis``, ``time_limit_s``) names the spelling the body used; the hint follows."""
    err = as_sent(ValidationError("x", field=named, hint=f"leave {named} out"), body)
    assert err.field == want
    assert err.hint is not None and err.hint.startswith(f"leave {want} out"), err.hint


@pytest.mark.parametrize(("lines", "field", "said"), [
    ([{"team": "ml", "guaranteed": 1}, {"team": "ml", "guaranteed": 2}], "quotas[1]",
     "duplicate quota line: quotas[1] repeats quotas[0] (team 'ml', the whole team, any model)"),
    ([{"team": "ml", "guaranteed": 1}, {"team": "ml", "user": "ana", "guaranteed": 1, "gpu_model": "Simulated GPU"},
      {"team": "ml", "user": "ana", "guaranteed": 0, "gpu_model": "Simulated GPU"}], "quotas[2]",
     "duplicate quota line: quotas[2] repeats quotas[1] (team 'ml', user 'ana', model 'Simulated GPU')"),
    ([{"team": "ml", "guaranteed": 1}, {"team": "ml", "guaranteed": 1, "gpu_model": "A100"}], "quotas[1].gpu_model",
     "quotas[1].gpu_model 'A100': no GPUs of that model exist"),
], ids=["a team line twice", "a user's model line twice", "a model no GPU has"])
def test_newuser19_n8_quota_refusals_name_the_line_as_sent_in_words(
        services: Services, lines: list[dict[str, Any]], field: str, said: str) -> None:
    """``duplicate quota line for team 'ml', user None, model '*'`` (Python's None, field ``quotas``)
    and ``quota[ml, A100]: no GPUs of model 'A100' exist`` (field ``gpu_model``): every other quota
    refusal names ``quotas[i].<field>``."""
    root = services.caller("root", admin=True)
    with pytest.raises(ValidationError) as info:
        services.quotas.set(root, SetQuotasRequest.model_validate({"quotas": lines}))
    assert (info.value.field, info.value.message) == (field, said)
    assert "None" not in info.value.message
