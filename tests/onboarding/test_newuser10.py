"""New user 10's findings (/work/coord/notes/newuser10.md: a new user and a hostile hub user), each its
own test, against a real embedded server (simulated GPUs), the installed ``jupyter-sched`` command and
the executors' real environment and manifest builders."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.kube.kube_builders import allocation, make_job
from tests.onboarding.test_cli_firsthour import api, clear, wait_state
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu10"), users=USERS, admin_users=["boss"], simulated_gpus=2)
    try:
        yield srv
    finally:
        clear(srv)  # jobs outlive a killed server by design: stop this module's before killing it
        srv.kill()


def _env(tmp_path: Path, server: EmbeddedServer, token: str = "tok-ann") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONPATH": str(ROOT),
                "JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": token})
    return env


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


def _refused_and_audited(server: EmbeddedServer, body: dict[str, Any], field: str) -> dict[str, Any]:
    """POST jobs ``body`` as ann: a 400 naming ``field`` with a hint, and its audit record (boss reads it)."""
    refused = api(server, "tok-ann").post("jobs", json=body)
    assert refused.status_code == 400, refused.text
    error: dict[str, Any] = refused.json()["error"]
    assert error["field"] == field and error["hint"], error
    boss = api(server, "tok-boss")
    deadline = time.monotonic() + 15  # the refusal's audit record may land just after the answer
    while True:
        audited = boss.get("audit", params={"user": "ann", "limit": 1000}).json()
        if any((r.get("details") or {}).get("field") == field for r in audited):
            return error
        assert time.monotonic() < deadline, audited
        time.sleep(0.2)


@pytest.mark.parametrize("key", ["NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA",
                                 "NVIDIA_MIG_CONFIG_DEVICES", "nvidia_visible_devices", "AMD_VISIBLE_DEVICES"])
def test_newuser10_n4_env_may_not_choose_the_gpus_a_container_sees(server: EmbeddedServer, key: str) -> None:
    """N4 (medium, security): ``env {"NVIDIA_VISIBLE_DEVICES": "all"}`` on a 0-GPU job was 201 and
    reached the job — and the Kubernetes pod, where the NVIDIA container runtime exposes every GPU of
    the node to a pod that asked for none (the device plugin's own value comes before the container's
    env, which wins). Refused 400 ``env.<KEY>`` naming the fix, audited, whatever the case; the
    libraries' own ``NVIDIA_*`` settings (``NVIDIA_TF32_OVERRIDE``) stay accepted."""
    error = _refused_and_audited(server, {"gpus": 0, "command": ["true"], "env": {"SEED": "1", key: "all"}},
                                 f"env.{key}")
    assert key in error["message"] and "container runtime" in error["message"] and "--gpus" in error["hint"], error
    dryrun = api(server, "tok-ann").post("dryrun", json={"gpus": 0, "command": ["true"], "env": {key: "all"}})
    assert dryrun.status_code == 400 and dryrun.json()["error"]["field"] == f"env.{key}", dryrun.text
    fine = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["true"], "env": {"NVIDIA_TF32_OVERRIDE": "0"}})
    assert fine.status_code == 201, fine.text
    clear(server)


def test_newuser10_n4_no_executor_passes_a_device_variable_from_the_users_env() -> None:
    """N4, every executor path: a job stored before the request check (its spec built directly, as the
    store reads it back) never passes NVIDIA_VISIBLE_DEVICES on — the local executor's environment drops
    it, the Kubernetes manifest never emits the user's, and a 0-GPU pod gets ``void`` (an image's own
    ``NVIDIA_VISIBLE_DEVICES=all``, as CUDA images set, would otherwise expose every GPU); a GPU pod
    keeps the device plugin's value (no entry of ours)."""
    from jupyter_sched.executors.kubernetes import KubernetesConfig
    from jupyter_sched.executors.kubernetes.manifests import make_job_manifest
    from jupyter_sched.executors.local import job_environment

    config = KubernetesConfig(namespace="ml", allowed_images=("pytorch:*",))
    hostile = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "all", "SEED": "1"}
    for gpus, want in ((0, [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]), (1, [])):
        job = make_job(f"j-{gpus}", gpus=gpus, env=hostile)
        container = make_job_manifest(job, allocation("g1", gpus), config)["spec"]["template"]["spec"]["containers"][0]
        assert [e for e in container["env"] if e["name"].startswith("NVIDIA_")] == want, container["env"]
        assert {"name": "SEED", "value": "1"} in container["env"]
        env = job_environment(job, allocation("g1", gpus), {"PATH": "/usr/bin"}, logger=logging.getLogger("nu10"))
        assert "NVIDIA_VISIBLE_DEVICES" not in env and "NVIDIA_DRIVER_CAPABILITIES" not in env and env["SEED"] == "1"


