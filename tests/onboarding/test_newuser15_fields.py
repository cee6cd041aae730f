"""New user 14's findings of branch nu15-fix (/work/coord/notes/newuser14.md, N19 N21, and a lease of
0 GPUs): what a job's GPU fields may say together, refused at submit with the field and the fix on
REST, in the CLI and in the magics alike — against a real embedded server (2 simulated GPUs, none
MIG-partitioned), the installed ``jupyter-sched`` command and the magics with a real client. The
rule lives in ``jupyter_sched.model.validation`` (``_gpu_fields_fit``, ``lease_gpus_range``); the
core's reasons in ``jupyter_sched.placement.reasons``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from jupyter_sched.model import GPU, Inventory, MigDevice, Node, QuotaSet
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import Snapshot
from tests.core.core_builders import make_job, make_node, running
from tests.onboarding.test_cli_firsthour import api, module_server
from tests.onboarding.test_newuser14_fields import _cli_line, _magic, _rest
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu15", USERS)


# ---- N19: a MIG profile on a cluster with GPUs but no MIG partitions ----------------------------------------

def test_newuser15_n19_a_mig_profile_where_no_gpu_is_partitioned_names_that_not_no_gpus(
        server: EmbeddedServer) -> None:
    """N19: ``{"gpus": 1, "mig_profile": "1g.10gb"}`` on a 2-GPU server was a 422 "unknown MIG profile
    1g.10gb; available: none" with the hint "this cluster has no GPUs; ask for 0 GPUs" — the cluster has
    GPUs, and 0 GPUs is not the fix. The refusal has its own code and says what is true and what to do."""
    error = _rest(server, {"gpus": 1, "command": ["true"], "mig_profile": "1g.10gb"}, status=422)
    assert error["field"] == "mig_profile", error
    assert error["message"] == "no GPU here is MIG-partitioned, so mig_profile '1g.10gb' cannot be met", error
    assert error["hint"] == "leave mig_profile out for a whole GPU (or a share: gpus 0.5)", error
    reason = error["details"]["reason"]  # type: ignore[index]
    assert reason["code"] == "NoMatchingMigProfile", reason
    said = " ".join([error["message"], error["hint"], str(reason)])
    assert "no GPUs" not in said and "0 GPUs" not in said, said
    quoted = _rest(server, {"gpus": 1, "command": ["true"], "mig_profile": "$(id)"}, status=422)
    assert "mig_profile '$(id)'" in quoted["message"], quoted  # a value said as a value


def test_newuser15_n19_an_unknown_profile_among_real_ones_keeps_case_022s_words() -> None:
    """Case 022 r3's sentence is kept for a profile not among those advertised, under the new code,
    and the hint names the profiles instead of "ask for 0 GPUs"."""
    slices = tuple(MigDevice(uuid=f"MIG-{i}", profile="1g.6gb", gpu_instance_id=i, memory_mib=6144) for i in range(2))
    node = Node(name="gpu-n3", gpus=(GPU(uuid="GPU-a30", index=0, node="gpu-n3", model="NVIDIA A30", memory_mib=24576,
                                         mig_enabled=True, mig_devices=slices),))
    job = make_job("r3", gpus=1, mig_profile="2g.12gb")
    result = run_cycle(Snapshot(now=datetime(2026, 12, 4, tzinfo=timezone.utc), inventory=Inventory(nodes=(node,)),
                                jobs=(job,), quotas=QuotaSet()))
    (reject,) = result.rejects
    assert reject.reason.code == "NoMatchingMigProfile"
    assert reject.reason.message == "unknown MIG profile 2g.12gb; available: 1g.6gb"
    assert reject.reason.unblock == "ask for one of the MIG profiles here (1g.6gb), or leave mig_profile out for a whole GPU"


# ---- N21: GPU-only fields on a job that asks for no GPU ----------------------------------------------------

GPU_ONLY = [
    pytest.param("mig_profile", "1g.10gb", "--mig-profile", id="mig_profile pended forever under a CPU reason"),
    pytest.param("mem_per_gpu", "200GiB", "--mem-per-gpu", id="mem_per_gpu was taken and ignored"),
    pytest.param("nvlink", True, "--nvlink", id="nvlink was taken and ignored"),
    pytest.param("model", "Simulated GPU 80GB", "--model", id="model was taken and ignored"),
    pytest.param("workers", 3, "workers", id="workers were taken and one ran"),
]


@pytest.mark.parametrize(("field", "value", "option"), GPU_ONLY)
def test_newuser15_n21_a_gpu_only_field_on_a_job_without_gpus_is_refused_naming_it(
        server: EmbeddedServer, field: str, value: object, option: str) -> None:
    """N21: ``{"gpus": 0, "mig_profile": "1g.10gb"}`` was a 201 that pended forever ("no ready node has 0
    millicores CPU and 0 MiB host memory free"); ``mem_per_gpu``, ``nvlink``, ``model`` and ``workers``
    with ``gpus: 0`` were taken and silently ignored (a gang's all-0 ``groups`` were refused). Now each is
    a 400 naming the field, the same rule for every surface (they build their job in one place)."""
    error = _rest(server, {"gpus": 0, "command": ["true"], field: value})
    assert error["field"] == field, error
    assert error["message"].startswith(f"{field} ") and error["message"].endswith(
        ", but the job asks for no GPU (gpus 0)"), error
    assert f"or leave {field} out for work without a GPU" in error["hint"], error
    # the same job with a GPU is not refused for that field
    with_gpu = api(server, "tok-ann").post("dryrun", json={"gpus": 1, "command": ["true"], field: value})
    assert with_gpu.status_code != 400 or with_gpu.json()["error"]["field"] != field, with_gpu.text


def test_newuser15_n21_the_cli_and_the_magic_say_the_rule_in_their_own_options(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """N21 on the other surfaces: ``jupyter-sched submit --gpus 0 --mem-per-gpu 10GiB`` and ``%%schedule
    --gpus 0 --model …`` were submitted and ran, ignoring the option; now both are refused before
    anything is stored, naming the option as typed."""
    line = _cli_line(server, tmp_path, "--gpus", "0", "--mem-per-gpu", "10GiB", "--", "true")
    assert line.startswith("jupyter-sched submit: --mem-per-gpu is the memory of each GPU the job gets, but the job "
                           "asks for no GPU (gpus 0) — ask for GPUs with --gpus N, or leave --mem-per-gpu out for work "
                           "without a GPU; --memory asks for host RAM"), line
    said = _magic(server, "schedule", "--gpus 0 --model Simulated")
    assert said.startswith("--model chooses the kind of GPU, but the job asks for no GPU (gpus 0)"), said
    assert "--gpus N" in said, said
    jobs = api(server, "tok-ann").get("jobs").json()
    assert not [j for j in (jobs["jobs"] if isinstance(jobs, dict) else jobs) if j["resources"]["gpu_models"]], jobs


def test_newuser15_n21_a_mig_profile_is_one_slice(server: EmbeddedServer) -> None:
    """The rest of the kind: a MIG profile is one slice of one GPU, but ``gpus: 2`` (the placer takes
    one slice, Kubernetes was asked for two), ``gpus: 0.5`` or ``workers: 2`` with it were taken."""
    for extra, wrong, got in (({"gpus": 2}, "gpus", "2"), ({"gpus": 0.5}, "gpus", "0.5"),
                              ({"gpus": 1, "workers": 2}, "workers", "2")):
        error = _rest(server, {"command": ["true"], "mig_profile": "1g.10gb", **extra})
        assert error["field"] == "mig_profile", error
        assert error["message"] == f"mig_profile asks for one MIG slice of a GPU, so {wrong} must be 1 (got {got})"


def test_newuser15_n21_a_stored_gpu_less_mig_job_is_rejected_not_pended_forever() -> None:
    """A job stored before the submit rule (or built by the simulator) with ``gpus: 0`` and a MIG
    profile: the core rejects it naming mig_profile, instead of pending it under "no ready node has 0
    millicores CPU and 0 MiB host memory free"."""
    job = make_job("zero-mig", gpus=0, mig_profile="1g.10gb")
    result = run_cycle(Snapshot(now=datetime(2026, 12, 4, tzinfo=timezone.utc),
                                inventory=Inventory(nodes=(make_node("n1", gpus=2),)), jobs=(job,), quotas=QuotaSet()))
    (reject,) = result.rejects
    assert reject.reason.details["field"] == "mig_profile"
    assert "0 millicores" not in reject.reason.message and "0 MiB" not in reject.reason.message


def test_newuser15_n21_no_reason_names_a_zero_sized_constraint() -> None:
    """The placer's "no node has room" reason names only what the job asks for: a GPU-less job asking
    for CPU alone, on a node whose CPU is taken, is told "no ready node has 2 CPU cores free",
    not "… 2000 millicores CPU and 0 MiB host memory free" (and memory alone likewise; in cores and GiB as typed
    since session 40)."""
    node = make_node("n1", gpus=0, cpu_millis=4000, host_memory_mib=8192)
    busy = running(make_job("busy", gpus=0, cpu_millis=3000, memory_mib=7000), indices=())
    now = datetime(2026, 12, 4, tzinfo=timezone.utc)
    for job, want in ((make_job("cpu", gpus=0, cpu_millis=2000), "no ready node has 2 CPU cores free."),
                      (make_job("mem", gpus=0, memory_mib=4096), "no ready node has 4 GiB host memory free.")):
        result = run_cycle(Snapshot(now=now, inventory=Inventory(nodes=(node,)), jobs=(busy, job), quotas=QuotaSet()))
        (pend,) = [p for p in result.pending if p.job_id == job.id]
        assert pend.reason.message == want, pend.reason
        assert " 0 millicores" not in pend.reason.message and " 0 MiB" not in pend.reason.message


# ---- a lease of 0 GPUs: one rule for REST and %gpu request ------------------------------------------------

def test_newuser15_a_lease_of_no_gpu_is_refused_on_rest_as_in_the_magic(server: EmbeddedServer) -> None:
    """``POST leases {"gpus": 0}`` was a 201 lease holding nothing (and ``{"kind": "lease", "gpus": 0}``
    on POST jobs), while ``%gpu request 0`` refused it "N must be > 0 (got 0)". One rule and one sentence
    now: a lease holds GPUs."""
    ann = api(server, "tok-ann")
    for route, body in (("leases", {"gpus": 0}), ("jobs", {"gpus": 0, "kind": "lease"})):
        answer = ann.post(route, json=body)
        assert answer.status_code == 400, (route, body, answer.text)
        error = answer.json()["error"]
        assert (error["field"], error["message"], error["hint"]) == (
            "gpus", "gpus must be > 0 (got 0)", "ask for 1 or more GPUs, or a share such as 0.5"), error
    as_text = ann.post("leases", json={"gpus": "0"}).json()["error"]  # a number as text: refused as such (N3)
    assert as_text["message"] == 'gpus must be a JSON number, not the text "0"', as_text
    assert _magic(server, "gpu", "request 0 --no-wait") == \
        "%gpu request: gpus must be > 0 (got 0). Ask for 1 or more GPUs, or a share such as 0.5."
    assert ann.post("leases", json={"gpus": 0.5}).status_code == 201
    assert not [r for r in ann.get("leases").json() if r["resources"]["gpus"] == 0]
