"""Red team 15, R1 / R9 / R15: one user's local job cannot use another user's GPUs or take the host down.

Real subprocess jobs through the local executor, in real cgroup v1 groups of this host (devices,
pids, memory; skipped with the reason where the service could not make them: not root, cgroup v2).
The GPU device files are real character devices (major 195, made with mknod in the test's folder):
with no NVIDIA driver loaded, opening an allowed one fails with ENXIO/ENODEV *past* the devices
cgroup, a denied one with EPERM *at* it — the cgroup's verdict, which is what is under test.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.limits import NVIDIA_MAJOR, LimitGroups, LocalLimits, minor_resolver
from jupyter_sched.executors.local import LocalExecutor, job_environment
from jupyter_sched.inventory import SimulatedInventory
from jupyter_sched.model import Allocation, Job, ResourceRequest
from jupyter_sched.model.jobenv import refused_variable
from tests.onboarding.test_cli_firsthour import api, clear
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import wait_event

CGROUP = Path("/sys/fs/cgroup")


def _v1_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (the service makes the job's cgroups as root)"
    if (CGROUP / "cgroup.controllers").exists():
        return "cgroup v2 host: the devices fence needs cgroup v1 (v2 is fenced by environment only)"
    missing = [c for c in ("devices", "pids", "memory") if not (CGROUP / c / "cgroup.procs").exists()]
    return f"no cgroup v1 {', '.join(missing)} controller here" if missing else None


needs_v1 = pytest.mark.skipif(_v1_reason() is not None, reason=_v1_reason() or "")

VISIBLE = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
           "ZE_AFFINITY_MASK", "ONEAPI_DEVICE_SELECTOR")


def _job(tmp_path: Path, job_id: str, body: str, *, gpus: int = 0, memory_mib: int = 0, args: tuple[str, ...] = ()
         ) -> Job:
    path = tmp_path / f"{job_id}.py"
    path.write_text("import errno, json, os, signal, stat, sys, time\n" + body)
    job = make_job(job_id, gpus=gpus, command=(sys.executable, str(path), *args), working_dir=str(tmp_path))
    return replace(job, spec=replace(job.spec, resources=ResourceRequest(gpus=gpus, memory_mib=memory_mib)))


def _last_json(ex: LocalExecutor, job: Job) -> dict[str, object]:
    result: dict[str, object] = json.loads(ex.logs(job.id)[0].strip().splitlines()[-1])
    return result


# ---- R1: env ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", VISIBLE)
def test_red15_r1_every_visible_devices_variable_is_refused_by_the_one_device_rule(key: str) -> None:
    """R1: ``CUDA_VISIBLE_DEVICES=0,1,2,3`` on a 0-GPU job was 201 and silently replaced, the ROCm ones
    passed untouched. They are refused by the rule that refuses ``NVIDIA_VISIBLE_DEVICES`` (one list),
    whatever the case, with the same words and fix."""
    for name in (key, key.lower()):
        said = refused_variable(name)
        assert said is not None, name
        message, hint = said
        assert message.startswith(f"env {name} is read by the GPU runtime") and "GPUs of its allocation" in message
        assert "--gpus N" in hint, hint
    assert refused_variable("NVIDIA_VISIBLE_DEVICES") is not None and refused_variable("CUDA_DEVICE_ORDER") is None


def test_red15_r1_the_scheduler_sets_the_visible_devices_variables_and_passes_no_other_device_variable(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """R1: a 0-GPU job gets every visible-devices variable empty, a GPU job its allocation's UUIDs,
    whatever the service's own environment holds; a stored job whose env predates the refusal has it
    dropped (said in the log), not passed on."""
    base = {**os.environ, "CUDA_VISIBLE_DEVICES": "0,1", "ROCR_VISIBLE_DEVICES": "0", "GPU_DEVICE_ORDINAL": "0",
            "ZE_AFFINITY_MASK": "0"}
    ex = LocalExecutor(tmp_path / "jobs", base_env=base)
    dump = f"print(json.dumps({{k: os.environ.get(k) for k in {VISIBLE!r}}}), flush=True)\n"
    none = _job(tmp_path, "j-zero", dump)
    ex.start(none, Allocation("n1", ()))
    assert isinstance(ended := wait_event(ex, Exited), Exited) and ended.exit_code == 0, ended
    assert _last_json(ex, none) == {"CUDA_VISIBLE_DEVICES": "", "ROCR_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "",
                                    "GPU_DEVICE_ORDINAL": None, "ZE_AFFINITY_MASK": None, "ONEAPI_DEVICE_SELECTOR": None}
    two = _job(tmp_path, "j-two", dump, gpus=2)
    ex.start(two, Allocation("n1", ("GPU-a", "GPU-b")))
    assert isinstance(ended := wait_event(ex, Exited), Exited) and ended.exit_code == 0, ended
    seen = _last_json(ex, two)
    assert [seen[k] for k in VISIBLE[:3]] == ["GPU-a,GPU-b"] * 3 and seen["GPU_DEVICE_ORDINAL"] is None, seen
    stored = make_job("j-old", env={"CUDA_VISIBLE_DEVICES": "0,1,2,3", "HIP_VISIBLE_DEVICES": "0", "MY_VAR": "kept"})
    env = job_environment(stored, Allocation("n1", ("GPU-a",), gpu_milli=500), {"PATH": "/bin"})
    assert [env[k] for k in VISIBLE[:3]] == ["GPU-a"] * 3 and env["MY_VAR"] == "kept", env
    assert env["JUPYTER_SCHED_GPU_MILLI"] == "500"
    assert any("CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES not passed" in r.getMessage() for r in caplog.records)


# ---- R1: devices cgroup ------------------------------------------------------------------------------------

OPENER = """
out = {}
for path in sys.argv[1:]:
    try:
        os.close(os.open(path, os.O_RDWR))
        out[os.path.basename(path)] = "opened"
    except OSError as exc:
        out[os.path.basename(path)] = errno.errorcode[exc.errno]
