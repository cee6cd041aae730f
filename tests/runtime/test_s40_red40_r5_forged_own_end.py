"""red40 R5: a job's own end record must not undo a stop the service saw land.

A job that on SIGTERM killed its wrapper (the same account may) and wrote its own ``exit.json`` with
``"before_signal": true`` and exit code 0 turned boss's cancel into "succeeded, exit 0 … the stop sent SIGTERM to 2
processes (/bin/sh /tmp/red40/forge.sh, sleep 1); it had ended before the cancel reached it" — the same message named
the live processes the stop had signalled. A time limit read as the job's own end, a preemption was not requeued.

Now the flag is believed only where what the service saw agrees (executors/local ``_own_end``): the wrapper was not
killed by anything but the stop, and the stop found nothing of the job alive besides its wrapper, or the same record
(an end before the stop) was already there when the stop came. A record left by a killed wrapper is said to be the
job's own. red39 R2's own ends (tests/runtime/test_s39_red39_r2_r11_stop_race.py) keep theirs.

Real parts: SchedulerService in-process, SQLite, the local executor running real processes under its real wrapper;
the forging job is a real shell script doing what the tester's did.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.base import ExecutorHandle, Exited
from jupyter_sched.executors.local import FORGED_BEFORE_STOP, LocalExecutor, read_log
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.store import Store
from tests.accounts import Account
from tests.in_process import cancel_all_and_close, tick_until
from tests.runtime.builders import make_job
from tests.runtime.test_engine import state_of
from tests.runtime.test_runas import (
    GPU,
    accounts,
    alive,
    hub_executor,
    needs_accounts,
    py_job,
    root,
    run_as,
    wait_until,
)

__all__ = ["accounts", "root"]  # test_runas's fixtures (real OS accounts, a folder every account can read)

FORGE = r"""
# red40's forge.sh ("late"): on SIGTERM kill the wrapper (this shell's parent) and write an end record claiming an own
# end before any signal, exit 0. "early": the record is written at the start, before any stop, and left unchanged.
# "stopped": the record is written at the start and the wrapper SIGSTOPped on SIGTERM (the stop's SIGKILL ends it).
# "mute": on SIGTERM kill the wrapper and write no record; it runs on until the stop kills it.
# "deaf": the record is written at the start and SIGTERM changes nothing (the wrapper is left alone): it runs on.
# Each waits, once it heard the stop ($2.term), for the test's go ($2.go): the test orders what the service sees.
record() {
  printf '{"exit_code": 0, "finished_at": "%s", "signal": null, "said": 0, "worded": true, "before_signal": true}' \
    "$(date -u +%Y-%m-%dT%H:%M:%S+00:00)" > "$PWD/exit.json"
}
W=$PPID
on_term() {
  touch "$2.term"
  while [ ! -e "$2.go" ]; do sleep 0.02; done
  if [ "$1" = deaf ]; then touch "$2.done"; return; fi
  if [ "$1" = stopped ]; then kill -STOP "$W"; else kill -9 "$W"; fi 2>/dev/null
  [ "$1" = late ] && record  # the others' record stays the one there before the stop, unchanged
  touch "$2.done"
  if [ "$1" = mute ]; then while :; do sleep 0.05; done; fi
  exit 0
}
trap 'on_term "$1" "$2"' TERM
[ "$1" != late ] && [ "$1" != mute ] && record
echo $$ > "$2.pid"
touch "$2.ready"
while :; do sleep 0.05; done
"""
GRACE_S = 5.0


class Clock:
    """The executor's monotonic clock, moved by the test: the stop's SIGKILL (its grace) comes when the test says."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def __call__(self) -> float:
        return self.now


def _forging(tmp_path: Path, name: str, mode: str = "late") -> tuple[list[str], Path]:
    script = tmp_path / "forge.sh"
    script.write_text(FORGE)
    return ["sh", str(script), mode, str(tmp_path / name)], tmp_path / f"{name}.ready"


def _marker(ready: Path, what: str) -> Path:
    return ready.with_suffix(f".{what}")