@pytest.mark.parametrize("key", ["USER", "LOGNAME", "HOME", "user", "jupyter_sched_db_url", "Jupyterhub_User"])
def test_newuser10_n5_env_may_not_name_another_account_or_the_schedulers_variables_in_any_case(
        server: EmbeddedServer, key: str) -> None:
    """N5. Decision, per key, as Slurm (``--export``) and Kubernetes (``container.env``) do: a job's env
    is its owner's own process environment, so what changes only that process is the owner's to set —
    ``PATH``, ``PYTHONPATH``, ``PYTHONSTARTUP``, ``LD_LIBRARY_PATH`` (CUDA libraries), ``LD_PRELOAD``,
    ``BASH_ENV`` stay accepted: the job runs as its owner's account, the wrapper around it starts with
    ``python -I`` (reads no ``PYTHON*``), and set-uid programs ignore ``LD_*``, so none of them reaches
    another account or the service. ``HOME``/``USER``/``LOGNAME`` are refused (400 ``env.<KEY>``,
    audited): the scheduler sets them to the account the job runs as, and ``USER=nu10amy`` in eve's job
    made its log and ``getpass.getuser()`` name amy (the hint says how to move caches instead). The
    refused prefixes match whatever the case: lowercase ``jupyter_sched_db_url`` was 201."""
    error = _refused_and_audited(server, {"gpus": 0, "command": ["true"], "env": {key: "nu10amy"}}, f"env.{key}")
    assert key in error["message"], error
    kept = {"PATH": "/usr/bin:/bin", "PYTHONPATH": "/tmp/src", "PYTHONSTARTUP": "/tmp/s.py", "LD_LIBRARY_PATH": "/opt/cuda",
            "LD_PRELOAD": "/tmp/x.so", "BASH_ENV": "/tmp/env.sh", "JUPYTER_SCHED_URL": "http://x/"}
    fine = api(server, "tok-ann").post("jobs", json={"gpus": 0, "command": ["true"], "env": kept})
    assert fine.status_code == 201, fine.text
    clear(server)


def test_newuser10_n1_a_notebook_that_is_not_one_is_refused_and_never_quoted(server: EmbeddedServer,
                                                                              tmp_path: Path) -> None:
    """N1: ``POST jobs {"notebook": "../../../../etc/shadow"}`` was 201, then failed "cannot read notebook
    …: Notebook does not appear to be JSON: 'root:*:20228:…'" — the file's first bytes in the job's
    detail, its log, the queue and the audit. A path that is not a .ipynb file is refused at submit (400
    ``notebook``, as job definitions do); an .ipynb file that is not a notebook is refused too (new user
    14, N23) with words of ours, never the file's bytes."""
    ann = api(server, "tok-ann")
    refused = ann.post("jobs", json={"notebook": "../../../../etc/shadow", "gpus": 0})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["field"] == "notebook" and ".ipynb" in error["message"] and error["hint"], error
    secret = "root:TOPSECRET-nu10:20228:0:99999:7:::"
    for name, body in (("shadow.ipynb", secret + "\n"), ("list.ipynb", '["TOPSECRET-nu10"]'),
                       ("schema.ipynb", '{"nbformat": 4, "nbformat_minor": 5, "cells": "TOPSECRET-nu10"}')):
        (tmp_path / name).write_text(body)
        made = ann.post("jobs", json={"notebook": name, "gpus": 0, "working_dir": str(tmp_path)})
        # refused at submit since new user 14, N23 (it failed at its start), still in words of ours
        assert made.status_code == 400, made.text
        said = f"{made.text} {ann.get('queue').text}"
        assert "TOPSECRET" not in said and "cannot be read" in said and name in said, said


