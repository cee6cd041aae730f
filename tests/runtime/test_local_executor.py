"""The local executor with real subprocesses: GPU pinning (case 016), logs, exit codes, stop plans
over the whole process group, re-adoption after a restart, notebooks and inference services.

Timing: nothing here asserts durations. Jobs wait on gate files the test creates; stop plans run
on an injected monotonic clock the test advances; waits only bound how long a broken test hangs.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from jupyter_sched.executors.base import ExecutorEvent, ExecutorHandle, Exited, Lost, NotReady, Ready, Started
from jupyter_sched.executors.local import LocalExecutor, job_environment, read_log
from jupyter_sched.model import Allocation, Job, JobKind
from tests.runtime.builders import make_job

WAIT_S = 60.0


class FakeMonotonic:
    """A monotonic clock the test advances (drives stop plans and restart backoff)."""

    def __init__(self) -> None:
        self.value = 1000.0

    def __call__(self) -> float:
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += seconds


def wait_until(predicate: Callable[[], object], what: str) -> object:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def wait_event(ex: LocalExecutor, kind: type, seen: list[ExecutorEvent] | None = None) -> ExecutorEvent:
    """The first event of ``kind`` the executor's polls report; an end's folder is sealed and counted beside the
    engine (red35 R1): waited for too, as the tests after an end look at both."""
    seen = [] if seen is None else seen

    def hit() -> ExecutorEvent | None:
        seen.extend(ex.poll())
        return next((e for e in seen if isinstance(e, kind)), None)

    found: ExecutorEvent = wait_until(hit, kind.__name__)  # type: ignore[assignment]
    assert ex.settle(60), "the ended jobs' folders were not cleaned in 60 s"
    return found


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("import os, sys, time, json, signal, subprocess\n"
                    "def wait_gate(name):\n"
                    "    while not os.path.exists(name):\n"
                    "        time.sleep(0.02)\n" + body)
    return str(path)


def job_for(tmp_path: Path, body: str, *, job_id: str = "j-1", **spec: object) -> Job:
    path = script(tmp_path, f"{job_id}.py", body)
    return make_job(job_id, command=(), script=path, working_dir=str(tmp_path), **spec)


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


ENV_DUMP = ("print(json.dumps({k: os.environ.get(k) for k in "
            "('CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER', 'JUPYTER_SCHED_JOB_ID')}), flush=True)\n")


@pytest.mark.parametrize(
    "allocation, user_env, want_visible, want_warning",
    [
        pytest.param(Allocation("ws-7", ("GPU-3090-b",)), {"CUDA_DEVICE_ORDER": "FASTEST_FIRST"}, "GPU-3090-b", True,
                     id="a user's FASTEST_FIRST is overwritten by PCI_BUS_ID and the GPU is pinned by UUID"),
        pytest.param(Allocation("ws-7", ("GPU-3090-a", "GPU-titan-a")), {}, "GPU-3090-a,GPU-titan-a", False,
                     id="several GPUs are passed as comma-joined UUIDs, never indices"),
        pytest.param(Allocation("ws-7", ("MIG-4f6c0c2a-8f0e-5b3c-9e51-0a5f6b7c8d9e",)), {},
                     "MIG-4f6c0c2a-8f0e-5b3c-9e51-0a5f6b7c8d9e", False, id="MIG devices are passed as MIG UUIDs"),
    ],
)
def test_case_016_job_pins_gpus_by_uuid_and_pci_bus_order(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, allocation: Allocation, user_env: dict[str, str],
    want_visible: str, want_warning: bool,
) -> None:
    ex = LocalExecutor(tmp_path / "jobs", base_env={**os.environ, "CUDA_VISIBLE_DEVICES": "1"})
    job = job_for(tmp_path, ENV_DUMP, env=user_env)
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.executors.local"):
        ex.start(job, allocation)
        ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0
    seen = json.loads(ex.logs(job.id)[0].strip().splitlines()[-1])
    assert seen == {"CUDA_VISIBLE_DEVICES": want_visible, "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
                    "JUPYTER_SCHED_JOB_ID": job.id}
    assert not any(part.isdigit() for part in seen["CUDA_VISIBLE_DEVICES"].split(","))
    warned = [r.getMessage() for r in caplog.records if "CUDA_DEVICE_ORDER=FASTEST_FIRST" in r.getMessage()]
    assert bool(warned) is want_warning


def test_job_environment_replaces_a_user_cuda_visible_devices(caplog: pytest.LogCaptureFixture) -> None:
    """A stored job's CUDA_VISIBLE_DEVICES (refused at submit since red team 15, R1) is never passed on."""
    job = make_job(env={"CUDA_VISIBLE_DEVICES": "0", "MY_VAR": "kept"})
    env = job_environment(job, Allocation("n1", ("GPU-a",), gpu_milli=500), {"PATH": "/bin"})
    assert env["CUDA_VISIBLE_DEVICES"] == "GPU-a"
    assert env["MY_VAR"] == "kept" and env["PATH"] == "/bin"
    assert env["JUPYTER_SCHED_GPU_MILLI"] == "500"
    assert any("env CUDA_VISIBLE_DEVICES not passed" in r.getMessage() for r in caplog.records)


