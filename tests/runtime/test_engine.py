"""The engine and SchedulerService end to end: real store, real core (``run_cycle``), real
subprocesses. Simulated GPUs stand in for silicon (no GPU here); they carry UUIDs exactly as NVML
GPUs do, so what a job sees is what it would see on a GPU host.

Nothing asserts durations: the tests drive ticks themselves and wait on observable state.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest

from jupyter_sched.engine import EventBus, ManualClock, SchedulerService
from jupyter_sched.errors import (
    AuthorizationError,
    ConflictError,
    NotFoundError,
    NotLeaderError,
    UnschedulableError,
    ValidationError,
)
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation
from jupyter_sched.scheduling import Admit, CycleResult, Snapshot, run_cycle
from jupyter_sched.store import Store, check_integrity
from tests.runtime.builders import T0

WAIT_S = 60.0
HERE = Path(__file__).resolve().parent


def wait_until(predicate: Callable[[], Any], what: str | Callable[[], str], *,
               tick: Callable[[], Any] | None = None) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if tick is not None:
            tick()
        value = predicate()
        if value:
            return value
        time.sleep(0.03)
    raise AssertionError(f"timed out waiting for {what if isinstance(what, str) else what()}")


def make_service(url: str, tmp_path: Path, *, gpus: int = 2, clock: Any = None, owner: str | None = None,
                 jobs_dir: str = "jobs", **kwargs: Any) -> SchedulerService:
    return SchedulerService(store=Store(url), inventory=SimulatedInventory(gpus, node="n1"),
                            executor=LocalExecutor(tmp_path / jobs_dir), clock=clock, owner_id=owner,
                            cycle_interval_s=0.0, stop_grace_s=5.0, **kwargs)


def state_of(svc: SchedulerService, job_id: str) -> str:
    return str(svc.get_job(job_id, user="admin", is_admin=True)["state"])


def published(svc: SchedulerService) -> list[dict[str, Any]]:
    """Every event ``svc``'s bus publishes from now on, in order (each still reaches the bus's readers)."""
    seen: list[dict[str, Any]] = []
    sink = svc.bus.publish

    def spy(event: dict[str, Any]) -> None:
        seen.append(event)
        sink(event)

    svc.bus.publish = spy
    return seen


def gated(tmp_path: Path, name: str, body: str = "") -> list[str]:
    """argv of a Python job that prints its GPU pins, waits for ``tmp_path/name``, then runs ``body``."""
    code = ("import json, os, sys, time\n"
            "print(json.dumps({k: os.environ.get(k) for k in ('CUDA_VISIBLE_DEVICES', 'CUDA_DEVICE_ORDER')}),"
            " flush=True)\n"
            f"while not os.path.exists({str(tmp_path / name)!r}):\n    time.sleep(0.02)\n" + body)
    return [sys.executable, "-c", code]


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_case_016_a_submitted_script_runs_pinned_by_uuid_and_ends_succeeded(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path)
    script = tmp_path / "train.py"
    script.write_text("\n".join(gated(tmp_path, "go")[2].splitlines()) + "\nprint('done', flush=True)\n")
    job = svc.submit({"script": str(script), "env": {"CUDA_DEVICE_ORDER": "FASTEST_FIRST"}}, user="ana")
    assert job["state"] == "pending" and svc.store.get_job(job["id"])  # committed before submit returned
    wait_until(lambda: svc.logs(job["id"], user="ana")["text"], "the job's first output", tick=svc.tick)
    running = svc.get_job(job["id"], user="ana")
    assert running["state"] == "running" and running["simulated"] is True
    chunk = svc.logs(job["id"], user="ana")
    pins = json.loads(chunk["text"].splitlines()[0])
    assert pins == {"CUDA_VISIBLE_DEVICES": running["allocation"]["gpu_uuids"][0], "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    assert pins["CUDA_VISIBLE_DEVICES"].startswith("GPU-") and chunk["finished"] is False
    (tmp_path / "go").touch()
    wait_until(lambda: state_of(svc, job["id"]) == "succeeded", "success", tick=svc.tick)
    rest = svc.logs(job["id"], user="ana", offset=chunk["next_offset"])
    assert rest["text"] == "done\n" and rest["finished"] is True
    assert svc.get_job(job["id"], user="ana")["exit_code"] == 0
    usage = svc.usage(user="ana", by="job_id")
    assert [row["job_id"] for row in usage] == [job["id"]] and usage[0]["gpu_seconds"] > 0
    assert check_integrity(svc.store).ok


def test_a_job_asking_for_more_gpus_than_exist_is_refused_with_the_numbers(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=2)
    with pytest.raises(UnschedulableError) as info:
        svc.submit({"gpus": 3, "command": ["true"]}, user="ana")
    reason = info.value.details["reason"]
    assert reason["details"]["requested"] == 3 and "2" in info.value.message
    assert svc.list_jobs(user=None) == []  # nothing was accepted


def test_a_job_over_quota_pends_with_the_quota_reason(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=2)
    svc.set_quotas({"quotas": [{"team": "default", "guaranteed": 1, "borrowing_limit": 0}]}, actor="admin")
    first = svc.submit({"command": gated(tmp_path, "never")}, user="ana")
    second = svc.submit({"command": ["true"]}, user="ana")
    wait_until(lambda: state_of(svc, first["id"]) == "running", "the first job to run", tick=svc.tick)
    pending = svc.get_job(second["id"], user="ana")
    assert pending["state"] == "pending"
    assert pending["reason"]["code"] in ("ExceedsQuota", "BorrowingLimitReached"), pending["reason"]
    queue = svc.queue(user="bob")
    assert [(q["id"], q["position"], q["mine"]) for q in queue] == [(second["id"], 1, False), (first["id"], None, False)]
    assert "command" not in queue[0]  # other people's commands stay private
    audit = svc.audit(action="quotas_changed")
    assert audit[0]["details"]["old"]["quotas"] == [] and audit[0]["details"]["new"]["quotas"][0]["guaranteed"] == 1
    svc.cancel(first["id"], user="ana")
    wait_until(lambda: state_of(svc, first["id"]) == "cancelled", "the cancel", tick=svc.tick)


GRANDCHILD = (
    "import json, os, subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
    "json.dump({'child': os.getpid(), 'grandchild': child.pid}, open({pids!r}, 'w'))\n"
    "time.sleep(120)\n"
)


def test_cancel_stops_a_running_jobs_whole_process_group(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path)
    pids_file = tmp_path / "pids.json"
    job = svc.submit({"command": [sys.executable, "-c", GRANDCHILD.replace("{pids!r}", repr(str(pids_file)))]},
                     user="ana")
    wait_until(lambda: pids_file.exists() and pids_file.read_text(), "the grandchild", tick=svc.tick)
    pids = json.loads(pids_file.read_text())
    with pytest.raises(AuthorizationError):
        svc.cancel(job["id"], user="mallory")  # not yours: refused (403, newuser29 n5)
    answer = svc.cancel(job["id"], user="ana")
    assert answer["stop_requested"]["intent"] == "cancel"
    wait_until(lambda: state_of(svc, job["id"]) == "cancelled", "cancelled", tick=svc.tick)
    wait_until(lambda: gone(pids["child"]) and gone(pids["grandchild"]), "child and grandchild to die")
    with pytest.raises(ConflictError):
        svc.cancel(job["id"], user="ana")
    assert [e["action"] for e in svc.audit(job_id=job["id"])][:2] == ["cancelled", "cancel_requested"]


def test_pending_work_and_leases_cancel_at_once(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=1)
    lease = svc.submit({"gpus": 1, "kernel_id": "k-1"}, user="ana", kind="lease")
    waiting = svc.submit({"command": ["true"]}, user="ana")
    svc.tick()
    assert state_of(svc, lease["id"]) == "running"  # a lease is bound, not run
    assert svc.keepalive(lease["id"], user="ana")["id"] == lease["id"]
    assert svc.cancel(waiting["id"], user="ana")["state"] == "cancelled"
    released = svc.release_kernel("k-1", reason="kernel shutdown")
    assert [r["state"] for r in released] == ["cancelled"]
    assert check_integrity(svc.store).ok
    with pytest.raises(ValidationError):
        svc.submit({"gpus": 1, "kind": "training", "command": ["true"]}, user="ana", kind="lease")


def test_a_preempted_job_is_requeued_keeping_its_submit_time(sqlite_db: str, tmp_path: Path) -> None:
    # "high" needs an admin's grant (issue 15); bob has one here
    svc = make_service(sqlite_db, tmp_path, gpus=1, priority_grants={"users": {"bob": ["high"]}})
    low = svc.submit({"priority": "low", "command": gated(tmp_path, "never")}, user="ana")
    wait_until(lambda: state_of(svc, low["id"]) == "running", "the low job to run", tick=svc.tick)
    high = svc.submit({"priority": "high", "command": ["true"]}, user="bob")
    wait_until(lambda: state_of(svc, high["id"]) == "succeeded", lambda: f"the high job to run {svc.list_jobs(user=None)} {svc.audit()}", tick=svc.tick)
    # an eviction is no failure: requeued with no back-off, it runs again as soon as the GPU is free
    # (new user 15 N14; before, it sat out requeue_backoff_s first)
    wait_until(lambda: state_of(svc, low["id"]) == "running", "the low job to run again", tick=svc.tick)
    requeued = svc.get_job(low["id"], user="ana")
    assert requeued["submitted_at"] == low["submitted_at"] and requeued["attempts"] == 2
    entries = svc.audit(job_id=low["id"])
    actions = [e["action"] for e in entries]
    assert "preempt" in actions and "requeued" in actions
    requeue = next(e for e in entries if e["action"] == "requeued")
    assert high["id"] in requeue["message"] and requeue["details"]["not_before"] is None, requeue
    assert check_integrity(svc.store).ok


def test_time_limit_stops_the_job_and_fails_it(sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = make_service(sqlite_db, tmp_path, clock=clock)
    job = svc.submit({"command": gated(tmp_path, "never"), "time_limit": "10s"}, user="ana")
    wait_until(lambda: state_of(svc, job["id"]) == "running", "running", tick=svc.tick)
    clock.advance(11)
    wait_until(lambda: state_of(svc, job["id"]) == "failed", "the time limit", tick=svc.tick)
    assert "time limit of 10s exceeded" in svc.get_job(job["id"], user="ana")["message"]


def lease_body(n: int = 1) -> dict[str, Any]:
    return {"gpus": n, "kind": "lease"}


def test_two_engines_on_one_store_never_allocate_the_same_gpu(db_url: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    a = make_service(db_url, tmp_path, gpus=4, clock=clock, owner="engine-a", jobs_dir="a")
    b = make_service(db_url, tmp_path, gpus=4, clock=clock, owner="engine-b", jobs_dir="b", lease_ttl_s=15)
    submitted = []
    for step in range(12):
        server = (a, b)[step % 2]
        submitted.append(server.submit(lease_body(1 + step % 2), user=f"u{step % 3}")["id"])
        reports = [a.tick(), b.tick()]
        assert sum(r.leader for r in reports) == 1  # one decides, the other only serves
        assert not reports[1].admitted
        if step % 3 == 2:  # free some GPUs through the non-leader's API
            running = b.list_jobs(user=None, state="running")
            if running:
                b.cancel(running[-1]["id"], user="admin", is_admin=True)
        report = check_integrity(a.store)
        assert report.ok, report.problems
        clock.advance(1)
    # the leader dies without resigning; after its lease expires the other engine takes over
    clock.advance(16)
    assert b.tick().leader and not a.tick().leader
    assert b.store.leader().owner == "engine-b" and b.store.leader().term == 2
    assert check_integrity(b.store).ok
    assert {j["id"] for j in a.list_jobs(user=None)} == set(submitted)


def test_a_deposed_leader_cannot_apply_a_stale_decision(db_url: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    a = make_service(db_url, tmp_path, gpus=1, clock=clock, owner="engine-a", jobs_dir="a")
    b = make_service(db_url, tmp_path, gpus=1, clock=clock, owner="engine-b", jobs_dir="b")
    assert a.tick().leader
    first = a.submit(lease_body(), user="ana")
    stale = a.engine.snapshot()
    stale_result = run_cycle(stale)  # engine a decided: first → the only GPU
    assert [adm.job_id for adm in stale_result.admits] == [first["id"]]
    clock.advance(a.engine.lease_ttl_s + 1)  # a stalls past its lease
    svc_b_report = b.tick()
    assert svc_b_report.leader and svc_b_report.admitted == [first["id"]]
    second = b.submit(lease_body(), user="bob")
    forged = CycleResult(admits=(Admit(job_id=second["id"], allocation=stale_result.admits[0].allocation),))
    with pytest.raises(NotLeaderError):
        a.engine._apply(forged, stale)
    assert state_of(a, second["id"]) == "pending"
    assert check_integrity(a.store).ok


def test_a_cycle_that_double_books_a_gpu_is_refused_by_the_store_guard(sqlite_db: str, tmp_path: Path) -> None:
    """A policy plugin bug must not hand one GPU to two jobs: the engine's write-side check refuses it."""

    def greedy(snapshot: Snapshot, profile: Any = None) -> CycleResult:
        pending = [j for j in snapshot.jobs if j.state.value == "pending"]
        return CycleResult(admits=tuple(Admit(j.id, Allocation("n1", ("GPU-sim-n1-0",))) for j in pending))

    svc = make_service(sqlite_db, tmp_path, gpus=1, cycle=greedy)
    jobs = [svc.submit(lease_body(), user="ana")["id"] for _ in range(2)]
    svc.tick()
    assert sorted(state_of(svc, j) for j in jobs) == ["pending", "running"]
    assert [e["action"] for e in svc.audit(action="admit_refused")] == ["admit_refused"]
    assert check_integrity(svc.store).ok