def _held_by_its_own_team() -> Any:
    """N6's hub: 4 GPUs; vision 2+1 and nlp 1+1. amy (vision) holds a kernel lease, eve's eve-1 and eve-2
    (nlp, no time limit) run; eve-3 (nlp) waits: nlp would use 3 GPUs, above 1 + 1. One GPU is free."""
    from jupyter_sched.model import JobKind, Quota
    from jupyter_sched.scheduling import run_cycle
    from tests.core.core_builders import make_job as core_job
    from tests.core.core_builders import make_node, quotas, running, snapshot

    lease = core_job("l-amy", team="vision", user="amy")
    lease = running(replace(lease, spec=replace(lease.spec, kind=JobKind.LEASE)), "n1", [0])
    jobs = [lease, running(core_job("eve-1", team="nlp", user="eve"), "n1", [1]),
            running(core_job("eve-2", team="nlp", user="eve"), "n1", [2]),
            core_job("eve-3", team="nlp", user="eve", submitted=1)]
    q = quotas(Quota(team="vision", guaranteed=2, borrowing_limit=1), Quota(team="nlp", guaranteed=1, borrowing_limit=1))
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs, quota=q))
    return next(p.reason for p in result.pending if p.job_id == "eve-3")


def test_newuser10_n6_a_job_held_by_its_teams_quota_waits_only_for_its_teams_work() -> None:
    """N6: eve-3, held back by nlp's borrowing limit, read "ETA unknown: it can start only after one or
    more of kernel-b79c4d2c (amy's lease), eve-1, eve-2 …": amy's lease is vision's — its release frees
    no nlp quota. Only the work on the quota line that is full is named (the core's ``eta_waits_on``)."""
    from jupyter_sched.wording.reasons import render_reason

    reason = _held_by_its_own_team()
    assert reason.code == "BorrowingLimitReached" and reason.eta is None, reason
    assert sorted(reason.details["eta_waits_on"]) == ["eve-1", "eve-2"], reason.details
    said = render_reason({"code": reason.code, "message": reason.message, "details": reason.details,
                          "eta": None, "eta_reason": reason.eta_reason}, mine=True).line
    assert "l-amy" not in said and "eve-1" in said, said


def test_newuser10_n16_wait_says_the_quota_once_and_names_only_the_teams_work() -> None:
    """N16 (nu9 N11, still): ``wait`` on eve-3 said "nlp would use 3 GPUs, above its guarantee 1 +
    borrowing limit 1 · ETA unknown: … amy-q1 … · It starts when nlp uses fewer GPUs than its guarantee
    plus borrowing limit (1 + 1), or when an admin raises them" — the numbers twice, and amy's job as
    something it waits for. The line ``wait``/``jobs`` print (``job_line``) now says the numbers once,
    names nlp's work only, and says what an admin can raise."""
    from jupyter_sched.wording.jobs import job_line

    reason = _held_by_its_own_team()
    job = {"id": "eve-3", "name": "eve-3", "state": "pending", "gpus": 1, "gpu_milli": 1000, "mine": True,
           "reason": {"code": reason.code, "message": reason.message, "details": reason.details, "position": 2,
                      "eta": None, "eta_reason": reason.eta_reason}}
    line = job_line(job, None)
    assert line.count("borrowing limit") == 2 and line.count("1 + 1") == 0, line  # the summary's and the admin's
    assert "above its limit of 2 GPUs (guaranteed 1 + borrowing limit 1)" in line and "raises nlp's borrowing limit" in line, line
    assert "l-amy" not in line and "eve-1" in line and "eve-2" in line, line