def _forged(svc: SchedulerService, clock: Clock, readies: list[Path]) -> None:
    """Drive the one ordering the test means (s41: in the whole run the service's look fell between the forger's kill of
    its wrapper and its record — the record never came): tick until each forger heard the stop, then, with no look of
    the service's, let each do its part and wait until it is done — its process gone, but a "mute" or "deaf" one's,
    which runs on until the stop kills it — then move the executor's clock past the stop's grace."""
    tick_until(svc, "the forgers to hear the stop", lambda: all(_marker(r, "term").exists() for r in readies))
    for ready in readies:
        _marker(ready, "go").touch()
    for ready in readies:
        wait_until(_marker(ready, "done").exists, f"{ready.stem} to forge")
        if ready.stem not in ("mute", "deaf"):
            pid = int(_marker(ready, "pid").read_text())
            wait_until(lambda pid=pid: not alive(pid), f"{ready.stem} to exit")  # type: ignore[misc]
    clock.now += GRACE_S + 1


def _service(url: str, tmp_path: Path, clock: Clock | None = None, **kwargs: Any) -> SchedulerService:
    return SchedulerService(store=Store(url), inventory=SimulatedInventory(4, node="vm"),
                            executor=LocalExecutor(tmp_path / "jobs", monotonic=clock or time.monotonic),
                            cycle_interval_s=0.0, stop_grace_s=GRACE_S, poll_interval_s=0.05,
                            scheduling_profile=SchedulingProfile(grace_s=1, min_runtime_s=0), **kwargs)


def _job_dir(svc: SchedulerService, job_id: str) -> Path:
    return Path(str(svc.store.get_job(job_id).handle["job_dir"]))


def _said_by_the_job(message: str, how: str = "killed (SIGKILL, not by the service)") -> None:
    assert f"its wrapper was {how}" in message, message
    assert "its end record is the job's own" in message, message
    assert "had ended before" not in message, message


def test_red40_r5_a_forged_before_signal_does_not_undo_a_cancel_that_signalled_live_processes(
        sqlite_db: str, tmp_path: Path) -> None:
    clock = Clock()
    svc = _service(sqlite_db, tmp_path, clock)
    try:
        jobs = {}
        for mode in ("late", "early", "stopped", "mute"):
            command, ready = _forging(tmp_path, mode, mode)
            jobs[mode] = (svc.submit({"gpus": 1, "name": f"r5-{mode}", "command": command}, user="r40c")["id"], ready)
        tick_until(svc, "the forgers to run", lambda: all(ready.exists() for _, ready in jobs.values()))
        late, early, stopped, mute = (job_id for job_id, _ in jobs.values())
        for job_id in (early, stopped):  # their record was there before the stop, an end before it
            assert (_job_dir(svc, job_id) / "exit.json").exists()
        svc.cancel(late, user="boss", is_admin=True)
        svc.cancel(early, user="r40c")
        svc.cancel(stopped, user="boss", is_admin=True)
        svc.cancel(mute, user="boss", is_admin=True)
        _forged(svc, clock, [ready for _, ready in jobs.values()])
        tick_until(svc, "the four to end", lambda: all(state_of(svc, j) not in ("running", "pending")
                                                       for j in (late, early, stopped, mute)))
        for job_id, who in ((late, "boss"), (early, "r40c"), (stopped, "boss")):
            how = "stopped (SIGSTOP, not by the service) until the stop's SIGKILL" if job_id == stopped else \
                "killed (SIGKILL, not by the service)"
            job = svc.get_job(job_id, user="r40c")
            # failed before: "succeeded", 0, "exited with code 0; the stop sent SIGTERM to 2 processes (…); it had
            # ended before the cancel reached it"
            assert (job["state"], job["exit_code"]) == ("cancelled", 0), job
            assert job["message"].startswith(f"cancelled by {who} (exited with code 0"), job["message"]
            assert "the stop sent SIGTERM" in job["message"], job["message"]
            _said_by_the_job(job["message"], how)
            record = json.loads((_job_dir(svc, job_id) / "exit.json").read_text())
            assert record.get("before_signal") is True, record  # the forger's record is what was left
            log = svc.logs(job_id, user="r40c")["text"]
            # the forged record's "worded": true kept the stop's words out of the log; they close it again
            assert log.rstrip().endswith(f"[jupyter_sched] cancelled by {who}"), log
            assert "its end record (exit.json) is the job's own" in log, log
        # s41: the ordering the whole run hit — its wrapper killed, no record (yet) when the service looked: the stop
        # kills what is left and says whose the wrapper's end was (failed before: "killed by SIGKILL; the stop sent …")
        job = svc.get_job(mute, user="r40c")
        assert (job["state"], job["exit_code"]) == ("cancelled", -9), job
        assert job["message"].startswith("cancelled by boss (killed by SIGKILL; its wrapper was killed (SIGKILL, not "
                                         "by the service) before it recorded the job's end; the stop sent SIGTERM"), \
            job["message"]
        assert "then SIGKILL" in job["message"], job["message"]  # what was left of it: the stop's kill
        assert not (_job_dir(svc, mute) / "exit.json").exists()
        log = svc.logs(mute, user="r40c")["text"]
        assert "[jupyter_sched] the job's wrapper was killed (SIGKILL, not by the service) before it recorded the " \
            "job's end" in log, log
        assert log.rstrip().endswith("[jupyter_sched] cancelled by boss"), log
    finally:
        cancel_all_and_close(svc)