@pytest.mark.parametrize("kill_job_too", [False, True],
                         ids=["the running job survives and is re-adopted",
                              "the running job died with the server and is marked lost"])
def test_kill_9_with_3_pending_and_1_running_loses_nothing(db_url: str, tmp_path: Path, kill_job_too: bool) -> None:
    api = make_service(db_url, tmp_path, gpus=1)  # a non-ticking server: API only
    first = api.submit({"command": gated(tmp_path, "go", "sys.exit(0)\n")}, user="ana")["id"]
    others = [api.submit({"command": [sys.executable, "-c", "pass"]}, user="bob")["id"] for _ in range(3)]
    engine = subprocess.Popen([sys.executable, str(HERE / "engine_process.py"), db_url, str(tmp_path / "jobs"), "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                              env={**os.environ, "PYTHONPATH": str(HERE.parents[1])})
    try:
        wait_until(lambda: state_of(api, first) == "running", "the first job to run under the doomed engine")
        wrapper = api.store.get_job(first).handle
        assert wrapper is not None
        engine.send_signal(signal.SIGKILL)
        engine.wait(timeout=WAIT_S)
    finally:
        if engine.poll() is None:
            engine.kill()
        assert engine.stdout is not None
        engine.stdout.close()
    assert [state_of(api, j) for j in [first, *others]] == ["running", "pending", "pending", "pending"]
    if kill_job_too:
        os.killpg(int(wrapper["pgid"]), signal.SIGKILL)
        wait_until(lambda: gone(int(wrapper["pid"])), "the job's group to die")
    restarted = make_service(db_url, tmp_path, gpus=1, owner="engine-new")
    wait_until(lambda: restarted.engine.is_leader, "the new engine to take over the expired lease",
               tick=restarted.tick)
    if kill_job_too:
        job = restarted.get_job(first, user="ana")
        assert job["state"] == "lost" and "left no exit code" in job["message"]
    else:
        assert state_of(restarted, first) == "running"
        assert [e["action"] for e in restarted.audit(job_id=first, action="adopted")] == ["adopted"]
        (tmp_path / "go").touch()
        wait_until(lambda: state_of(restarted, first) == "succeeded", "the adopted job to finish",
                   tick=restarted.tick)
        assert restarted.get_job(first, user="ana")["exit_code"] == 0
    wait_until(lambda: all(state_of(restarted, j) == "succeeded" for j in others), "the queued jobs to run",
               tick=restarted.tick)
    assert len(restarted.list_jobs(user=None)) == 4  # nothing lost, nothing duplicated
    intervals = [r for r in restarted.store.usage_rows() if r.job_id == first]
    assert len(intervals) == 1 and intervals[0].ended_at is not None  # counted once across the restart
    report = check_integrity(restarted.store)
    assert report.ok, report.problems


def test_the_service_runs_on_the_event_loop_and_pushes_events(sqlite_db: str, tmp_path: Path) -> None:
    async def scenario() -> list[dict[str, Any]]:
        svc = make_service(sqlite_db, tmp_path, gpus=1, poll_interval_s=0.05)
        await svc.start()
        try:  # stopped however it ends: an engine left ticking runs on into later tests (s38-edges)
            sub = svc.subscribe()
            lease = svc.submit(lease_body(), user="ana")
            seen = []
            while not any(e["data"].get("state") == "running" for e in seen if e["type"] == "lease"):
                seen.append(await sub.get(timeout=WAIT_S))
            assert svc.status()["leader"] is True
            svc.cancel(lease["id"], user="ana")
            while not any(e["data"].get("state") == "cancelled" for e in seen if e["type"] == "lease"):
                seen.append(await sub.get(timeout=WAIT_S))
            sub.close()
        finally:
            await svc.stop()
        return seen

    events = asyncio.run(scenario())
    assert {e["type"] for e in events} == {"lease"}


def test_a_slow_subscriber_is_bounded_and_told_it_lagged() -> None:
    async def scenario() -> list[dict[str, Any]]:
        bus = EventBus(maxsize=3)
        sub = bus.subscribe()
        for i in range(10):
            bus.publish({"type": "job", "data": {"n": i}})
        await asyncio.sleep(0)
        assert sub.pending() == 3
        got = [await sub.get(timeout=1) for _ in range(4)]
        sub.close()
        return got

    got = asyncio.run(scenario())
    assert got == [{"type": "lagged", "data": {"dropped": 7}}, *({"type": "job", "data": {"n": n}} for n in (7, 8, 9))]


@pytest.mark.parametrize(
    "call, error",
    [
        pytest.param(lambda s: s.submit({"gpus": "two", "command": ["x"]}, user="ana"), ValidationError,
                     id="a bad gpu count is a validation error"),
        pytest.param(lambda s: s.list_jobs(user=None, state="flying"), ValidationError, id="an unknown state"),
        pytest.param(lambda s: s.logs("j-x", user="ana", offset=-1), ValidationError, id="a negative log offset"),
        pytest.param(lambda s: s.get_job("j-404", user="ana"), NotFoundError, id="an unknown job"),
        pytest.param(lambda s: s.audit(since="2026-01-01T00:00:00"), ValidationError, id="a naive timestamp"),
        pytest.param(lambda s: s.usage(by="color"), ValidationError, id="an unknown usage grouping"),
        pytest.param(lambda s: s.set_quotas({"quotas": [{"team": "ml", "guaranteed": 9}]}, actor="admin"),
                     ValidationError, id="guarantees above the GPUs that exist"),
        pytest.param(lambda s: s.set_quotas({"quota": []}, actor="admin"), ValidationError, id="an unknown quota field"),
    ],
)
def test_bad_requests_raise_errors_naming_the_field(sqlite_db: str, tmp_path: Path, call: Callable[[Any], Any],
                                                    error: type) -> None:
    svc = make_service(sqlite_db, tmp_path)
    with pytest.raises(error) as info:
        call(svc)
    assert info.value.field


def test_me_profiles_inventory_and_dryrun(sqlite_db: str, tmp_path: Path) -> None:
    from jupyter_sched.model import profiles_from_config

    svc = make_service(sqlite_db, tmp_path, gpus=2,
                       profiles=profiles_from_config({"pair": {"description": "two GPUs", "gpus": 2}}))
    lease = svc.submit({"profile": "pair"}, user="ana", kind="lease")
    svc.tick()
    inventory = svc.inventory()
    assert inventory["simulated"] is True
    assert sorted(inventory["allocations"]) == sorted(g["uuid"] for g in inventory["gpus"])
    me = svc.me("ana")
    assert me["in_use"] == {"gpus": 2.0, "jobs": 0, "leases": 1, "stopping": 0} and me["team"] == "default"
    assert svc.profiles() == [{"name": "pair", "description": "two GPUs", "defaults": {"gpus": 2}}]
    answer = svc.dryrun({"gpus": 1, "command": ["true"]}, user="bob")
    assert answer["fits"] is False and answer["reason"]["code"] == "WaitingForCapacity"
    assert svc.list_jobs(user="bob") == []  # a dry run stores nothing
    svc.cancel(lease["id"], user="ana")
    assert svc.dryrun({"gpus": 1, "command": ["true"]}, user="bob")["fits"] is True
    rows = svc.usage(by="user,kind")
    assert rows and rows[0]["user"] == "ana" and rows[0]["kind"] == "lease"
    assert timedelta(0) <= timedelta(seconds=rows[0]["gpu_seconds"])


def no_gpu_held_twice_at_once(store: Store) -> list[str]:
    """From the usage table: whole-GPU intervals on one GPU never overlap in time."""
    by_gpu: dict[str, list[Any]] = {}
    for row in store.usage_rows():
        by_gpu.setdefault(row.gpu_uuid, []).append(row)
    problems = []
    for gpu, rows in by_gpu.items():
        rows.sort(key=lambda r: r.started_at)
        for before, after in itertools.pairwise(rows):
            if before.ended_at is None or after.started_at < before.ended_at:
                problems.append(f"{gpu}: {before.job_id} and {after.job_id} overlap")
    return problems


def test_two_engines_ticking_concurrently_never_hold_one_gpu_twice(db_url: str, tmp_path: Path) -> None:
    """Real contention: both engines tick in their own threads while clients submit and cancel through both;
    halfway the leader dies (no resignation) and the other takes over after its lease expires."""
    import threading

    a = make_service(db_url, tmp_path, gpus=3, owner="engine-a", jobs_dir="a", lease_ttl_s=1.0)
    b = make_service(db_url, tmp_path, gpus=3, owner="engine-b", jobs_dir="b", lease_ttl_s=1.0)
    alive = {"engine-a": True, "engine-b": True}
    failures: list[BaseException] = []

    def run(svc: SchedulerService) -> None:
        try:
            while alive[svc.engine.owner_id]:
                svc.tick()
                time.sleep(0.01)
        except BaseException as exc:  # surfaced by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(svc,)) for svc in (a, b)]
    for thread in threads:
        thread.start()
    try:
        ids = []
        for step in range(30):
            server = (a, b)[step % 2]
            ids.append(server.submit(lease_body(1), user=f"u{step % 4}")["id"])
            if step % 3 == 1:
                running = server.list_jobs(user=None, state="running")
                if running:
                    server.cancel(running[0]["id"], user="admin", is_admin=True)
            if step == 15:
                leader = a.store.leader()
                assert leader is not None
                alive[leader.owner] = False  # the leader dies without resigning
            time.sleep(0.02)
        survivor = b if not alive["engine-a"] else a
        wait_until(lambda: survivor.store.leader().owner == survivor.engine.owner_id, "the takeover")
        for job_id in ids:
            if state_of(survivor, job_id) in ("running", "pending"):
                survivor.cancel(job_id, user="admin", is_admin=True)
    finally:
        alive.update({"engine-a": False, "engine-b": False})
        for thread in threads:
            thread.join(timeout=WAIT_S)
    assert not failures, failures
    assert no_gpu_held_twice_at_once(a.store) == []
    report = check_integrity(a.store)
    assert report.ok, report.problems
    assert sorted(j["id"] for j in a.list_jobs(user=None)) == sorted(ids)
    terms = [e["details"]["term"] for e in a.audit(action="leader_acquired")]
    assert len(terms) >= 2 and len(set(terms)) == len(terms)


def extension_settings(tmp_path: Path, url: str, **overrides: Any) -> dict[str, Any]:
    """The plain settings ``SchedApp.service_settings()`` hands to ``SchedulerService.from_config``."""
    settings: dict[str, Any] = {
        "db_url": url, "log_dir": str(tmp_path / "logs"), "inventory_source": "auto", "inventory_file": None,
        "simulated_gpus": 2, "simulated_gpu_model": "Simulated GPU 80GB", "simulated_gpu_memory_mib": 81920,
        "inventory_refresh_s": 30.0, "cycle_interval_s": 5.0,
        "quotas": [{"team": "default", "guaranteed": 1, "borrowing_limit": 1}],
        "profiles": {"pair": {"description": "two GPUs", "gpus": 2}}, "default_team": "default",
        "default_time_limit_s": 3600.0, "preemption_grace_s": 30.0, "time_zone": "UTC", "idle_threshold_percent": 5.0,
        "idle_window_s": 1800.0, "idle_grace_s": 600.0, "executor": "local", "stop_grace_s": 10.0,
    }
    settings.update(overrides)
    return settings


def test_from_config_builds_a_working_service_and_applies_configured_quotas_once(sqlite_db: str,
                                                                                  tmp_path: Path) -> None:
    svc = SchedulerService.from_config(extension_settings(tmp_path, sqlite_db))
    assert svc.inventory()["simulated"] is True and len(svc.inventory()["gpus"]) == 2
    assert svc.quotas()["quotas"] == [{"team": "default", "user": None, "gpu_model": "*", "guaranteed": 1.0,
                                       "borrowing_limit": 1.0}]
    job = svc.submit({"profile": "pair", "command": ["true"]}, user="ana")
    assert job["time_limit_s"] == 3600.0 and job["resources"]["gpus"] == 2
    again = SchedulerService.from_config(extension_settings(tmp_path, sqlite_db))  # a restart with the same config
    assert [e["actor"] for e in again.audit(action="quotas_changed")] == ["config"]
    with pytest.raises(ValidationError) as info:
        SchedulerService.from_config(extension_settings(tmp_path, sqlite_db, inventory_source="static"))
    assert info.value.field == "inventory_file"


def test_the_placement_policy_setting_reaches_every_cycle(sqlite_db: str, tmp_path: Path) -> None:
    svc = SchedulerService.from_config(extension_settings(tmp_path, sqlite_db, placement_policy="fgd-balanced"))
    assert svc.engine.profile.placement.fragmentation == "fgd-balanced"
    job = svc.submit({"gpus": 1, "command": ["true"]}, user="ana")
    svc.tick()
    assert state_of(svc, job["id"]) in ("running", "succeeded")
    admit = next(e for e in svc.audit(limit=20) if e["action"] == "admit" and e["job_id"] == job["id"])
    assert set(admit["details"]["scores"]) == {"FGD-Balanced"}  # the cycle scored with the policy
    assert SchedulerService.from_config(extension_settings(tmp_path, sqlite_db)).engine.profile.placement \
        .fragmentation == ""
    with pytest.raises(ValidationError) as info:
        SchedulerService.from_config(extension_settings(tmp_path, sqlite_db, placement_policy="tetris"))
    assert info.value.field == "placement_policy"


def test_a_node_too_wide_for_fgd_places_with_binpack_and_says_so(sqlite_db: str, tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    svc = SchedulerService.from_config(extension_settings(tmp_path, sqlite_db, placement_policy="fgd",
                                                          simulated_gpus=16))
    job = svc.submit({"gpus": 1, "command": ["true"]}, user="ana")
    with caplog.at_level("WARNING", logger="jupyter_sched.engine"):
        svc.tick()
        svc.tick()
    assert [r.getMessage() for r in caplog.records if "placement_policy" in r.getMessage()] == [
        "placement_policy 'fgd' is off: a node has more than 8 GPUs, mixed GPU models or MIG; "
        "placing with binpack until the inventory allows it"]  # once, not every cycle
    admit = next(e for e in svc.audit(limit=20) if e["action"] == "admit" and e["job_id"] == job["id"])
    assert set(admit["details"]["scores"]) == {"binpack", "topology"}


def test_pending_reasons_are_persisted_in_bounded_batches_and_served_fresh(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=1)
    svc.engine.max_reason_writes = 2
    blocker = svc.submit(lease_body(), user="ana")
    waiting = [svc.submit(lease_body(), user="bob")["id"] for _ in range(5)]
    svc.tick()
    assert state_of(svc, blocker["id"]) == "running"
    stored = [svc.store.get_job(j).job.reason for j in waiting]
    assert sum(r is not None for r in stored) == 2  # at most two rows written this cycle
    assert all(svc.get_job(j, user="bob")["reason"]["code"] == "WaitingForCapacity" for j in waiting)  # served fresh
    svc.tick()
    svc.tick()
    assert all(svc.store.get_job(j).job.reason is not None for j in waiting)
    assert [q["position"] for q in svc.queue(user="bob")[:5]] == [1, 2, 3, 4, 5]


def test_a_job_admitted_but_never_started_before_a_crash_is_requeued_not_lost(sqlite_db: str, tmp_path: Path) -> None:
    from dataclasses import replace as dc_replace

    from jupyter_sched.model import JobState
    from jupyter_sched.store import JobRecord

    svc = make_service(sqlite_db, tmp_path, gpus=1)
    job = svc.submit({"command": [sys.executable, "-c", "pass"]}, user="ana")
    # what a crash right after the admission commit leaves behind: admitted, usage open, no process
    record = svc.store.get_job(job["id"])
    admitted = record.job.transition(JobState.ADMITTED, allocation=Allocation("n1", ("GPU-sim-n1-0",)),
                                     admitted_at=record.job.submitted_at, attempts=1)
    with svc.store.transaction() as tx:
        tx.update_job(dc_replace(record, job=admitted))
        tx.open_usage(job_id=job["id"], attempt=1, user="ana", team="default", kind="training",
                      gpus=[("GPU-sim-n1-0", "Simulated GPU 80GB", 1.0)], started_at=admitted.submitted_at)
    assert isinstance(record, JobRecord)
    svc.tick()
    assert [e["action"] for e in svc.audit(job_id=job["id"], action="requeued")] == ["requeued"]
    assert svc.get_job(job["id"], user="ana")["not_before"] is None  # never started: no backoff penalty
    wait_until(lambda: state_of(svc, job["id"]) == "succeeded", "the requeued job to run", tick=svc.tick)
    assert check_integrity(svc.store).ok


def test_a_worker_bigger_than_every_node_is_refused_at_submit_naming_cpu(sqlite_db: str, tmp_path: Path) -> None:
    """A CPU or host-memory request no node can hold is a 422 at submit, like too many GPUs, not a forever-pending job."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("nodes:\n  - {name: a, gpu_count: 2, gpu_model: A100, gpu_memory: 80GiB, cpus: 16, memory: 64GiB}\n"
                     "  - {name: b, gpu_count: 2, gpu_model: A100, gpu_memory: 80GiB, cpus: 64, memory: 256GiB}\n")
    svc = SchedulerService.from_config(extension_settings(tmp_path, sqlite_db, inventory_source="static",
                                                          inventory_file=str(nodes)))
    with pytest.raises(UnschedulableError) as info:
        svc.submit({"gpus": 1, "cpu": 500, "command": ["true"]}, user="ana")
    assert info.value.field == "cpu" and "500 CPU cores (the largest node has 64 CPU cores)" in str(info.value)
    with pytest.raises(UnschedulableError) as info:
        svc.submit({"gpus": 0, "memory": "1TiB", "command": ["true"]}, user="ana")
    assert info.value.field == "memory" and "(the largest node has 256 GiB)" in str(info.value)
    with pytest.raises(UnschedulableError) as info:   # CPU fits; the field named is the one to change
        svc.submit({"gpus": 1, "cpu": 8, "memory": "2048GiB", "command": ["true"]}, user="ana")
    assert info.value.field == "memory" and info.value.hint == \
        "ask for at most cpu 64 and memory 256GiB per worker"
    # a worker reserves at most its GPUs' part of a GPU node's CPUs (red38 R4): 1 GPU of b's 2, 32 of its 64 cores
    with pytest.raises(UnschedulableError) as info:
        svc.submit({"gpus": 1, "workers": 2, "cpu": 40, "command": ["true"]}, user="ana")
    assert info.value.field == "cpu" and "at most 32 CPU cores" in str(info.value), info.value
    assert svc.list_jobs(user=None) == []   # nothing refused was stored
    # b's part (32), or this host's cores where fewer: local jobs run on this host (session 40, newuser39 n10)
    fits = svc.submit({"gpus": 1, "cpu": min(32, os.cpu_count() or 1), "command": ["true"]}, user="ana")
    assert fits["state"] == "pending"


def test_a_queue_default_time_limit_is_given_at_admission_and_stops_the_job(sqlite_db: str, tmp_path: Path) -> None:
    # case 033 variant B: a job without a limit gets its queue's default (30 s here) and is stopped
    # there; the admission record carries the predicted start and the limit for the ETA accuracy log.
    from jupyter_sched.queues.limits import TimeLimitRule
    from jupyter_sched.scheduling import SchedulingProfile
    clock = ManualClock(T0)
    svc = make_service(sqlite_db, tmp_path, clock=clock,
                       scheduling_profile=SchedulingProfile(time_limits=(TimeLimitRule(default_s=30),)))
    job = svc.submit({"command": gated(tmp_path, "never")}, user="ana")
    wait_until(lambda: state_of(svc, job["id"]) == "running", "running", tick=svc.tick)
    (admit,) = [e for e in svc.store.list_events(job_id=job["id"]) if e.action == "admit"]
    assert (admit.details["time_limit_s"], admit.details["time_limit_source"]) == (30, "queue default; none given")
    assert admit.details["predicted_start"] is not None and admit.details["waited_s"] == 0
    clock.advance(31)
    wait_until(lambda: state_of(svc, job["id"]) == "failed", "the queue's time limit", tick=svc.tick)
    assert "time limit of 30s (queue default; none given) exceeded" in svc.get_job(job["id"], user="ana")["message"]


def test_newuser18_n7_a_preempted_job_says_when_and_by_whom_in_its_reason_details_and_log(
        sqlite_db: str, tmp_path: Path) -> None:
    """New user 18, N7: a requeued job's reason said who preempted it but never when, and its log's
    one line said "preempted: preempted to …" — no time, no who, the verb twice."""
    svc = make_service(sqlite_db, tmp_path, gpus=1, priority_grants={"users": {"bob": ["high"]}})
    low = svc.submit({"priority": "low", "command": gated(tmp_path, "never")}, user="ana")
    wait_until(lambda: state_of(svc, low["id"]) == "running", "the low job to run", tick=svc.tick)
    high = svc.submit({"priority": "high", "command": gated(tmp_path, "never-high")}, user="bob")
    wait_until(lambda: state_of(svc, high["id"]) == "running", "the high job to run", tick=svc.tick)
    wait_until(lambda: state_of(svc, low["id"]) == "pending", "the low job to be requeued", tick=svc.tick)
    svc.tick()
    reason = svc.get_job(low["id"], user="ana")["reason"]
    assert reason["details"]["preempted_by"] == high["id"] and reason["details"]["preempted_at"], reason
    svc.cancel(high["id"], user="bob")
    from dataclasses import replace as _replace

    from jupyter_sched.engine.stops import stop_words

    record = svc.store.get_job(low["id"])
    job = _replace(record.job, message="preempted to return borrowed quota to teama", preempted_by="l-9")
    line = stop_words(_replace(record, job=job, stop_intent="preempt", stop_requested_at=T0))
    assert line == f"preempted by l-9 at {T0:%H:%M:%S} UTC to return borrowed quota to teama (it waits in the queue " \
                   "again)", line  # the line the job's log ends with