def _live_job_of_ann(server: EmbeddedServer, name: str) -> str:
    made = api(server, "tok-ann").post("jobs", json={"name": name, "gpus": 0, "command": ["sleep", "300"]})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def test_newuser10_n7_another_users_job_in_the_shared_queue_is_said_to_be_not_yours(server: EmbeddedServer,
                                                                               tmp_path: Path) -> None:
    """N7: eve's own ``jupyter-sched queue`` listed "j-… nu10amy running … amy-secret-bert", and
    ``cancel j-…`` answered "no job 'j-…' visible to you" — contradicting the line she read. A live job
    (the queue shows everyone's id, owner and name) is said to be another user's, with what to do; still a
    404 that names nothing of the job, not even its owner (case 020), and an id the queue does not show
    keeps "no job … visible to you"."""
    job_id = _live_job_of_ann(server, "ann-secret-bert")
    bob = _env(tmp_path, server, "tok-bob")
    assert job_id in api(server, "tok-bob").get("queue").text
    cancel = _cli(bob, "cancel", job_id)
    assert cancel.returncode != 0 and cancel.stderr.strip() == (
        f"jupyter-sched cancel: {job_id} is another user's job: you may cancel only your own — ask its owner "
        "(the queue names them) or an admin [forbidden]"), cancel.stderr
    logs = _cli(bob, "logs", job_id)
    assert "is another user's job: you may read only your own jobs' logs" in logs.stderr, logs.stderr
    seen = api(server, "tok-bob").get(f"jobs/{job_id}")
    assert seen.status_code == 403 and seen.json()["error"]["message"].startswith(f"{job_id} is another user's job"), seen.text
    assert "ann" not in json.dumps(seen.json()), seen.text  # case 020: nothing of the job, not its owner
    api(server, "tok-ann").delete(f"jobs/{job_id}")
    wait_state(server, "tok-ann", job_id, "cancelled")
    gone = api(server, "tok-bob").get(f"jobs/{job_id}")
    assert gone.status_code == 404 and gone.json()["error"]["message"] == f"no job {job_id!r} visible to you", gone.text


def test_newuser10_n8_an_admins_cancel_names_whose_job_and_which(server: EmbeddedServer, tmp_path: Path) -> None:
    """N8 (nu9 N17, still): bob (admin) cancelling amy's job read "cancelled j-… (was running; stopping,
    grace 10 s)" — neither whose nor which. Another user's work is named by owner and name; one's own
    line is unchanged."""
    job_id = _live_job_of_ann(server, "amy-second")
    wait_state(server, "tok-ann", job_id, "running")
    said = _cli(_env(tmp_path, server, "tok-boss"), "cancel", job_id)
    assert said.returncode == 0 and said.stdout.startswith(f"cancelled {job_id} (ann's amy-second; was running; "), \
        said.stdout + said.stderr
    own = _live_job_of_ann(server, "mine")
    mine = _cli(_env(tmp_path, server, "tok-ann"), "cancel", own)
    assert mine.returncode == 0 and mine.stdout.startswith(f"cancelled {own} (mine; was "), mine.stdout + mine.stderr
    clear(server)


def test_newuser10_n9_a_lease_keepalive_refusal_names_lease_id(server: EmbeddedServer) -> None:
    """N9: ``POST leases/<amy's lease>/keepalive`` answered 404 ``"field": "job_id"`` though the route's
    path parameter is ``lease_id`` (openapi: the path parameter at fault as the path names it)."""
    bob = api(server, "tok-bob")
    missing = bob.post("leases/l-nothere/keepalive", json={})
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "lease_id", missing.text
    theirs = bob.post(f"leases/{_live_job_of_ann(server, 'not-a-lease')}/keepalive", json={})
    error = theirs.json()["error"]
    assert theirs.status_code == 403 and error["field"] == "lease_id" and "is another user's job" in error["message"] \
        and "ann" not in theirs.text, theirs.text
    clear(server)


def test_newuser10_n13_a_tolerations_entry_of_the_wrong_type_is_named_by_its_index(server: EmbeddedServer) -> None:
    """N13: ``tolerations: [{"key": "x"}]`` read "tolerations must be a string (got an array of 1)",
    while an array is what the hint shows. The alternative that got furthest into the value says what
    is wrong: "tolerations[0] must be a string (got an object)", the hint an example."""
    refused = api(server, "tok-ann").post("jobs", json={"command": ["true"], "gpus": 0, "tolerations": [{"key": "x"}]})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["field"] == "tolerations[0]" and error["message"] == "tolerations[0] must be a string (got an object)", \
        error  # the item's place, as every list item's error names it (new user 13, N12)
    assert "gpu=true:NoSchedule" in error["hint"], error


