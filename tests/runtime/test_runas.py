"""Run-as with real OS accounts: each job runs as its owner, in a clean environment, in a private
directory, and a cancel leaves nothing of it behind (DESIGN, *Who runs it*).

Real parts: accounts made with ``useradd`` (tests/accounts.py) and removed after, real
subprocesses switched with ``Popen(user=, group=)``, the machine's cgroups (v1 here; v2 where the
machine has it) and the marker fallback, Debian's ``/usr/bin/python3`` as the interpreter the
accounts run (the session's own is under /root, mode 0700). "GPUs" are simulated UUIDs in
``CUDA_VISIBLE_DEVICES``: a process holding that variable stands for a process holding the GPU.
Waits only bound how long a broken test hangs; nothing asserts durations.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import psutil
import pytest

from jupyter_sched.errors import ExecutorError, NotFoundError
from jupyter_sched.executors.base import ExecutorEvent, ExecutorHandle, Exited, Lost
from jupyter_sched.executors.local import LocalExecutor, read_log
from jupyter_sched.executors.runas import ENV_ALLOWLIST, AccountMapping, RunAs, embedded_run_as
from jupyter_sched.executors.tracking import MARKER_ENV, CgroupTracker, JobGroup, MarkerTracker, detect_tracker
from jupyter_sched.model import Allocation
from tests.accounts import Account, account_python, os_accounts, shared_dir, skip_reason
from tests.runtime.builders import make_job

WAIT_S = 60.0
GPU = Allocation("n1", ("GPU-sim-0",))

needs_accounts = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


def wait_until(predicate: Callable[[], object], what: str) -> object:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def wait_exit(ex: LocalExecutor) -> Exited:
    seen: list[ExecutorEvent] = []

    def hit() -> Exited | None:
        seen.extend(ex.poll())
        return next((e for e in seen if isinstance(e, Exited)), None)

    ended: Exited = wait_until(hit, "the job to end")  # type: ignore[assignment]
    assert ex.settle(60), "the ended job's folder was not sealed in 60 s"  # beside the engine (red35 R1)
    return ended


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def with_marker(marker: str) -> list[int]:
    """Pids (any user) whose environment carries this job-group marker."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(MARKER_ENV) == marker and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except psutil.Error:
            continue
    return found


@pytest.fixture(scope="module")
def accounts() -> Iterator[list[Account]]:
    if skip_reason():
        pytest.skip(skip_reason() or "")
    with os_accounts(2) as made:
        yield made


@pytest.fixture
def root() -> Iterator[Path]:
    with shared_dir() as path:
        yield path


def hub_executor(root: Path, **kwargs: object) -> LocalExecutor:
    """The executor as hub mode builds it: clean environment, never the service's own account."""
    service_env = {**os.environ, "JUPYTERHUB_API_TOKEN": "hub-secret", "JUPYTER_SCHED_DB_URL":
                   "postgresql+psycopg://sched:pw@db/sched", "AWS_SECRET_ACCESS_KEY": "cloud", "LANG": "C.UTF-8"}
    return LocalExecutor(root / "jobs", job_python=account_python() or "", base_env=service_env, clean_env=True,
                         require_run_as=True, **kwargs)  # type: ignore[arg-type]


def run_as(account: Account) -> RunAs:
    return AccountMapping().resolve(account.name)


def py_job(job_id: str, body: str, *, user: str, **spec: object) -> object:
    """A job whose script travels as carried content (as %%schedule through a hub sends it)."""
    prelude = "import os, sys, time, json, signal, subprocess\n"
    return make_job(job_id, user=user, command=(), script=f"{job_id}.py", source=prelude + body, **spec)


WHO_AM_I = """
print(json.dumps({"uid": os.getuid(), "gid": os.getgid(), "euid": os.geteuid(), "cwd": os.getcwd(),
                  "env": dict(os.environ)}), flush=True)
"""