def test_red40_r5_a_forged_end_does_not_undo_a_time_limit(sqlite_db: str, tmp_path: Path) -> None:
    clock = Clock()
    svc = _service(sqlite_db, tmp_path, clock)
    try:
        cmd, ready = _forging(tmp_path, "limit")
        job_id = svc.submit({"gpus": 1, "name": "r5-limit", "command": cmd, "time_limit_s": 2}, user="r40c")["id"]
        tick_until(svc, "the forger to run", ready.exists)
        _forged(svc, clock, [ready])  # its time limit's stop: the forger heard it
        tick_until(svc, "its time limit's stop to end it", lambda: state_of(svc, job_id) not in ("running", "pending"))
        job = svc.get_job(job_id, user="r40c")
        # failed before: "succeeded", 0, "…; it had ended before the time limit's stop reached it"
        assert job["state"] == "failed", job
        assert job["message"].startswith("time limit of "), job["message"]
        _said_by_the_job(job["message"])
    finally:
        cancel_all_and_close(svc)


def test_flake41_f1_a_record_written_at_the_start_by_a_job_that_ignores_sigterm_is_not_its_end(
        sqlite_db: str, tmp_path: Path) -> None:
    """s41: no wrapper tampering at all — the job writes ``exit.json`` (exit 0, ``before_signal``) as it starts and runs
    on through the stop's SIGTERM; the stop's SIGKILL ends it and its wrapper. The record was there at the stop (an end
    before it), which session 40 took for red39 R2's window (the command ended, its wrapper ending leftovers), though
    the command itself still ran: "succeeded … it had ended before the cancel reached it". The wrapper now tells the
    executor its command's pid (its own pipe), and the record is believed only where that process no longer ran."""
    clock = Clock()
    svc = _service(sqlite_db, tmp_path, clock)
    try:
        command, ready = _forging(tmp_path, "deaf", "deaf")
        job_id = svc.submit({"gpus": 1, "name": "f1-deaf", "command": command}, user="r40c")["id"]
        tick_until(svc, "the forger to run", ready.exists)
        assert (_job_dir(svc, job_id) / "exit.json").exists()
        svc.cancel(job_id, user="boss", is_admin=True)
        _forged(svc, clock, [ready])
        tick_until(svc, "the stop's SIGKILL to end it", lambda: state_of(svc, job_id) not in ("running", "pending"))
        job = svc.get_job(job_id, user="r40c")
        # failed before: "succeeded", "exited with code 0; the stop sent SIGTERM to 2 processes (…), then SIGKILL 6 s
        # later to 2 (…); it had ended before the cancel reached it"
        assert job["state"] == "cancelled", job
        assert job["message"].startswith(f"cancelled by boss (exited with code 0; {FORGED_BEFORE_STOP}; the stop sent "
                                         "SIGTERM"), job["message"]
        assert "then SIGKILL" in job["message"] and "had ended before" not in job["message"], job["message"]
        log = svc.logs(job_id, user="r40c")["text"]
        assert f"[jupyter_sched] the job's {FORGED_BEFORE_STOP.removeprefix('its ')}" in log, log
        assert log.rstrip().endswith("[jupyter_sched] cancelled by boss"), log  # its record's "worded" not believed
    finally:
        cancel_all_and_close(svc)