def test_newuser10_n14_queue_rows_are_in_the_order_they_start(server: EmbeddedServer) -> None:
    """N14: ``jupyter-sched queue`` (and ``%schedule queue``) listed POS 3 above POS 1 and 2: rows came
    in submit order, positions from the engine's fair-share order. ann holds both GPUs and queued
    first; bob, who holds nothing, starts first — and his row now comes first."""
    ann, bob = api(server, "tok-ann"), api(server, "tok-bob")
    hog = ann.post("jobs", json={"name": "hog", "gpus": 2, "command": ["sleep", "300"]}).json()["id"]
    wait_state(server, "tok-ann", hog, "running")
    first = ann.post("jobs", json={"name": "ann-next", "gpus": 1, "command": ["true"]}).json()["id"]
    later = bob.post("jobs", json={"name": "bob-next", "gpus": 1, "command": ["true"]}).json()["id"]
    deadline = time.monotonic() + 30
    while True:  # until the engine has placed both (its positions, not the store's)
        rows = [r for r in bob.get("queue").json() if r["id"] in (first, later)]
        if len(rows) == 2 and {r["id"]: r["position"] for r in rows} == {later: 1, first: 2}:
            break
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)
    assert [r["id"] for r in rows] == [later, first], rows
    clear(server)


def test_newuser10_n12_the_cli_at_another_users_hub_server_says_whose_it_is(tmp_path: Path) -> None:
    """N12: ``jupyter-sched --url http://hub/user/nu10amy/ status`` as eve said only "request refused
    [forbidden]". It now says whose server that is and what to use. The answer is the one amy's server
    gave eve (hub/forward.py's JSON for JupyterHub's 403, "request refused"), served by a stand-in HTTP
    server: a JupyterHub with two accounts is tests/hub's harness, minutes to start."""
    from tests.onboarding.fake_hub import refusing_hub

    with refusing_hub() as base:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
        env.update({"PYTHONPATH": str(ROOT), "JUPYTERHUB_USER": "nu10eve", "JUPYTER_SCHED_TOKEN": "eves-token",
                    "JUPYTER_RUNTIME_DIR": str(tmp_path)})
        url = f"{base}/user/nu10amy/"
        said = _cli(env, "--url", url, "status")
    assert said.returncode != 0 and said.stderr.strip() == (
        f"jupyter-sched status: {url} is nu10amy's Jupyter server: your token may not use it — leave --url out in "
        f"your hub terminal (the hub's scheduler is found by itself), or use your own server, "
        f"{url.replace('nu10amy', 'nu10eve')} [forbidden]"), said.stderr


def test_newuser10_n2_decision_quantities_take_text_counts_and_flags_do_not() -> None:
    """N2 (``gpus: "1"`` → 201) — a decision, revised by new user 15, N3: the quantities with units
    (memory, mem_per_gpu, time_limit) take text, as Kubernetes quantities do; ``gpus`` and ``cpu`` are
    numbers, and a number sent as text is refused naming the field, as ``true`` is (``PUT quotas``
    refused ``"guaranteed": "2"`` while ``gpus: "1"`` was taken). A word keeps handed case 019's
    words (the CLI sends a word as typed). What is not a quantity takes its JSON type only: counts,
    ids and flags given as text are refused naming the field (checked here for every one of them)."""
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.model import spec_from_request
    from jupyter_sched.services.models.base import parse
    from jupyter_sched.services.models.jobs import SubmitJobRequest

    def submit(**fields: Any) -> Any:
        body = {"command": ["true"], **fields}
        return spec_from_request(parse(SubmitJobRequest, body).model_dump(exclude_none=True), user="eve")

    assert submit(gpus=1).resources.gpus == 1 and submit(cpu=2).resources.cpu_millis == 2000
    assert submit(memory="2GiB").resources.memory_mib == 2048 and submit(time_limit="10m").time_limit_s == 600
    for field, text in (("gpus", "1"), ("cpu", "2")):
        with pytest.raises(ValidationError) as as_text:
            submit(**{field: text})
        assert as_text.value.field == field and as_text.value.message == f'{field} must be a JSON number, not the ' \
            f'text "{text}"', as_text.value.message
    for field, text in (("workers", "2"), ("gpu_milli", "500"), ("time_limit_s", "60"), ("cpu_millis", "100"),
                        ("nvlink", "true"), ("checkpointable", "1")):
        with pytest.raises(ValidationError) as refused:
            submit(**{field: text})
        assert refused.value.field == field and f"(got '{text}')" in refused.value.message, refused.value.message
    with pytest.raises(ValidationError) as word:
        submit(gpus="two")
    assert word.value.message == 'gpus must be an integer (got "two")'  # handed case 019 b3's words