@needs_accounts
def test_a_hub_job_runs_as_its_owner_with_a_clean_environment_in_a_private_directory(
        accounts: list[Account], root: Path) -> None:
    alice = accounts[0]
    ex = hub_executor(root)
    job = py_job("j-who", WHO_AM_I, user=alice.name, env={"MY_SETTING": "kept"})
    handle = ex.start(job, GPU, run_as(alice))  # type: ignore[arg-type]
    ended = wait_exit(ex)
    text = ex.logs("j-who")[0]
    assert ended.exit_code == 0, text
    seen = json.loads(text.strip().splitlines()[-1])
    assert (seen["uid"], seen["euid"], seen["gid"]) == (alice.uid, alice.uid, alice.gid)
    env = seen["env"]
    # nothing of the service: no hub token, no database URL, no cloud credentials, no service variable
    assert not {"JUPYTERHUB_API_TOKEN", "JUPYTER_SCHED_DB_URL", "AWS_SECRET_ACCESS_KEY"} & set(env)
    allowed = set(ENV_ALLOWLIST) | {"HOME", "USER", "LOGNAME", "SHELL", "PATH", "MY_SETTING", "CUDA_VISIBLE_DEVICES",
                                    "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "JUPYTER_SCHED_JOB_ID", "JUPYTER_SCHED_GPU_MILLI", MARKER_ENV,
                                    "PWD", "LC_CTYPE", "_"}
    assert set(env) <= allowed, sorted(set(env) - allowed)
    assert env["HOME"] == alice.home and env["USER"] == alice.name and env["MY_SETTING"] == "kept"
    assert env["LANG"] == "C.UTF-8" and env["CUDA_VISIBLE_DEVICES"] == "GPU-sim-0"
    assert env["ROCR_VISIBLE_DEVICES"] == env["HIP_VISIBLE_DEVICES"] == "GPU-sim-0"  # red team 15, R1
    assert seen["cwd"] == alice.home  # no working_dir: the owner's home
    # the per-user directory is the service's, mode 0711 (nothing can be planted beside the job
    # directories: red team 25, R3); the job's directory is the owner's, 0700, while the job runs and the
    # service's once it ended (red31 R1 variant: sealed); the log is theirs, 0600
    job_dir = Path(str(handle.data["job_dir"]))
    parent = job_dir.parent.stat()
    assert (parent.st_uid, stat.S_IMODE(parent.st_mode)) == (os.geteuid(), 0o711)
    info = job_dir.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (os.geteuid(), 0o700)
    log_info = (job_dir / "output.log").stat()
    assert (log_info.st_uid, stat.S_IMODE(log_info.st_mode)) == (alice.uid, 0o600)