def test_verify40_v2_a_job_adopted_after_a_restart_does_not_make_its_own_record_its_end(tmp_path: Path) -> None:
    """verify40 V2: the job pre-writes its end record, the service restarts (the new one adopts the job: its wrapper is
    not that server's child, so the wrapper's death is not seen), and on the cancel's SIGTERM the job kills its wrapper
    and exits 0: "succeeded … it had ended before the cancel reached it". The first server kept what the wrapper told
    it of the command (pid, start time) in its own record; the adopting one reads it there and sees the command ran
    when its stop went out."""
    clock = Clock()
    first = LocalExecutor(tmp_path / "jobs", monotonic=clock)
    command, ready = _forging(tmp_path, "adopted", "early")
    job = make_job("j-v2", command=tuple(command))
    handle = first.start(job, GPU)
    wait_until(lambda: ready.exists() and first.poll() == [] and "commands" in (first.dirs.read_record(job.id) or {}),
               "the forger to run and its wrapper to report its command")
    first.detach()  # the server is killed; the job keeps running
    second = LocalExecutor(tmp_path / "jobs", monotonic=clock)
    assert second.adopt(job, ExecutorHandle.from_dict(json.loads(json.dumps(handle.to_dict())))) is None
    second.stop(job.id, grace_s=GRACE_S, reason="cancelled by boss")
    _marker(ready, "go").touch()
    pid = int(_marker(ready, "pid").read_text())
    wait_until(lambda: _marker(ready, "done").exists() and not alive(pid), "the forger to kill its wrapper and exit")
    event = wait_until(lambda: next((e for e in second.poll() if isinstance(e, Exited)), None), "its end")
    assert isinstance(event, Exited)
    # failed before: before_stop True, "exited with code 0; the stop sent SIGTERM to 2 processes (…)"
    assert event.before_stop is False, event
    assert event.message.startswith(f"exited with code 0; {FORGED_BEFORE_STOP}; the stop sent SIGTERM"), event.message
    log = second.logs(job.id)[0]
    assert log.rstrip().endswith("[jupyter_sched] cancelled by boss"), log


QUOTAS = {"quotas": [{"team": "ml", "guaranteed": 2, "borrowing_limit": 2},
                     {"team": "cv", "guaranteed": 2, "borrowing_limit": 0}]}


def test_red40_r5_a_forged_end_does_not_keep_a_preempted_job_from_requeueing(sqlite_db: str, tmp_path: Path) -> None:
    clock = Clock()
    svc = _service(sqlite_db, tmp_path, clock, user_teams={"root": ("ml", "cv")})
    svc.set_quotas(QUOTAS, actor="admin")
    try:
        cmd, ready = _forging(tmp_path, "borrower")
        borrower = svc.submit({"gpus": 3, "name": "r5-borrower", "team": "ml", "priority": "low",
                               "time_limit_s": 600, "command": cmd}, user="root")["id"]
        tick_until(svc, "the borrower to run", ready.exists)
        svc.submit({"gpus": 2, "name": "r5-owner", "team": "cv", "time_limit_s": 240,
                    "command": [sys.executable, "-c", "import time; time.sleep(60)"]}, user="root")
        tick_until(svc, "the borrower's reclaim", lambda: svc.store.get_job(borrower).stop_intent is not None)
        assert svc.store.get_job(borrower).stop_intent == "preempt"
        _forged(svc, clock, [ready])
        tick_until(svc, "the borrower to be settled", lambda: state_of(svc, borrower) != "running")
        job = svc.get_job(borrower, user="root")
        # failed before: "succeeded", 0, "…; it had ended before the preemption reached it" — never run again
        assert job["state"] == "pending", job
        assert [e for e in svc.audit(limit=200) if e["action"] == "requeued" and e["job_id"] == borrower]
    finally:
        cancel_all_and_close(svc)