def test_newuser10_n10_a_path_the_job_cannot_search_is_said_not_chmod(tmp_path: Path) -> None:
    """N10: eve's job with ``env {"PATH": "/home/nu10amy/bin"}`` running ``sleep`` failed "exit code 126 (a
    command is not executable) — cannot start 'sleep': permission denied as nu10eve: it is not executable
    for nu10eve (chmod +x, …)": exec met a folder it could not search. The job's wrapper, run as a real
    second account with such a PATH, now says the program was not found there and which folder it
    cannot search, and exits 127 (not found), as a shell does."""
    from tests.accounts import account_python, os_accounts, runs_for_others, shared_dir, skip_reason

    if skip_reason() is not None:
        pytest.skip(skip_reason() or "")
    python = account_python()
    if python is None or not runs_for_others(python):
        pytest.skip("no Python that a second account can run")
    with os_accounts(2, prefix="nu10") as (amy, eve), shared_dir() as shared:
        wrapper = shared / "wrapper.py"  # self-contained: hub mode runs it from a pipe (python -I /dev/fd/N)
        wrapper.write_text((ROOT / "jupyter_sched" / "executors" / "wrapper.py").read_text())
        wrapper.chmod(0o644)
        closed = shared / "amy-bin"
        closed.mkdir()
        os.chown(closed, amy.uid, amy.gid)
        closed.chmod(0o700)
        job_dir = shared / "job"
        job_dir.mkdir()
        os.chown(job_dir, eve.uid, eve.gid)
        ran = subprocess.run([python, "-I", str(wrapper), "--job-dir",
                              str(job_dir), "--", "sleep", "0"], env={"PATH": str(closed)}, user=eve.uid,
                             group=eve.gid, extra_groups=[], capture_output=True, text=True, timeout=60, cwd="/")
    said = ran.stdout + ran.stderr
    assert ran.returncode == 127 and "chmod" not in said, said
    assert f"'sleep' was not found on the job's PATH: '{closed}' cannot be searched as {eve.name}" in said, said