def test_log_is_readable_while_running_and_after(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    gate = tmp_path / "gate"
    job = job_for(tmp_path, f"print('first', flush=True)\nwait_gate({str(gate)!r})\nprint('second é', flush=True)\n")
    ex.start(job, Allocation("n1", ("GPU-0",)))
    text, offset = wait_until(lambda: (lambda t: t if t[0] else None)(ex.logs(job.id)), "first log line")  # type: ignore[misc]
    assert text == "first\n"
    assert ex.poll() == [] and job.id in ex.tracked()  # still running
    gate.touch()
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0
    assert ex.logs(job.id, offset) == ("second é\n", offset + len("second é\n".encode()))


def test_newuser4_finding_9_a_requeued_jobs_log_marks_where_its_next_run_starts(tmp_path: Path) -> None:
    """New user 4, finding 9: a preempted, restarted job's log showed both runs glued together."""
    from dataclasses import replace

    ex = LocalExecutor(tmp_path / "jobs")
    first = job_for(tmp_path, "print('run', flush=True)\n")
    ex.start(first, Allocation("n1", ("GPU-0",)))
    wait_event(ex, Exited)
    again = replace(first, attempts=2, preempted_by="j-hi")
    ex.start(again, Allocation("n1", ("GPU-0",)))
    wait_event(ex, Exited)
    text, _ = ex.logs(first.id)
    assert text.splitlines()[-2:] == [
        "[jupyter_sched] started again (start 2) after preemption by j-hi; the earlier run's output is above", "run"]
    assert text.count("started again") == 1  # the first start has no marker


def test_red15_r12_a_log_past_its_cap_keeps_its_head_and_one_line_naming_the_setting_and_the_job_runs_on(
        tmp_path: Path) -> None:
    """Red-team 15, R12: one job printing in a loop grew its log at 321 MiB/s toward a full disk."""
    cap = 1 << 20
    ex = LocalExecutor(tmp_path / "jobs", max_log_bytes=cap)
    gate, after = tmp_path / "gate", tmp_path / "after"
    chunk = "y" * 1023 + "\n"
    job = job_for(tmp_path, f"print('HEAD', flush=True)\n"
                            f"for _ in range(3 * 1024): sys.stdout.write({chunk!r})\n"
                            f"sys.stdout.flush()\nwait_gate({str(gate)!r})\n"  # still writing after the cut:
                            f"for _ in range(3 * 1024): sys.stdout.write({chunk!r})\n"
                            f"sys.stdout.flush()\nopen({str(after)!r}, 'w').write('ran')\n")
    ex.start(job, Allocation("n1", ("GPU-0",)))
    log = wait_until(lambda: next((tmp_path / "jobs").rglob("output.log"), None), "the job's log")
    assert isinstance(log, Path)
    wait_until(lambda: b"log truncated" in log.read_bytes()[cap - 10:], "the log cut at its cap")
    gate.touch()
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0  # the job was not stopped
    assert after.read_text() == "ran"  # and ran to its end after the cut
    data = log.read_bytes()
    last = data[cap:]
    assert last == (b"\n[jupyter_sched] log truncated at 1 MiB (c.SchedApp.max_log_mib); the job keeps running, "
                    b"its further output is not kept\n")
    assert len(data) == cap + len(last)  # the head up to the cap plus that one line, nothing the job wrote later
    assert data.startswith(b"HEAD\n") and data[5:cap] == chunk.encode() * ((cap - 5) // len(chunk)) + b"y" * 1019


@pytest.mark.parametrize("code", [0, 3], ids=["exit 0 is success", "exit 3 is reported as 3"])
def test_exit_code_is_reported(tmp_path: Path, code: int) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(job_for(tmp_path, f"sys.exit({code})\n"), Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == code


def test_a_command_that_cannot_start_fails_with_127(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(make_job(command=("/nonexistent/binary",)), Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 127
    assert "cannot start" in ex.logs("j-1")[0]


GRANDCHILD = """
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
json.dump({"child": os.getpid(), "grandchild": child.pid}, open("pids.json", "w"))
time.sleep(120)
"""


def test_cancel_kills_the_whole_process_group(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    job = job_for(tmp_path, GRANDCHILD)
    ex.start(job, Allocation("n1", ("GPU-0",)))
    pids_file = tmp_path / "pids.json"
    wait_until(lambda: pids_file.exists() and pids_file.read_text(), "the job to spawn its grandchild")
    pids = json.loads(pids_file.read_text())
    assert not gone(pids["grandchild"])
    assert {pids["child"], pids["grandchild"]} <= ex.pids()  # ours, not foreign GPU users (case 014)
    ex.stop(job.id, grace_s=30)
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == -signal.SIGTERM
    wait_until(lambda: gone(pids["child"]) and gone(pids["grandchild"]), "child and grandchild to die")


def test_a_stop_right_after_start_still_ends_the_job(tmp_path: Path) -> None:
    """A signal that reaches the wrapper before its child exists is forwarded to the child."""
    ex = LocalExecutor(tmp_path / "jobs", monotonic=FakeMonotonic())  # SIGKILL never comes by itself
    for n in range(3):
        job = job_for(tmp_path, "time.sleep(120)\n", job_id=f"j-{n}")
        ex.start(job, Allocation("n1", ("GPU-0",)))
        ex.stop(job.id, grace_s=60)
        ended = wait_event(ex, Exited)
        assert isinstance(ended, Exited) and ended.exit_code == -signal.SIGTERM


CHECKPOINTING = """
def on_usr1(*_):
    print("checkpoint", flush=True)
def on_term(*_):
    print("term", flush=True)
    sys.exit(0)
signal.signal(signal.SIGUSR1, on_usr1)
signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
while True:
    time.sleep(0.02)
"""


def test_preemption_plan_sends_checkpoint_then_term(tmp_path: Path) -> None:
    clock = FakeMonotonic()
    ex = LocalExecutor(tmp_path / "jobs", monotonic=clock)
    job = job_for(tmp_path, CHECKPOINTING)
    ex.start(job, Allocation("n1", ("GPU-0",)))
    wait_until(lambda: "ready" in ex.logs(job.id)[0], "the job to install its handlers")
    ex.stop(job.id, grace_s=60, checkpoint_signal=True)
    wait_until(lambda: "checkpoint" in ex.logs(job.id)[0], "SIGUSR1")
    assert ex.poll() == [] and "term" not in ex.logs(job.id)[0]  # SIGTERM waits for its time
    clock.advance(30)  # half the grace (capped at 30 s) later
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0
    said = [line for line in ex.logs(job.id)[0].splitlines() if not line.startswith("[jupyter_sched]")]
    assert said == ["ready", "checkpoint", "term"]  # and the scheduler's lines: which processes got which signal


IGNORES_TERM = """
signal.signal(signal.SIGTERM, lambda *_: print("ignored TERM", flush=True))
print("ready", flush=True)
while True:
    time.sleep(0.02)
"""


def test_sigkill_follows_after_the_grace_period(tmp_path: Path) -> None:
    clock = FakeMonotonic()
    ex = LocalExecutor(tmp_path / "jobs", monotonic=clock)
    job = job_for(tmp_path, IGNORES_TERM)
    ex.start(job, Allocation("n1", ("GPU-0",)))
    wait_until(lambda: "ready" in ex.logs(job.id)[0], "the job to install its handler")
    ex.stop(job.id, grace_s=10)
    wait_until(lambda: "ignored TERM" in ex.logs(job.id)[0], "SIGTERM to be ignored")
    assert ex.poll() == []
    clock.advance(10)
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == -signal.SIGKILL


def test_a_running_job_is_readopted_by_a_new_executor_and_ends_with_its_real_exit_code(tmp_path: Path) -> None:
    first = LocalExecutor(tmp_path / "jobs")
    gate = tmp_path / "gate"
    job = job_for(tmp_path, f"wait_gate({str(gate)!r})\nsys.exit(7)\n")
    handle = first.start(job, Allocation("n1", ("GPU-0",)))
    first.detach()  # the server goes away; the job keeps running
    second = LocalExecutor(tmp_path / "jobs")
    restored = ExecutorHandle.from_dict(json.loads(json.dumps(handle.to_dict())))  # as persisted in the store
    assert second.adopt(job, restored) is None
    assert second.tracked() == {job.id}
    gate.touch()
    ended = wait_event(second, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 7


def test_a_job_whose_handle_was_not_persisted_is_found_through_its_wrapper_file(tmp_path: Path) -> None:
    first = LocalExecutor(tmp_path / "jobs")
    gate = tmp_path / "gate"
    job = job_for(tmp_path, f"wait_gate({str(gate)!r})\n")
    first.start(job, Allocation("n1", ("GPU-0",)))
    wait_until(lambda: (tmp_path / "jobs" / job.id / "wrapper.json").exists(), "wrapper.json")
    first.detach()
    second = LocalExecutor(tmp_path / "jobs")
    assert second.adopt(job, None) is None
    gate.touch()
    assert isinstance(wait_event(second, Exited), Exited)


def test_a_job_that_ended_while_nobody_watched_settles_from_its_exit_file(tmp_path: Path) -> None:
    first = LocalExecutor(tmp_path / "jobs")
    job = job_for(tmp_path, "sys.exit(4)\n")
    handle = first.start(job, Allocation("n1", ("GPU-0",)))
    wait_until(lambda: (tmp_path / "jobs" / job.id / "exit.json").exists(), "exit.json")
    first.detach()
    wait_until(lambda: gone(int(handle.data["pid"])), "the wrapper to exit")
    event = LocalExecutor(tmp_path / "jobs").adopt(job, handle)
    assert isinstance(event, Exited) and event.exit_code == 4 and "server was down" in event.message


def test_a_job_killed_with_its_wrapper_is_lost_with_a_reason(tmp_path: Path) -> None:
    first = LocalExecutor(tmp_path / "jobs")
    job = job_for(tmp_path, "time.sleep(120)\n")
    handle = first.start(job, Allocation("n1", ("GPU-0",)))
    wait_until(lambda: (tmp_path / "jobs" / job.id / "wrapper.json").exists(), "wrapper.json")
    first.detach()
    os.killpg(int(handle.data["pgid"]), signal.SIGKILL)
    wait_until(lambda: gone(int(handle.data["pid"])), "the group to die")
    event = LocalExecutor(tmp_path / "jobs").adopt(job, handle)
    assert isinstance(event, Lost) and "left no exit code" in event.reason


@pytest.mark.parametrize(
    "handle, want_started",
    [
        pytest.param(lambda: ExecutorHandle("local", {"pid": os.getpid(), "create_time": 1.0, "pgid": os.getpid()}),
                     True, id="a reused pid (other create time) is not adopted"),
        pytest.param(lambda: None, False, id="an admitted job with no handle and no wrapper file never started"),
        pytest.param(lambda: ExecutorHandle("local", {"host": "elsewhere", "pid": os.getpid(), "create_time": None}),
                     True, id="a job of another host is not adopted"),
    ],
)
def test_adoption_refuses_what_is_not_the_job(tmp_path: Path, handle: Callable[[], ExecutorHandle | None],
                                              want_started: bool) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    event = ex.adopt(make_job(), handle())
    assert isinstance(event, Lost) and event.started is want_started
    assert ex.tracked() == frozenset()


@pytest.mark.slow
def test_a_notebook_runs_through_nbclient_and_the_executed_copy_is_kept(tmp_path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os\nprint('visible', os.environ['CUDA_VISIBLE_DEVICES'])")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "in.ipynb"
    nbformat.write(nb, str(path))
    ex = LocalExecutor(tmp_path / "jobs")
    job = make_job(command=(), notebook=str(path), working_dir=str(tmp_path))
    ex.start(job, Allocation("n1", ("GPU-n1-2",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0, ex.logs(job.id)[0]
    assert "visible GPU-n1-2" in ex.logs(job.id)[0]
    executed = nbformat.read(str(tmp_path / "jobs" / job.id / "executed.ipynb"), as_version=4)
    assert "visible GPU-n1-2" in executed.cells[0].outputs[0]["text"]


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


SERVICE = """
port = int(sys.argv[1])
marker = "attempt-1"
if not os.path.exists(marker):
    open(marker, "w").close()
    print("failing first", flush=True)
    sys.exit(1)
server = __import__("socket").create_server(("127.0.0.1", port))
print("serving", flush=True)
while True:
    conn, _ = server.accept()
    conn.close()
"""


def test_an_inference_service_restarts_after_failure_and_reports_ready(tmp_path: Path) -> None:
    clock = FakeMonotonic()
    ex = LocalExecutor(tmp_path / "jobs", monotonic=clock)
    port = _free_port()
    job = job_for(tmp_path, SERVICE, kind=JobKind.INFERENCE, port=port)
    job = replace(job, spec=replace(job.spec, command=(str(port),)))
    ex.start(job, Allocation("n1", ("GPU-0",)))
    wait_until(lambda: "failing first" in ex.logs(job.id)[0] and not ex.poll() and ex._jobs[job.id].restart_at,
               "the first run to fail")
    clock.advance(1)  # the first backoff step
    seen: list[ExecutorEvent] = []
    restarted = wait_event(ex, Started, seen)
    assert isinstance(restarted, Started) and restarted.restarts == 1
    ready = wait_event(ex, Ready, seen)
    assert isinstance(ready, Ready) and ready.port == port
    ex.stop(job.id, grace_s=5)
    ended = wait_event(ex, Exited, seen)
    assert isinstance(ended, Exited) and ended.exit_code == -signal.SIGTERM


@pytest.mark.parametrize(
    "content, offset, limit, want_text, want_next",
    [
        pytest.param("aé".encode(), 0, 2, "a", 1, id="a chunk never ends inside a UTF-8 character"),
        pytest.param("aé".encode(), 1, 10, "é", 3, id="reading on from next_offset gets the character"),
        pytest.param(b"abc", 5, 10, "", 3, id="reading past the end gives nothing, read on from the end"),
    ],
)
def test_read_log_respects_utf8_boundaries(tmp_path: Path, content: bytes, offset: int, limit: int,
                                           want_text: str, want_next: int) -> None:
    path = tmp_path / "log"
    path.write_bytes(content)
    assert read_log(path, offset, limit) == (want_text, want_next)


PLANT_FIFO = """
job_dir = os.path.dirname(os.readlink("/proc/self/fd/1"))  # stdout is DIR/output.log
for name in ("exit.json.tmp", "wrapper.json.tmp", ".exit.json.tmp"):
    os.mkfifo(os.path.join(job_dir, name))
"""


def test_a_job_cannot_hang_its_wrapper_with_a_fifo_where_the_exit_record_goes(tmp_path: Path) -> None:
    """Red-team finding 13: a FIFO planted at the exit record's temporary name used to block the
    wrapper's open for ever (the job stayed running, holding its GPUs, after its command ended)."""
    ex = LocalExecutor(tmp_path / "jobs")
    job = job_for(tmp_path, PLANT_FIFO + "sys.exit(4)\n")
    ex.start(job, Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 4



def test_newuser6_finding_20_a_program_that_cannot_be_run_fails_with_126_and_says_why(tmp_path: Path) -> None:
    """New user 6, F20: EACCES read "it is not executable (chmod +x …)" with exit 127 ("command not
    found"), also when the file was executable and a folder on its path (/root, 0700) was closed to
    the job's account. Now 126 (found, cannot be run) and the reason as that account sees it."""
    program = tmp_path / "tool"
    program.write_text("#!/bin/sh\necho hi\n")
    program.chmod(0o644)  # not executable, even for root
    ex = LocalExecutor(tmp_path / "jobs")
    ex.start(make_job(command=(str(program),)), Allocation("n1", ("GPU-0",)))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 126
    log = ex.logs("j-1")[0]
    assert f"cannot start '{program}': permission denied as " in log and "it is not executable for " in log, log


def test_newuser6_finding_20_a_closed_folder_on_the_path_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # root enters every folder, so the account that cannot is stood in for by os.access
    from jupyter_sched.executors import wrapper

    closed = tmp_path / "private"
    (closed / "bin").mkdir(parents=True)
    python = closed / "bin" / "python3"
    python.write_text("")
    python.chmod(0o755)
    real_access = os.access
    monkeypatch.setattr(wrapper.os, "access", lambda p, mode: False if str(p) == str(closed) else real_access(p, mode))
    said = wrapper._permission_why(str(python))
    assert said.startswith(f"permission denied as {wrapper._account()}: the folder '{closed}' on its path is not open to ")
    assert "c.HubSchedApp.job_python" in said


BIND_LATER = """
port = int(sys.argv[1])
print("up", flush=True)
wait_gate("go")
server = __import__("socket").create_server(("127.0.0.1", port))
print("serving", flush=True)
while True:
    conn, _ = server.accept()
    conn.close()
"""


def test_newuser8_n8_a_service_is_ready_only_on_its_own_socket(tmp_path: Path) -> None:
    """New user 8, N8: a second service on the port a first one served read "ready on port 18878"
    while it crash-looped on "Address already in use": the probe took any answer on the port."""
    ex = LocalExecutor(tmp_path / "jobs")
    other = socket.create_server(("127.0.0.1", 0))  # another service already serves the port
    port = int(other.getsockname()[1])
    job = job_for(tmp_path, BIND_LATER, kind=JobKind.INFERENCE, port=port)
    job = replace(job, spec=replace(job.spec, command=(str(port),)))
    ex.start(job, Allocation("n1", ("GPU-0",)))
    seen: list[ExecutorEvent] = []
    wait_until(lambda: seen.extend(ex.poll()) or "up" in ex.logs(job.id)[0], "the service to start")
    for _ in range(20):  # polls while the port answers — but not from the job
        seen.extend(ex.poll())
        time.sleep(0.02)
    assert not [e for e in seen if isinstance(e, Ready)], seen
    other.close()
    (tmp_path / "go").touch()  # now the job listens itself
    ready = wait_event(ex, Ready, seen)
    assert isinstance(ready, Ready) and ready.port == port
    ex.stop(job.id, grace_s=5)
    wait_event(ex, Exited, seen)


SERVE_THEN_CLOSE = """
port = int(sys.argv[1])
server = __import__("socket").create_server(("127.0.0.1", port))
with open("pid-" + str(os.getpid()), "w"):
    pass
print("serving", os.getpid(), flush=True)
server.settimeout(0.05)
while not os.path.exists("close"):
    try:
        server.accept()[0].close()
    except OSError:
        pass
server.close()
print("closed", flush=True)
while True:
    time.sleep(1)
"""


def _service(tmp_path: Path) -> tuple[LocalExecutor, Job, int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    job = job_for(tmp_path, SERVE_THEN_CLOSE, kind=JobKind.INFERENCE, port=port)
    return LocalExecutor(tmp_path / "jobs"), replace(job, spec=replace(job.spec, command=(str(port),))), port


def test_newuser8_n8_a_ready_service_whose_process_is_killed_is_not_ready_until_it_serves_again(
        tmp_path: Path) -> None:
    """New user 8, N8 (remainder): a ready service that crashed read "ready on port P" until its
    restart, up to 60 s later. Now its exit reports NotReady at once (naming the exit and the restart),
    and the restarted process is Ready again once it listens."""
    ex, job, port = _service(tmp_path)
    ex.start(job, Allocation("n1", ("GPU-0",)))
    seen: list[ExecutorEvent] = []
    wait_event(ex, Ready, seen)
    pid = int(next(tmp_path.glob("pid-*")).name.removeprefix("pid-"))
    os.kill(pid, signal.SIGKILL)  # the service's own process, not its wrapper
    gone_at = time.monotonic()
    not_ready = wait_event(ex, NotReady, seen)
    assert isinstance(not_ready, NotReady) and not_ready.port == port, seen
    assert "exited with code" in not_ready.why and "restarting in 1 s" in not_ready.why, not_ready
    assert time.monotonic() - gone_at < 30, "NotReady came with the exit, not after the restart backoff"
    assert not [e for e in seen if isinstance(e, Exited)], seen  # it restarts: no end reported
    seen.clear()
    wait_event(ex, Started, seen)  # restarted (1 s backoff) ...
    ready = wait_event(ex, Ready, seen)  # ... and serving again
    assert isinstance(ready, Ready) and ready.port == port
    assert len(list(tmp_path.glob("pid-*"))) == 2  # a new process serves
    ex.stop(job.id, grace_s=5)
    wait_event(ex, Exited, seen)


def test_newuser8_n8_a_ready_service_that_closes_its_socket_is_not_ready(tmp_path: Path) -> None:
    """The process lives on but nothing of the job listens any more: NotReady within the recheck."""
    ex, job, port = _service(tmp_path)
    ex.start(job, Allocation("n1", ("GPU-0",)))
    seen: list[ExecutorEvent] = []
    wait_event(ex, Ready, seen)
    (tmp_path / "close").touch()
    wait_until(lambda: "closed" in ex.logs(job.id)[0], "the service to close its socket")
    not_ready = wait_event(ex, NotReady, seen)
    assert isinstance(not_ready, NotReady) and not_ready.port == port
    assert f"nothing of the job listens on port {port}" in not_ready.why, not_ready
    assert not [e for e in seen if isinstance(e, (Exited, Lost))], seen  # the process still runs
    ex.stop(job.id, grace_s=5)
    wait_event(ex, Exited, seen)