os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"  # what a hostile job does first: it changes nothing below
try:
    os.mknod(os.path.join(os.path.dirname(sys.argv[1]), "made"), 0o666 | stat.S_IFCHR, os.makedev(195, 3))
    out["mknod 195:3"] = "made"
except OSError as exc:
    out["mknod 195:3"] = errno.errorcode[exc.errno]
print(json.dumps(out), flush=True)
"""
PAST_THE_CGROUP = {"opened", "ENXIO", "ENODEV"}
"""An open the devices cgroup let through: with no NVIDIA driver here the device itself then answers."""


def _gpu_nodes(folder: Path) -> list[str]:
    """/dev/nvidia0..3 and /dev/nvidiactl as real character devices in ``folder`` (major 195)."""
    folder.mkdir()
    nodes = [(f"nvidia{i}", i) for i in range(4)] + [("nvidiactl", 255)]
    for name, minor in nodes:
        os.mknod(folder / name, 0o666 | stat.S_IFCHR, os.makedev(NVIDIA_MAJOR, minor))
    return [str(folder / name) for name, _ in nodes] + ["/dev/null"]


@needs_v1
def test_red15_r1_a_job_opens_only_its_own_gpu_device_and_a_0_gpu_job_none(tmp_path: Path) -> None:
    """R1 (Slurm's ConstrainDevices): nothing stopped B's 0-GPU job from opening A's /dev/nvidiaN.
    In its devices cgroup a job opening another GPU's device gets EPERM, even as root and after
    setting CUDA_VISIBLE_DEVICES itself, and cannot mknod one; its own GPU, nvidiactl and every
    non-GPU device stay allowed. The GPU's minor comes from the inventory (index, simulated GPUs)."""
    paths = _gpu_nodes(tmp_path / "dev")
    snapshot = SimulatedInventory(4, node="n1").current()
    uuids = [g.uuid for g in snapshot.gpus()]
    ex = LocalExecutor(tmp_path / "jobs", limits=LocalLimits(), gpu_minor=minor_resolver(lambda: snapshot))
    one = _job(tmp_path, "j-gpu1", OPENER, gpus=1, args=tuple(paths))
    ex.start(one, Allocation("n1", (uuids[1],)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended
    seen = _last_json(ex, one)
    assert {k: seen[k] for k in ("nvidia0", "nvidia2", "nvidia3", "mknod 195:3")} == dict.fromkeys(
        ("nvidia0", "nvidia2", "nvidia3", "mknod 195:3"), "EPERM"), seen
    assert seen["nvidia1"] in PAST_THE_CGROUP and seen["nvidiactl"] in PAST_THE_CGROUP, seen
    assert seen["null"] == "opened", seen
    zero = _job(tmp_path, "j-zero", OPENER, args=tuple(paths))
    handle = ex.start(zero, Allocation("n1", ()))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended
    seen = _last_json(ex, zero)
    assert [seen[f"nvidia{i}"] for i in range(4)] == ["EPERM"] * 4, seen
    assert seen["nvidiactl"] in PAST_THE_CGROUP and seen["null"] == "opened", seen
    groups = LimitGroups.from_dict(handle.data["limits"])
    assert groups is not None and groups.fenced and len(groups.paths) == 3, handle.data["limits"]
    assert not any(Path(p).exists() for p in groups.paths), "the job's groups are removed once it ended"


STEPPER = """
folder = sys.argv[1]
for step in ("before", "granted", "released"):
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(folder, step)) and time.monotonic() < deadline:
        time.sleep(0.02)
    with open(os.path.join(folder, step)) as fh:
        want = int(fh.read() or 0)  # GPUs the fence should let through: retried until then (30 s)
    deadline = time.monotonic() + 30
    while True:
        out = {"step": step}
        for i in range(4):
            try:
                os.close(os.open(os.path.join(folder, f"nvidia{i}"), os.O_RDWR))
                out[f"nvidia{i}"] = "opened"
            except OSError as exc:
                out[f"nvidia{i}"] = errno.errorcode[exc.errno]
        if sum(v != "EPERM" for k, v in out.items() if k != "step") == want or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    print(json.dumps(out), flush=True)
    open(os.path.join(folder, step + ".done"), "w").close()
"""


@needs_v1
def test_red16_r2_a_gpu_leased_for_a_running_job_is_opened_by_it_until_released(tmp_path: Path) -> None:
    """R2: a lease granted for a running job (``parent_job_id``) was charged but its GPU stayed
    EPERM in the job's devices cgroup (written once at start). ``lend_gpus`` (what each engine pass
    calls with the running leases per parent job) allows the leased GPU's minor, and denies it again
    once the lease is gone; other GPUs stay denied throughout."""
    _gpu_nodes(tmp_path / "dev")
    snapshot = SimulatedInventory(4, node="n1").current()
    uuids = [g.uuid for g in snapshot.gpus()]
    ex = LocalExecutor(tmp_path / "jobs", limits=LocalLimits(), gpu_minor=minor_resolver(lambda: snapshot))
    job = _job(tmp_path, "j-parent", STEPPER, gpus=1, args=(str(tmp_path / "dev"),))
    ex.start(job, Allocation("n1", (uuids[0],)))
    seen: dict[str, dict[str, str]] = {}

    def step(name: str, want: int) -> dict[str, str]:
        (tmp_path / "dev" / name).write_text(str(want))
        deadline = time.monotonic() + 60
        while not (tmp_path / "dev" / f"{name}.done").exists():
            assert time.monotonic() < deadline, ex.logs(job.id)[0]
            time.sleep(0.02)
        for line in ex.logs(job.id)[0].splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                seen[entry["step"]] = entry
        return seen[name]

    before = step("before", 1)
    assert before["nvidia0"] in PAST_THE_CGROUP and before["nvidia1"] == "EPERM", before
    ex.lend_gpus({job.id: [uuids[1]], "j-other": [uuids[2]]})
    granted = step("granted", 2)
    assert granted["nvidia0"] in PAST_THE_CGROUP and granted["nvidia1"] in PAST_THE_CGROUP, granted
    assert granted["nvidia2"] == "EPERM" and granted["nvidia3"] == "EPERM", granted
    ex.lend_gpus({})
    released = step("released", 1)
    assert released["nvidia0"] in PAST_THE_CGROUP and released["nvidia1"] == "EPERM", released
    assert isinstance(ended := wait_event(ex, Exited), Exited) and ended.exit_code == 0, ended


@needs_v1
def test_red15_r1_an_unknown_gpu_minor_leaves_the_job_running_fenced_by_environment(tmp_path: Path,
                                                                                     caplog: pytest.LogCaptureFixture
                                                                                     ) -> None:
    """A GPU the resolver cannot map (not in the inventory) must not cost the job its own GPU: no
    devices fence for that job, a warning saying so, and the job runs."""
    paths = _gpu_nodes(tmp_path / "dev")
    ex = LocalExecutor(tmp_path / "jobs", limits=LocalLimits(), gpu_minor=lambda uuid: None)
    job = _job(tmp_path, "j-unknown", OPENER, gpus=1, args=tuple(paths))
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.executors.limits"):
        handle = ex.start(job, Allocation("n1", ("GPU-not-in-inventory",)))
        ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended
    assert _last_json(ex, job)["nvidia2"] in PAST_THE_CGROUP
    assert handle.data["limits"]["fenced"] is False
    assert any("fenced by environment only" in r.getMessage() for r in caplog.records)


def test_red15_r1_without_a_devices_controller_jobs_run_and_the_summary_says_environment_only(tmp_path: Path) -> None:
    """On a host whose cgroups the service cannot use (here: a folder with none), nothing fails: the
    job runs, and the line the start-up log and ``jupyter-sched doctor`` print says GPUs are fenced
    by environment only; on cgroup v2 it names the missing BPF device program."""
    bare = LocalLimits(root=tmp_path / "no-cgroups")
    assert not bare.fences_gpus
    assert bare.summary().startswith("local jobs: GPUs fenced by environment only (CUDA_VISIBLE_DEVICES…): no "
                                     "writable cgroup v1 devices controller"), bare.summary()
    assert "no process limit" in bare.summary() and "no memory limit" in bare.summary()
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "cgroup.controllers").write_text("cpu memory pids\n")
    assert "cgroup v2 would need a BPF device program" in LocalLimits(root=tmp_path / "v2", make=False).summary()
    ex = LocalExecutor(tmp_path / "jobs", limits=bare)
    job = _job(tmp_path, "j-plain", "print('ran', flush=True)\n")
    handle = ex.start(job, Allocation("n1", ()))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0 and "ran" in ex.logs(job.id)[0], ended
    assert handle.data["limits"] == {"paths": [], "memory": None, "memory_limit_mib": 0, "fenced": False}


def test_red15_r1_the_service_says_at_start_how_jobs_are_isolated(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """The start-up log names the fence (``GPUs fenced by a devices cgroup`` or ``by environment only``)."""
    from jupyter_sched.services.config import build_services

    settings = {"db_url": f"sqlite:///{tmp_path / 's.sqlite'}", "log_dir": str(tmp_path / "jobs"),
                "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off", "job_pids_max": 512}
    with caplog.at_level(logging.INFO, logger="jupyter_sched"):
        services = build_services(settings)
    try:
        said = [r.getMessage() for r in caplog.records if "local jobs: GPUs fenced by" in r.getMessage()]
        assert len(said) == 1, [r.getMessage() for r in caplog.records]
        assert ("devices cgroup" in said[0]) is (_v1_reason() is None), said
        assert ("pids.max 512" in said[0]) is (_v1_reason() is None), said
        assert services.executor.gpu_minor is not None  # type: ignore[attr-defined]
        assert services.executor.gpu_minor("GPU-not-here") is None  # type: ignore[attr-defined]
    finally:
        services.store.close()


# ---- R9: pids and memory -----------------------------------------------------------------------------------

FORK_BOMB = """
kids, error = [], None
for _ in range(200):  # bounded: without the cap this makes 200 sleeping processes, then kills them
    try:
        pid = os.fork()
    except OSError as exc:
        error = errno.errorcode[exc.errno]
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print(json.dumps({"forked": len(kids), "error": error}), flush=True)
"""


@needs_v1
def test_red15_r9_a_fork_bomb_stops_at_the_jobs_pids_max(tmp_path: Path) -> None:
    """R9: a job's fork bomb would take every user's servers and the service down with the host. With
    ``pids.max`` 32 its forks fail with EAGAIN before 32 processes (the wrapper counts too), the job
    itself goes on (it handles the error and exits 0)."""
    ex = LocalExecutor(tmp_path / "jobs", limits=LocalLimits(pids_max=32))
    job = _job(tmp_path, "j-bomb", FORK_BOMB)
    handle = ex.start(job, Allocation("n1", ()))
    pids_group = next(p for p in handle.data["limits"]["paths"] if "/pids/" in p)
    assert (Path(pids_group) / "pids.max").read_text().strip() == "32"
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ended
    seen = _last_json(ex, job)
    assert seen["error"] == "EAGAIN" and 0 < int(str(seen["forked"])) < 32, seen


@needs_v1
def test_red15_r9_and_r15_a_job_past_its_memory_is_killed_and_said_to_be_out_of_memory(tmp_path: Path) -> None:
    """R9: no job had a memory limit (one balloon takes the host). A job asking ``memory_mib`` 64 that
    fills 256 MiB is killed by the kernel in its own memory cgroup; R15: its reason says out of memory
    because that group's OOM counter counted the kill, with the limit."""
    ex = LocalExecutor(tmp_path / "jobs", limits=LocalLimits(memory_mib=0))
    job = _job(tmp_path, "j-balloon", "ballast = b'x' * (256 << 20)\nprint('survived', flush=True)\n", memory_mib=64)
    handle = ex.start(job, Allocation("n1", ()))
    memory_group = Path(handle.data["limits"]["memory"])
    assert (memory_group / "memory.limit_in_bytes").read_text().strip() == str(64 << 20)
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == -9, ended
    assert ended.message.startswith("killed by SIGKILL (out of memory: its memory cgroup counted 1 "  # newuser37 n4
                                    "out-of-memory kill; memory limit 64 MiB) — ask for more memory than its 64 MiB, "
                                    "e.g. --memory 128MiB"), ended.message
    assert "survived" not in ex.logs(job.id)[0]


# ---- R15: SIGKILL is not "out of memory" unless the counter says so ----------------------------------------

@pytest.mark.parametrize("limits", [pytest.param(True, id="with a memory cgroup whose counter says 0"),
                                    pytest.param(False, id="without a memory cgroup: nothing says out of memory")])
def test_red15_r15_a_job_that_kills_its_own_wrapper_is_killed_by_sigkill_not_out_of_memory(
        tmp_path: Path, limits: bool) -> None:
    """R15: a job that killed its own wrapper (``kill -9 $PPID``) failed "killed by SIGKILL (likely
    out of memory)" — nothing ran out of memory. Said now: ``killed by SIGKILL``, no memory claim."""
    if limits and _v1_reason() is not None:
        pytest.skip(_v1_reason() or "")
    ex = LocalExecutor(tmp_path / "jobs", limits=LocalLimits() if limits else None)
    job = _job(tmp_path, "j-killwrap", "os.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(30)\n")
    ex.start(job, Allocation("n1", ()))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == -9, ended
    assert ended.message.startswith("killed by SIGKILL") and "memory" not in ended.message, ended.message


# ---- R1: the REST refusal, for jobs, definitions and leases, audited ---------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("r1"), users={"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"},
                               admin_users=["boss"], simulated_gpus=2)
    try:
        yield srv
    finally:
        clear(srv)
        srv.kill()


def test_red15_r1_a_visible_devices_variable_in_env_is_a_400_naming_it_and_audited(server: EmbeddedServer,
                                                                                     tmp_path: Path) -> None:
    """R1: ``{"gpus": 0, "env": {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}}`` was 201 (silently replaced) and
    ``ROCR_VISIBLE_DEVICES`` reached the job. Now a 400 naming ``env.<KEY>`` as NVIDIA_VISIBLE_DEVICES
    is, for a job, a dry run and a job definition (a lease takes no env at all), each audited."""
    ann, boss = api(server, "tok-ann"), api(server, "tok-boss")
    script = tmp_path / "t.py"
    script.write_text("print(1)\n")
    bodies = {
        "jobs": {"gpus": 0, "command": ["true"], "env": {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}},
        "dryrun": {"gpus": 0, "command": ["true"], "env": {"ROCR_VISIBLE_DEVICES": "0"}},
        "definitions": {"name": "d1", "script": str(script), "schedule": "0 7 * * *", "timezone": "UTC", "gpus": 0,
                        "env": {"HIP_VISIBLE_DEVICES": "0"}},
    }
    for route, body in bodies.items():
        answer = ann.post(route, json=body)
        assert answer.status_code == 400, (route, answer.text)
        error = answer.json()["error"]
        key = next(iter(body["env"]))  # type: ignore[call-overload]
        assert error["field"] == f"env.{key}" and error["message"].startswith(f"env {key} is read by the GPU "
                                                                              "runtime"), error
        assert "--gpus N" in error["hint"], error
    lease = ann.post("leases", json={"gpus": 1, "env": {"CUDA_VISIBLE_DEVICES": "0"}})
    assert lease.status_code == 400 and lease.json()["error"]["field"] == "env", lease.text
    deadline = time.monotonic() + 15  # the refusals' audit records may land just after the answers
    want = {"env.CUDA_VISIBLE_DEVICES", "env.ROCR_VISIBLE_DEVICES", "env.HIP_VISIBLE_DEVICES"}
    while True:
        audited = boss.get("audit", params={"user": "ann", "limit": 1000}).json()
        fields = {(r.get("details") or {}).get("field") for r in audited}
        if want <= fields:
            break
        assert time.monotonic() < deadline, audited
        time.sleep(0.2)


@needs_v1
def test_red16_r2_through_the_service_a_lease_for_a_running_job_joins_its_fence(server: EmbeddedServer,
                                                                                  tmp_path: Path) -> None:
    """R2 end to end: ``POST leases {"parent_job_id": <my running job>}`` → once the lease runs, the
    job opens the leased GPU's device; after ``cancel`` of the lease it is denied again."""
    ann = api(server, "tok-ann")
    dev = tmp_path / "dev"
    _gpu_nodes(dev)
    os.chmod(tmp_path, 0o755)
    code = tmp_path / "stepper.py"
    code.write_text("import errno, json, os, sys, time\n" + STEPPER)
    made = ann.post("jobs", json={"gpus": 1, "command": [sys.executable, str(code), str(dev)], "name": "parent"})
    assert made.status_code == 201, made.text
    job_id = made.json()["id"]

    def wait_for(what: str, check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 60
        while not check():
            assert time.monotonic() < deadline, what
            time.sleep(0.1)

    wait_for("job running", lambda: ann.get(f"jobs/{job_id}").json()["state"] == "running")

    def step(name: str, want: int) -> dict[str, str]:
        (dev / name).write_text(str(want))  # the stepper retries until the engine's next pass widened the fence
        wait_for(f"{name} done", lambda: (dev / f"{name}.done").exists())
        text = ann.get(f"jobs/{job_id}/logs").json()["text"]
        lines = [json.loads(x) for x in text.splitlines() if x.startswith('{"step"')]
        found = [x for x in lines if x["step"] == name]
        assert found, text
        return found[-1]

    before = step("before", 1)  # 2 simulated GPUs (minors 0, 1): one is the job's own, the other denied
    assert sorted(before[f"nvidia{i}"] == "EPERM" for i in range(2)) == [False, True], before
    lease = ann.post("leases", json={"gpus": 1, "parent_job_id": job_id})
    assert lease.status_code == 201, lease.text
    lease_id = lease.json()["id"]
    wait_for("lease running", lambda: ann.get(f"jobs/{lease_id}").json()["state"] == "running")
    granted = step("granted", 2)
    assert granted["nvidia0"] in PAST_THE_CGROUP and granted["nvidia1"] in PAST_THE_CGROUP, granted
    assert ann.delete(f"leases/{lease_id}").status_code == 200
    wait_for("lease released", lambda: ann.get(f"jobs/{lease_id}").json()["state"] != "running")
    released = step("released", 1)
    assert sorted(released[f"nvidia{i}"] == "EPERM" for i in range(2)) == [False, True], released


def test_red16_r3_memory_above_the_host_is_a_422_naming_memory_mib(server: EmbeddedServer) -> None:
    """R3: ``memory_mib: 100000000`` was 201 with a note and became a 95 TiB memory limit (none).
    Above this host's physical memory it is refused at submit and in the dry run, naming the field
    and the most it may ask; a value within it is accepted."""
    ann, boss = api(server, "tok-ann"), api(server, "tok-boss")
    host = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    said = ann.post("jobs", json={"gpus": 0, "memory_mib": 100_000_000, "command": ["sleep", "1"]})
    assert said.status_code == 422, said.text  # newuser39 n1: unschedulable, as more GPUs than any node has
    error = said.json()["error"]
    assert error["code"] == "unschedulable", error
    assert error["field"] == "memory_mib" and f"more than this host's {host} MiB" in error["message"], error
    assert f"at most {host} MiB" in error["hint"], error
    dry = ann.post("dryrun", json={"gpus": 0, "memory_mib": 100_000_000, "command": ["sleep", "1"]})
    assert dry.status_code == 200 and dry.json()["never"] is True, dry.text  # "never", as of 99 GPUs
    reason = dry.json()["reason"]
    assert reason["details"]["field"] == "memory_mib" and f"more than this host's {host} MiB" in reason["message"]
    assert f"at most {host} MiB" in reason["unblock"], reason
    fits = ann.post("dryrun", json={"gpus": 0, "memory_mib": 64, "command": ["true"]})
    assert fits.status_code == 200, fits.text
    deadline = time.monotonic() + 15  # the refusal's audit record may land just after the answer
    while "memory_mib" not in {(r.get("details") or {}).get("field")
                               for r in boss.get("audit", params={"user": "ann", "limit": 1000}).json()}:
        assert time.monotonic() < deadline
        time.sleep(0.2)


@needs_v1
def test_red16_r3_all_jobs_of_one_account_share_one_pids_bound(tmp_path: Path) -> None:
    """R3: pids.max was per job only (4096), so 8 jobs of one user held 32,768 tasks = the host's
    pid_max. Each job's pids group now sits in the account's group ``u<uid>`` whose ``pids.max`` is
    ``job_user_pids_max``: a job holding 20 sleeping processes leaves the account's next job fewer
    than 40 - 20 forks, though that job's own bound is 4096."""
    limits = LocalLimits(pids_max=4096, user_pids_max=40)
    # the account group of a uid no other test process uses: the jobs run as this process's account (root), and
    # every root job another process starts meanwhile (pytest-xdist) writes its own bound into the host-wide
    # `u0/pids.max` — seen twice (8192 between the holder's start and the bomb's forks)
    real_apply, own_uid = limits.apply, 3_000_000 + os.getpid() % 1_000_000
    limits.apply = lambda group, pid, **kw: real_apply(replace(group, uid=own_uid), pid, **kw)  # type: ignore[method-assign]
    ex = LocalExecutor(tmp_path / "jobs", limits=limits)
    holder = _job(tmp_path, "j-holder", "import subprocess\nps = [subprocess.Popen(['sleep', '60']) for _ in range(20)]\n"
                  "print('held', flush=True)\ntime.sleep(60)\n")
    first = ex.start(holder, Allocation("n1", ()))
    pids_group = Path(next(p for p in first.data["limits"]["paths"] if "/pids/" in p))
    assert pids_group.parent.name.startswith("u") and (pids_group.parent / "pids.max").read_text().strip() == "40"
    assert (pids_group / "pids.max").read_text().strip() == "4096"
    deadline = time.monotonic() + 30
    while "held" not in ex.logs(holder.id)[0]:
        assert time.monotonic() < deadline, ex.logs(holder.id)[0]
        time.sleep(0.05)
    bomb = _job(tmp_path, "j-bomb2", FORK_BOMB)
    ex.start(bomb, Allocation("n1", ()))
    deadline = time.monotonic() + 60
    while '"forked"' not in ex.logs(bomb.id)[0]:
        assert time.monotonic() < deadline, ex.logs(bomb.id)[0]
        time.sleep(0.05)
    seen = _last_json(ex, bomb)
    ex.stop(holder.id, grace_s=1)
    deadline = time.monotonic() + 30
    while ex.tracked():  # the holder's sleepers are ended with it
        assert time.monotonic() < deadline, ex.tracked()
        ex.poll()
        time.sleep(0.05)
    assert seen["error"] == "EAGAIN" and 0 < int(str(seen["forked"])) < 20, seen