def test_newuser10_n4_a_stored_job_never_passes_the_runtimes_variables_into_its_pod() -> None:
    """Defence in depth (nu10-fix's test, ab1b7b0, kept when the two fixes were joined): a job stored
    before the refusal carries the variables; its pod does not carry the job's values — a 0-GPU pod
    gets ``NVIDIA_VISIBLE_DEVICES=void`` of the scheduler's own instead (see the test above)."""
    from jupyter_sched.executors.kubernetes import KubernetesConfig
    from jupyter_sched.executors.kubernetes.manifests import make_job_manifest
    from tests.kube.kube_builders import A100

    job = make_job("old", gpus=0, env={"SEED": "1", "NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_REQUIRE_CUDA": "x"})
    config = KubernetesConfig(namespace="team-ml", default_image="pytorch:2.3", allowed_images=("pytorch:2.3",))
    manifest = make_job_manifest(job, allocation("g1", 0), config, gpu_products=(A100,))
    env = {e["name"]: e.get("value") for e in manifest["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["SEED"] == "1" and "NVIDIA_REQUIRE_CUDA" not in env and env["NVIDIA_VISIBLE_DEVICES"] == "void", env


def test_newuser10_n17_submit_confirms_the_name_beside_the_id(server: EmbeddedServer, tmp_path: Path) -> None:
    """N17 (nu9, still): ``jupyter-sched submit --name X`` confirmed "submitted j-…: pending, 1 GPU · …"
    while the magic says "Submitted job j-… (cellA)": the line now names it, as every job line does."""
    made = _cli(_env(tmp_path, server), "submit", "--gpus", "0", "--name", "cellA", "--workdir", str(tmp_path), "--",
                "sleep", "60")
    assert made.returncode == 0, made.stderr
    job_id = made.stdout.split()[1]
    assert job_id.startswith("j-") and made.stdout.startswith(f"submitted {job_id} (cellA): "), made.stdout
    clear(server)


def test_newuser10_n15_the_magics_queue_says_the_reason_in_words() -> None:
    """N15: ``%schedule queue``'s reason column showed codes ("BorrowingLimitReached", "WaitingForCapacity"),
    which the CLI never shows; the column says them in words. (Its long detail/eta columns are still
    cut by pandas' own display width in a notebook — left as pandas shows every frame.)"""
    from datetime import datetime, timezone

    from jupyter_sched.magics.render import queue_frame

    row = {"id": "j-1", "name": "eve-3", "user": "eve", "kind": "training", "state": "pending",
           "resources": {"gpus": 1}, "reason": {"code": "BorrowingLimitReached", "position": 1,
                                                "message": "nlp would use 3 GPUs, above its guarantee 1 + borrowing limit 1"}}
    frame = queue_frame([row], datetime.now(timezone.utc))
    assert frame["reason"].tolist() == ["borrowing limit reached"], frame["reason"].tolist()


def test_newuser10_n11_a_lease_is_never_named_after_its_kernel_id_to_others(server: EmbeddedServer,
                                                                          tmp_path: Path) -> None:
    """N11 (leak-ish): ``%gpu request`` named a lease ``kernel-<first 8 hex of the kernel id>``, and eve's
    shared queue, inventory and ETA lines showed that part of amy's kernel id. A lease given no name is
    now ``notebook lease`` (``kernel lease`` without a notebook) for everyone else; an older client's
    ``kernel-<hex>`` name is taken as no name; its owner's lines say ``lease for nb/explore.ipynb``
    (``lease for kernel <hex>`` without a notebook: the id is hers) — one renderer, ``work_name``, in the
    CLI, the magics and (``workName``) the panel."""
    import httpx

    from jupyter_sched.magics.parsing import JobOptions, lease_body
    from jupyter_sched.model import JobKind, JobSpec
    from jupyter_sched.model.job import public_name
    from jupyter_sched.wording.jobs import job_line, work_name

    def kernel() -> str:
        started = httpx.post(server.url + "api/kernels", json={"name": "python3"}, timeout=60,
                             headers={"Authorization": "token tok-ann"})
        assert started.status_code == 201, started.text
        return str(started.json()["id"])

    ann, bob = api(server, "tok-ann"), api(server, "tok-bob")
    k1, k2 = kernel(), kernel()
    by_magic = ann.post("leases", json=lease_body(JobOptions(gpus=1), kernel_id=k1, notebook="nb/explore.ipynb"))
    by_old_client = ann.post("leases", json={"gpus": 1, "kernel_id": k2, "name": f"kernel-{k2[:8]}"})
    assert by_magic.status_code == 201 and by_old_client.status_code == 201, (by_magic.text, by_old_client.text)
    big = ann.post("jobs", json={"gpus": 1, "command": ["true"], "name": "big"}).json()["id"]
    deadline = time.monotonic() + 60
    while True:  # the pending job's ETA line names what it waits for (the leases)
        seen = {row["id"]: row for row in bob.get("queue").json()}
        if ((seen.get(big) or {}).get("reason") or {}).get("text", {}).get("eta"):
            break
        assert time.monotonic() < deadline, seen
        time.sleep(0.2)
    texts = {"queue": bob.get("queue").text, "inventory": bob.get("inventory").text}
    for where, text in texts.items():
        assert k1[:8] not in text and k2[:8] not in text, (where, text)
    assert {seen[by_magic.json()["id"]]["name"], seen[by_old_client.json()["id"]]["name"]} == \
        {"notebook lease", "kernel lease"}, seen
    shown = _cli(_env(tmp_path, server, "tok-bob"), "queue")
    assert shown.returncode == 0 and "notebook lease" in shown.stdout and "kernel lease" in shown.stdout, shown.stdout
    assert k1[:8] not in shown.stdout and k2[:8] not in shown.stdout, shown.stdout
    own = {row["id"]: row for row in ann.get("queue").json()}
    assert work_name(own[by_magic.json()["id"]]) == "lease for nb/explore.ipynb"
    assert work_name(own[by_old_client.json()["id"]]) == f"lease for kernel {k2[:8]}"
    assert job_line(own[by_magic.json()["id"]], None).startswith(f"lease {by_magic.json()['id']} for nb/explore.ipynb: ")
    mine = _cli(_env(tmp_path, server), "queue")
    assert "…/explore.ipynb" in mine.stdout, mine.stdout  # the NAME column keeps the notebook (new user 12, N7)
    from jupyter_sched.model import spec_from_request

    assert spec_from_request({"gpus": 1, "kind": "lease"}, user="amy").name == "lease"  # no kernel (was "job")
    assert spec_from_request({"gpus": 1, "kind": "lease", "name": "mine"}, user="amy").name == "mine"
    # a lease stored before (its name kept as it was) reads as its default name to everyone else
    stored = JobSpec(name="kernel-abcdef12", user="amy", kind=JobKind.LEASE, kernel_id="abcdef12-0000")
    assert public_name(stored) == "kernel lease" and public_name(JobSpec(name="kernel-abcdef12", user="amy")) == \
        "kernel-abcdef12"
    clear(server)


@pytest.mark.parametrize("argv, want", [
    (["submit", "--bogus", "--", "true"], "jupyter-sched submit: --bogus: not an option of jupyter-sched submit — usage: "
                                         "jupyter-sched submit [options] (-- COMMAND"),
    (["queue", "--limit", "x"], "jupyter-sched queue: --limit: 'x' is not a whole number, e.g. 20 — usage: "
                                "jupyter-sched queue [-h] [--limit N | --all] [--mine"),  # | --user U … (A12)
    # what JOB accepts, then the usage (session 22, issue 20: it said JOB_ID although names work)
    (["wait"], "jupyter-sched wait: JOB: missing — give a job's id or name, e.g. jupyter-sched wait train "
               "(`jupyter-sched jobs` lists yours) — usage: jupyter-sched wait [-h] [--for DURATION] [--json] JOB"),
    (["stauts"], "jupyter-sched: COMMAND: 'stauts' is not one of status, submit, queue, wait, cancel, hold, release, "
                 "update, top, jobs, logs, definitions, teams, users, nodes, usage, audit, quotas, serve, simulate, "
                 "fetch-traces, doctor "
                 "— did you mean status?"),
    (["submit", "--time-limit", "-5m", "--", "true"],
     "jupyter-sched submit: --time-limit: must not be negative (got -5m) — e.g. --time-limit 30m"),  # newuser23 N1
    (["submit", "--gpus", "1"], "jupyter-sched submit: say what to run: -- python train.py, --script train.py or "
                                "--notebook analysis.ipynb"),
], ids=["unknown option", "bad value", "missing argument", "mistyped command", "value starting with -",
        "the CLI's own check"])
def test_newuser10_cli_usage_errors_in_the_tools_one_style(tmp_path: Path, argv: list[str], want: str) -> None:
    """Two CLI error styles (new users 9 and 10): a refused request read ``jupyter-sched submit: --gpus
    must be … — use … [validation_error]`` while a command-line mistake read argparse's ``usage: …`` line
    then ``jupyter-sched submit: error: unrecognized arguments: --bogus``. Every usage error is now one
    line in the tool's style: what was typed (the option or argument), what is wrong, a hint (the
    message's own, else the command's usage), ``[usage_error]``; exit 2 as before. No server is needed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"JUPYTER_RUNTIME_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)})
    run = _cli(env, *argv)
    assert run.returncode == 2 and run.stdout == "", run
    assert run.stderr.startswith(want) and run.stderr.endswith(" [usage_error]\n"), run.stderr
    assert run.stderr.count("\n") == 1 and "error:" not in run.stderr and not run.stderr.startswith("usage:"), run.stderr