HUB_FORGER = """d = os.path.dirname(os.path.abspath(sys.argv[0]))
order = {order!r}
def on_term(*_):
    os.kill(os.getppid(), signal.SIGKILL)
    if order != "no record":
        with open(os.path.join(d, 'exit.json'), 'w') as f:
            json.dump({{'exit_code': 0, 'signal': None, 'said': 0, 'worded': True, 'before_signal': True,
                       'finished_at': '2000-01-01T00:00:00+00:00'}}, f)
    open(os.path.join(d, 'forged'), 'w').close()
    if order == "record, then gone":
        os._exit(0)
    while True: time.sleep(0.05)
signal.signal(signal.SIGTERM, on_term)
with open(os.path.join(d, 'forger.pid'), 'w') as f:
    f.write(str(os.getpid()))
print('forger runs', flush=True)
while True: time.sleep(0.05)
"""
ORDERS = {"j-r5a": "record, then gone", "j-r5b": "no record", "j-r5d": "record, still running"}


@needs_accounts
def test_red40_r5_a_hub_job_as_its_own_account_that_kills_its_wrapper_is_not_taken_as_ended_before_the_stop(
        accounts: list[Account], root: Path) -> None:
    """The tester's setting: the job runs as its owner's account (hub mode), the wrapper too, so the job may kill it.

    s41: in the whole run (CI on 45262b24) the service looked between the forger's kill of its wrapper and its record,
    killed what was left, and said "killed by SIGKILL; the stop sent …" — nothing of the wrapper's kill. Each ordering
    is driven here (the executor looks only when polled): the forger's record and exit before the service looks; its
    wrapper killed and no record; its record written, the forger still running. Each is the stop's end, said so."""
    owner = accounts[0]
    clock = Clock()
    ex = hub_executor(root, monotonic=clock)
    for job_id, order in ORDERS.items():
        ex.start(py_job(job_id, HUB_FORGER.format(order=order), user=owner.name), GPU,  # type: ignore[arg-type]
                 run_as(owner))
    dirs = {job_id: root / "jobs" / "users" / owner.name / job_id for job_id in ORDERS}
    wait_until(lambda: all("forger runs" in ex.logs(job_id)[0] for job_id in ORDERS), "the forgers to run")
    assert ex.poll() == []
    for job_id, folder in dirs.items():  # its wrapper told the service its command (through the account switch)
        commands = (ex.dirs.read_record(job_id) or {}).get("commands")
        assert commands and commands[0][0] == int((folder / "forger.pid").read_text()), commands
    for job_id in ORDERS:
        ex.stop(job_id, grace_s=GRACE_S, reason="cancelled by boss")  # its SIGTERM goes now; no look until the poll
    for job_id, folder in dirs.items():
        wait_until((folder / "forged").exists, f"{job_id} to forge")
    pid = int((dirs["j-r5a"] / "forger.pid").read_text())
    wait_until(lambda: not alive(pid), "the forger that records and exits to be gone")
    ended: dict[str, Exited] = {}

    def all_ended() -> bool:
        ended.update((e.job_id, e) for e in ex.poll() if isinstance(e, Exited))
        return len(ended) == len(ORDERS)

    wait_until(all_ended, "the three to end")  # the two still running are killed by the service's first look
    assert ex.settle(60)
    for job_id, event in ended.items():
        # failed before: before_stop True, "exited with code 0; the stop sent SIGTERM to 1 process (…)" (j-r5a, j-r5d);
        # "killed by SIGKILL; the stop sent SIGTERM to 1 process (…), then SIGKILL to 1 (…)" (j-r5b: the CI failure)
        assert event.before_stop is False, event
        assert "the stop sent SIGTERM to 1 process" in event.message, event.message
        assert ("then SIGKILL" in event.message) is (job_id != "j-r5a"), event.message  # the service's own kill
        log = read_log(dirs[job_id] / "output.log", 0, 65536, owner_uid=owner.uid)[0]
        assert log.rstrip().endswith("[jupyter_sched] cancelled by boss"), log
        if job_id == "j-r5b":
            assert event.exit_code == -9, event
            assert "its wrapper was killed (SIGKILL, not by the service) before it recorded the job's end" in \
                event.message, event.message
            assert "the job's wrapper was killed (SIGKILL, not by the service) before it recorded the job's end" in log
        else:
            assert event.exit_code == 0, event
            assert "its wrapper was killed (SIGKILL, not by the service), so its end record is the job's own" in \
                event.message, event.message
            assert "its end record (exit.json) is the job's own" in log, log