@needs_accounts
def test_newuser_f8_ps_shows_a_short_readable_command_not_the_wrappers_source(
        accounts: list[Account], root: Path) -> None:
    """Issue 20, F8: the wrapper of a job run as its owner went as ``python -I -c <its source>``,
    so ``ps`` showed 15 KB of Python for every job. It now runs from a sealed in-memory file
    passed to it (``python3 -I /dev/fd/N --job-dir … -- ARGV``): the wrapper's and the job's
    command lines read as what runs, and the job cannot change the wrapper's source."""
    alice = accounts[0]
    ex = hub_executor(root)
    gate = root / "f8-may-end"
    body = (f"print('started', flush=True)\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.05)\n"
            "print('done', flush=True)\n")
    handle = ex.start(py_job("j-f8", body, user=alice.name), GPU, run_as(alice))  # type: ignore[arg-type]
    wait_until(lambda: "started" in ex.logs("j-f8")[0], "the job to start")
    wrapper_pid = int(handle.data["pid"])  # type: ignore[arg-type]
    argv = Path(f"/proc/{wrapper_pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
    shown = b" ".join(argv).decode()
    assert len(shown) < 600, shown[:300]
    assert argv[1:3] == [b"-I", argv[2]] and argv[2].startswith(b"/dev/fd/"), shown
    assert b"--job-dir" in argv and b"--" in argv and argv[-1].endswith(b"j-f8.py"), shown
    wrapper = b" ".join(argv[:argv.index(b"--")]).decode()  # the job's argv after it is the job's to read
    assert "def main" not in wrapper and "import" not in wrapper, shown
    job_pids = [p for p in psutil.Process(wrapper_pid).children() if p.username() == alice.name]
    # the job's own command line: its Python, the one-line runner (~220 characters since newuser27 N3: runpy and a
    # traceback from the file's frame) and its file — not 15 KB of source
    assert job_pids and all(len(" ".join(p.cmdline())) < 400 for p in job_pids), [p.cmdline() for p in job_pids]
    # the job cannot rewrite the wrapper a later start of this executor reads
    probe = f"""
out = {{}}
try:
    with open("/proc/{wrapper_pid}/fd/{argv[2].decode().rsplit('/', 1)[1]}", "r+b") as fh:
        fh.write(b"raise SystemExit(9)"); out["write"] = "allowed"
except OSError as exc:
    out["write"] = exc.__class__.__name__
print(json.dumps(out), flush=True)
"""
    ex.start(py_job("j-f8-probe", probe, user=alice.name), GPU, run_as(alice))  # type: ignore[arg-type]
    ended = wait_exit(ex)
    assert ended.job_id == "j-f8-probe" and ended.exit_code == 0, ex.logs("j-f8-probe")[0]
    assert json.loads(ex.logs("j-f8-probe")[0].strip().splitlines()[-1])["write"] != "allowed"
    # F15: a stop's words reach the wrapper (its stdin, kept open) and end the log
    ex.stop("j-f8", grace_s=30, reason="cancelled by alice")
    done = wait_exit(ex)
    assert done.job_id == "j-f8" and done.exit_code == -signal.SIGTERM
    text = ex.logs("j-f8")[0]
    assert text.endswith("\n[jupyter_sched] cancelled by alice\n"), text[-300:]
    assert "started\n[jupyter_sched] the scheduler sent SIGTERM to the job's 1 process to stop it:\n" in text, text[-300:]
    assert not gate.exists()


@needs_accounts
def test_one_users_job_cannot_read_or_signal_anothers(accounts: list[Account], root: Path) -> None:
    alice, bob = accounts
    ex = hub_executor(root)
    gate = root / "bob-may-end"
    bob_job = py_job("j-bob", f"print('bob secret', flush=True)\nwhile not os.path.exists({str(gate)!r}): "
                              "time.sleep(0.05)\n", user=bob.name)
    bob_handle = ex.start(bob_job, GPU, run_as(bob))  # type: ignore[arg-type]
    wait_until(lambda: "bob secret" in ex.logs("j-bob")[0], "bob's job to log")
    bob_log = Path(str(bob_handle.data["log"]))
    probe = f"""
out = {{}}
try:
    open({str(bob_log)!r}).read(); out["read"] = "allowed"
except OSError as exc:
    out["read"] = exc.__class__.__name__ + ":" + str(exc.errno)
try:
    os.kill({int(bob_handle.data["pid"])}, signal.SIGTERM); out["kill"] = "allowed"
except OSError as exc:
    out["kill"] = exc.__class__.__name__ + ":" + str(exc.errno)
print(json.dumps(out), flush=True)
"""
    ex.start(py_job("j-alice", probe, user=alice.name), GPU, run_as(alice))  # type: ignore[arg-type]
    ended = wait_exit(ex)
    assert ended.job_id == "j-alice" and ended.exit_code == 0
    out = json.loads(ex.logs("j-alice")[0].strip().splitlines()[-1])
    assert out == {"read": "PermissionError:13", "kill": "PermissionError:1"}  # EACCES, EPERM
    assert alive(int(bob_handle.data["pid"]))
    gate.touch()
    assert wait_exit(ex).job_id == "j-bob"


SETSID_HOLDER = """
# a child in its own session that ignores SIGTERM and keeps the "GPU", and a double-forked daemon
holder = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                           "time.sleep(600)"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
print(json.dumps({"holder": holder.pid, "gpu": os.environ["CUDA_VISIBLE_DEVICES"]}), flush=True)
time.sleep(600)
"""


def _setsid_scenario(ex: LocalExecutor, job_id: str, who: RunAs | None, user: str) -> None:
    job = py_job(job_id, SETSID_HOLDER, user=user)
    handle = ex.start(job, GPU, who)  # type: ignore[arg-type]
    marker = str(handle.data["group"]["name"])  # type: ignore[index]
    assert handle.data["group"]["kind"] == ex.tracker.kind  # type: ignore[index]
    wait_until(lambda: '"holder"' in ex.logs(job_id)[0], "the job to start its setsid children")
    wait_until(lambda: len(with_marker(marker)) >= 4, "wrapper, job, holder and daemon")
    holder = json.loads(ex.logs(job_id)[0].strip().splitlines()[-1])["holder"]
    assert psutil.Process(holder).environ()["CUDA_VISIBLE_DEVICES"] == "GPU-sim-0"
    assert os.getsid(holder) != os.getsid(int(handle.data["pid"]))  # it left the job's session
    assert set(with_marker(marker)) <= ex.pids()  # all of them count as ours for the GPU inventory
    ex.stop(job_id, grace_s=0)
    ended = wait_exit(ex)
    # reported only once every process is gone: the GPU can be handed out at this moment
    assert ended.job_id == job_id and ended.exit_code in (-signal.SIGTERM, -signal.SIGKILL)
    assert with_marker(marker) == [] and not alive(holder)


@pytest.mark.parametrize("tracking", ["auto", "marker"])
def test_cancel_leaves_no_setsid_child_holding_the_gpu_embedded(tmp_path: Path, tracking: str) -> None:
    ex = LocalExecutor(tmp_path / "jobs", tracking=tracking)
    if tracking == "auto" and isinstance(ex.tracker, MarkerTracker):
        pytest.skip("no writable cgroup hierarchy on this machine (the marker case covers the fallback)")
    _setsid_scenario(ex, "j-setsid", None, "ana")


@needs_accounts
@pytest.mark.parametrize("tracking", ["auto", "marker"])
def test_cancel_leaves_no_setsid_child_holding_the_gpu_as_the_owner(accounts: list[Account], root: Path,
                                                                    tracking: str) -> None:
    ex = hub_executor(root, tracking=tracking)
    _setsid_scenario(ex, f"j-setsid-{tracking}", run_as(accounts[0]), accounts[0].name)


LEAVES_DAEMON = """
daemon = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                           "print('ready', flush=True); time.sleep(600)"], start_new_session=True, stdout=subprocess.PIPE)
daemon.stdout.readline()  # it ignores SIGTERM from now on: a SIGTERM before its handler was set ended it (a race)
print(json.dumps({"daemon": daemon.pid}), flush=True)
"""


def test_a_job_that_ends_by_itself_is_reported_only_after_its_leftovers_are_gone(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs", leftover_grace_s=0.2)
    handle = ex.start(py_job("j-daemon", LEAVES_DAEMON, user="ana"), GPU)  # type: ignore[arg-type]
    ended = wait_exit(ex)
    lines = ex.logs("j-daemon")[0].strip().splitlines()
    daemon = json.loads(lines[0])["daemon"]
    assert ended.exit_code == 0 and not alive(daemon)
    # a setsid child too is named where its end is said (newuser30 n16)
    assert f"[jupyter_sched]   pid {daemon}: " in "\n".join(lines[1:]) and lines[-1].endswith("(sent SIGKILL)"), lines
    assert with_marker(str(handle.data["group"]["name"])) == []  # type: ignore[index]


@needs_accounts
def test_the_service_never_shows_a_file_the_owner_swapped_in(accounts: list[Account], root: Path) -> None:
    alice = accounts[0]
    secret = root / "root-only"
    secret.write_text("root secret\n")
    secret.chmod(0o600)
    ex = hub_executor(root)
    job_dir = root / "jobs" / "users" / alice.name / "j-swap"
    swap = f"os.remove({str(job_dir / 'output.log')!r}); os.symlink({str(secret)!r}, {str(job_dir / 'output.log')!r})\n"
    handle = ex.start(py_job("j-swap", swap, user=alice.name), GPU, run_as(alice))  # type: ignore[arg-type]
    assert wait_exit(ex).exit_code == 0
    assert os.path.islink(job_dir / "output.log")
    with pytest.raises(NotFoundError):
        ex.logs("j-swap")
    with pytest.raises(NotFoundError):  # the services' direct path (the handle's log) refuses it too
        read_log(Path(str(handle.data["log"])), 0, 1000)


@needs_accounts
def test_run_as_refusals_name_the_user_and_the_fix(accounts: list[Account], root: Path) -> None:
    ex = hub_executor(root)
    job = make_job("j-x", user="ana")
    with pytest.raises(ExecutorError) as own:
        ex.start(job, GPU, embedded_run_as(job))
    assert own.value.field == "user" and "own account" in own.value.message
    with pytest.raises(ExecutorError) as missing:
        AccountMapping().resolve("no-such-account-here")
    assert missing.value.field == "user" and "run_as_accounts" in (missing.value.hint or "")
    with pytest.raises(ExecutorError) as privileged:
        AccountMapping(accounts={"mallory": "root"}).resolve("mallory")
    assert "uid 0" in privileged.value.message
    mapped = AccountMapping(accounts={"alice@example.org": accounts[0].name}).resolve("alice@example.org")
    assert (mapped.account, mapped.uid, mapped.user) == (accounts[0].name, accounts[0].uid, "alice@example.org")


@needs_accounts
def test_a_restarted_service_readopts_an_owners_job_and_stops_all_of_it(accounts: list[Account], root: Path) -> None:
    alice = accounts[0]
    first = hub_executor(root)
    job = py_job("j-adopt", SETSID_HOLDER, user=alice.name)
    handle = first.start(job, GPU, run_as(alice))  # type: ignore[arg-type]
    wait_until(lambda: '"holder"' in first.logs("j-adopt")[0], "the job to start")
    first.detach()  # kill -9 of the service: the job keeps running
    second = hub_executor(root)
    assert second.adopt(job, None) is None  # found through its record and wrapper file (stdlib create time)
    assert second.adopt(job, ExecutorHandle.from_dict(json.loads(json.dumps(handle.to_dict())))) is None
    second.stop("j-adopt", grace_s=0)
    seen: list[ExecutorEvent] = []
    wait_until(lambda: seen.extend(second.poll()) or seen, "the adopted job to end")
    assert isinstance(seen[0], (Exited, Lost))  # SIGKILL at once may hit the wrapper before it records
    assert with_marker(str(handle.data["group"]["name"])) == []  # type: ignore[index]


@needs_accounts
@pytest.mark.parametrize("forged", ["NaN", "Infinity", '"yesterday"'], ids=["NaN", "infinity", "text"])
def test_a_forged_wrapper_json_create_time_is_not_adopted(accounts: list[Account], root: Path, forged: str) -> None:
    """Red team 6: the owner rewrites ``wrapper.json`` (their own file) with ``create_time`` NaN; a
    restarted service that adopts from the files compared NaN (always false: the pid-reuse check passed)
    and kept NaN in the handle, which PostgreSQL's JSON refuses. Such a file is not a handle."""
    alice = accounts[0]
    first = hub_executor(root)
    rewrite = ("d = os.path.dirname(os.path.abspath(sys.argv[0]))\n"
               "with open(os.path.join(d, '.w'), 'w') as f:\n"
               f"    f.write('{{\"pid\": ' + str(os.getppid()) + ', \"create_time\": {forged}}}')\n"
               "os.rename(os.path.join(d, '.w'), os.path.join(d, 'wrapper.json'))\n"
               "print('rewritten', flush=True)\n"
               "time.sleep(120)\n")
    job = py_job("j-nan", rewrite, user=alice.name)
    first.start(job, GPU, run_as(alice))  # type: ignore[arg-type]
    wait_until(lambda: "rewritten" in first.logs("j-nan")[0], "the rewrite")
    first.detach()  # kill -9 of the service between starting the job and keeping its handle
    second = hub_executor(root)
    try:
        adopted = second.adopt(job, None)
        assert isinstance(adopted, Lost) and not adopted.started, adopted  # was None: adopted with a NaN handle
    finally:
        for proc in psutil.process_iter(["uids", "cmdline"]):
            if proc.info["uids"] and proc.info["uids"].real == alice.uid and "j-nan" in " ".join(proc.info["cmdline"] or ()):
                proc.kill()


def test_the_tracker_is_a_cgroup_where_the_machine_offers_one() -> None:
    offered = os.geteuid() == 0 and (Path("/sys/fs/cgroup/cgroup.controllers").exists()
                                     or Path("/sys/fs/cgroup/freezer/cgroup.procs").exists())
    if not offered:
        pytest.skip("no cgroup hierarchy this process may write")
    assert detect_tracker().kind.startswith("cgroup-v")


def test_empty_groups_left_by_a_killed_service_are_pruned_and_live_ones_kept(tmp_path: Path) -> None:
    tracker = detect_tracker()
    if not isinstance(tracker, CgroupTracker):
        pytest.skip("no writable cgroup hierarchy (the marker leaves nothing behind)")
    stale = tracker.create("j-stale", uid=None)
    ex = LocalExecutor(tmp_path / "jobs", tracking=tracker)
    live = ex.start(py_job("j-live", "time.sleep(60)\n", user="ana"), GPU)  # type: ignore[arg-type]
    live_path = str(live.data["group"]["path"])  # type: ignore[index]
    wait_until(lambda: tracker.members(JobGroup.from_dict(live.data["group"]) or stale), "the job to enter its group")
    for path in (stale.path, live_path):
        os.utime(str(path), (time.time() - 3600, time.time() - 3600))
    assert tracker.prune() >= 1
    assert not os.path.exists(str(stale.path)) and os.path.exists(live_path)
    ex.stop("j-live", grace_s=0)
    wait_until(lambda: ex.poll() or None, "the job to end")
    assert not os.path.exists(live_path)  # its executor removes it once empty


def _cgroup2_tracker() -> CgroupTracker:
    """A cgroup v2 job-group tracker: the unified hierarchy at /sys/fs/cgroup (pure v2) or the hybrid
    layout's /sys/fs/cgroup/unified (this machine: v1 controllers, a cgroup2 mount beside them)."""
    for root in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        if (root / "cgroup.controllers").exists():
            base = root / "jupyter_sched"
            try:
                base.mkdir(exist_ok=True)
            except OSError:
                continue
            return CgroupTracker(base, 2)
    pytest.skip("no writable cgroup v2 hierarchy here")


@pytest.mark.parametrize("owner", [False, True], ids=["embedded", "as the owner"])
def test_cgroup_v2_groups_stop_setsid_children_too(tmp_path: Path, owner: bool) -> None:
    tracker = _cgroup2_tracker()
    if not owner:
        _setsid_scenario(LocalExecutor(tmp_path / "jobs", tracking=tracker), "j-v2", None, "ana")
        return
    if skip_reason():
        pytest.skip(skip_reason() or "")
    with os_accounts(1) as (someone,), shared_dir() as root:
        _setsid_scenario(hub_executor(root, tracking=tracker), "j-v2-owner", run_as(someone), someone.name)


@needs_accounts
def test_the_engine_decides_who_each_job_runs_as_at_its_start(accounts: list[Account], root: Path) -> None:
    from datetime import datetime, timezone

    from jupyter_sched.engine import ManualClock, SchedulerService
    from jupyter_sched.inventory.simulated import SimulatedInventory
    from jupyter_sched.store import Store, sqlite_url

    alice = accounts[0]
    executor = hub_executor(root)
    svc = SchedulerService(store=Store(sqlite_url(root / "s.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                           executor=executor, clock=ManualClock(datetime.now(timezone.utc)), cycle_interval_s=0.0)
    mapping = AccountMapping(accounts={"alice@hub": alice.name})
    svc.engine.run_as = lambda job: mapping.resolve(job.spec.user)
    try:
        mapped = svc.submit({"gpus": 0, "script": "who.py", "source": "import os\nprint('uid', os.getuid())\n"},
                            user="alice@hub")["id"]
        unmapped = svc.submit({"gpus": 0, "command": ["true"]}, user="nobody-has-this-account")["id"]
        deadline = time.monotonic() + WAIT_S
        while {svc.get_job(i, user="x", is_admin=True)["state"] for i in (mapped, unmapped)} - {"succeeded", "failed"}:
            assert time.monotonic() < deadline, "the jobs did not end"
            svc.tick()
            time.sleep(0.02)
        done, refused = (svc.get_job(i, user="x", is_admin=True) for i in (mapped, unmapped))
        assert done["state"] == "succeeded" and f"uid {alice.uid}" in executor.logs(mapped)[0]
        assert f"uid {alice.uid}" in svc.logs(mapped, user="alice@hub")["text"]  # through the jobs service
        assert refused["state"] == "failed"
        assert "could not start" in refused["message"] and "no OS account" in refused["message"]

        # a job that swaps its log for a link to a root-only file: the jobs service shows nothing of it
        secret = root / "root-only"
        secret.write_text("root secret\n")
        secret.chmod(0o600)
        swap = ("import os\nprint('before the swap', flush=True)\nlog = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'output.log')\n"
                f"os.remove(log)\nos.symlink({str(secret)!r}, log)\n")
        swapped = svc.submit({"gpus": 0, "script": "swap.py", "source": swap}, user="alice@hub")["id"]
        while svc.get_job(swapped, user="alice@hub")["state"] not in ("succeeded", "failed"):
            assert time.monotonic() < deadline + WAIT_S, "the job did not end"
            svc.tick()
            time.sleep(0.02)
        shown = svc.logs(swapped, user="alice@hub")
        assert svc.get_job(swapped, user="alice@hub")["state"] == "succeeded"
        assert "root secret" not in shown["text"] and shown["text"] == ""  # not even its own first line
    finally:
        svc.store.close()


@needs_accounts
def test_an_owner_who_forges_exit_json_cannot_end_their_job_before_the_service_saw_it_run(
        accounts: list[Account], root: Path) -> None:
    """Red-team 5 finding 3: eve's job wrote ``exit.json`` with ``finished_at`` 2000-01-01 in her own
    job directory and SIGKILLed its wrapper (her own process), so the true one was never written;
    the service took the forged end, and a 20 s run on 2 GPUs was charged 0.3 s of usage. The end
    it reports is never before the service last saw the job running."""
    eve = accounts[0]
    go = root / "go"
    ex = hub_executor(root)
    forge = (f"while not os.path.exists({str(go)!r}): time.sleep(0.05)\n"
             "d = os.path.dirname(os.path.abspath(sys.argv[0]))\n"
             "with open(os.path.join(d, '.x'), 'w') as f:\n"
             "    json.dump({'exit_code': 0, 'signal': None, 'finished_at': '2000-01-01T00:00:00+00:00'}, f)\n"
             "os.rename(os.path.join(d, '.x'), os.path.join(d, 'exit.json'))\n"
             "os.kill(os.getppid(), signal.SIGKILL)\n")
    ex.start(py_job("j-forge", forge, user=eve.name), GPU, run_as(eve))  # type: ignore[arg-type]
    wait_until(lambda: os.path.exists(root / "jobs" / "users" / eve.name / "j-forge" / "wrapper.json"), "the start")
    assert ex.poll() == []  # the service sees it running (waiting for `go`)
    running = datetime.now(timezone.utc)
    assert ex.poll() == []
    go.write_text("")
    ended = wait_exit(ex)
    assert ended.exit_code == 0  # the owner's own claim about their own exit code stands
    assert ended.finished_at >= running, ended.finished_at  # was 2000-01-01


@needs_accounts
@pytest.mark.parametrize("forged", ["10**30", "-10**30", "2**31"], ids=["huge", "hugely negative", "just past int32"])
def test_an_exit_code_no_process_can_have_is_not_taken_from_a_forged_exit_json(
        accounts: list[Account], root: Path, forged: str) -> None:
    """Red team 6: eve's job wrote ``{"exit_code": 10**30}`` to its ``exit.json`` and SIGKILLed its
    wrapper. The service took the number, every write of the job's end failed (PostgreSQL: integer out
    of range) and the engine retried the store for everyone without end — alice's job stayed
    ``admitted``. A code outside -255..255 is no exit code: the wrapper's own end (SIGKILL) is reported."""
    eve = accounts[0]
    ex = hub_executor(root)
    forge = ("d = os.path.dirname(os.path.abspath(sys.argv[0]))\n"
             "with open(os.path.join(d, '.x'), 'w') as f:\n"
             f"    f.write('{{\"exit_code\": ' + str({forged}) + ', \"finished_at\": \"2026-12-02T00:00:00+00:00\"}}')\n"
             "os.rename(os.path.join(d, '.x'), os.path.join(d, 'exit.json'))\n"
             "os.kill(os.getppid(), signal.SIGKILL)\n")
    ex.start(py_job("j-huge", forge, user=eve.name), GPU, run_as(eve))  # type: ignore[arg-type]
    ended = wait_exit(ex)
    assert -255 <= ended.exit_code <= 255, ended.exit_code  # was the forged number
    assert ended.exit_code == -signal.SIGKILL  # the wrapper's end, as the service saw it


GPU_OPENER = """
import errno
out = {}
for name in ("nvidia0", "nvidia1", "nvidia2", "nvidiactl"):
    try:
        os.close(os.open(os.path.join(DEV, name), os.O_RDWR))
        out[name] = "opened"
    except OSError as exc:
        out[name] = errno.errorcode[exc.errno]
print(json.dumps(out), flush=True)
"""


@needs_accounts
@pytest.mark.skipif(not (Path("/sys/fs/cgroup/devices/cgroup.procs").exists() and os.geteuid() == 0),
                    reason="needs root and a cgroup v1 devices controller")
def test_red15_r1_a_hub_job_as_its_owner_opens_only_its_own_gpu_device(accounts: list[Account], root: Path) -> None:
    """Red team 15, R1, hub mode: B's job (an ordinary account) could open A's /dev/nvidiaN, 0666 on a stock
    driver. In its devices cgroup it opens its own GPU (ENXIO here: no driver, past the cgroup) and
    nvidiactl, and gets EPERM for the others — the device files themselves are 0666."""
    from jupyter_sched.executors.limits import LocalLimits

    dev = root / "dev"
    dev.mkdir(mode=0o755)
    for name, minor in (("nvidia0", 0), ("nvidia1", 1), ("nvidia2", 2), ("nvidiactl", 255)):
        os.mknod(dev / name, 0o666 | stat.S_IFCHR, os.makedev(195, minor))
        (dev / name).chmod(0o666)
    ex = hub_executor(root, limits=LocalLimits(), gpu_minor={"GPU-sim-0": 0, "GPU-sim-1": 1}.get)
    job = py_job("j-gpus", f"DEV = {str(dev)!r}\n" + GPU_OPENER, user=accounts[1].name)
    ex.start(job, Allocation("n1", ("GPU-sim-1",)), run_as(accounts[1]))  # type: ignore[arg-type]
    ended = wait_exit(ex)
    text = ex.logs("j-gpus")[0]
    assert ended.exit_code == 0, text
    seen = json.loads(text.strip().splitlines()[-1])
    assert seen["nvidia0"] == seen["nvidia2"] == "EPERM", seen
    assert seen["nvidia1"] in ("opened", "ENXIO", "ENODEV") and seen["nvidiactl"] in ("opened", "ENXIO", "ENODEV"), seen


@needs_accounts
def test_red25_r3_an_account_cannot_plant_folders_beside_its_job_directories(accounts: list[Account],
                                                                            root: Path) -> None:
    """Failed before the fix: ``users/<account>`` was the account's own (0700): a job or a terminal
    could fill it with folders the service's retention sweep walks (red team 25: 100,000 of them).
    A folder an older version made (the account's) is taken back at the account's next job."""
    alice = accounts[0]
    ex = hub_executor(root)
    older = root / "jobs" / "users" / alice.name
    older.mkdir(parents=True)
    os.chown(older, alice.uid, alice.gid)
    older.chmod(0o700)
    plant = f"os.mkdir({str(older / 'j-planted')!r})\n"
    ex.start(py_job("j-plant", plant, user=alice.name), GPU, run_as(alice))  # type: ignore[arg-type]
    ended = wait_exit(ex)
    text = ex.logs("j-plant")[0]
    assert ended.exit_code != 0 and "PermissionError" in text, text
    assert sorted(os.listdir(older)) == ["j-plant"]
    info = older.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (os.geteuid(), 0o711)
    mine = (older / "j-plant").stat()
    assert (mine.st_uid, stat.S_IMODE(mine.st_mode)) == (os.geteuid(), 0o700)  # sealed at its end (red31 R1 variant)
