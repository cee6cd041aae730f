"""Chaos run: submissions, cancels and lease requests against a server killed with SIGKILL.

:func:`run_chaos` drives one :class:`~tests.reliability.harness.EmbeddedServer` with a few
client threads (seeded RNG) while the main thread kills the server at random moments and
restarts it on the same store; then it lets the last server settle and collects what the store
holds. The test (``test_chaos.py``) asserts on the :class:`ChaosOutcome`; the load benchmark
prints its figures.

What "accepted" means: the API answered 2xx. A request that got no answer (the server died
mid-request) is *unknown*: its job may or may not exist, but at most once.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from jupyter_sched.store import Store, check_integrity

from .harness import EmbeddedServer, overlapping_allocations, wait_until

TERMINAL = {"succeeded", "failed", "cancelled", "lost", "rejected"}


@dataclass
class Call:
    """One request of the run: what was asked and what came back (status None: no answer)."""

    op: str
    name: str
    target: str | None
    status: int | None
    body: Any = None


@dataclass
class ChaosOutcome:
    """What a chaos run saw and what the store held afterwards.

    Attributes:
        kills: SIGKILLs delivered (each followed by a successful restart).
        calls: every request made.
        jobs: the final job list (``GET jobs?all=true`` of the last server), by id.
        integrity_problems: :func:`check_integrity` findings on the final store.
        double_allocations: moments a GPU was held above 1 GPU, from the usage intervals.
        adopted: audit records of running jobs re-adopted after a restart.
        settled_while_down: jobs that ended while no server ran, settled from their exit files
            by the next leader (the other way a running job survives a crash).
        leader_terms: leader leases taken over the run.
        seconds: wall time of the run.
    """

    kills: int = 0
    calls: list[Call] = field(default_factory=list)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)
    integrity_problems: tuple[str, ...] = ()
    double_allocations: list[str] = field(default_factory=list)
    adopted: int = 0
    settled_while_down: int = 0
    leader_terms: int = 0
    seconds: float = 0.0

    @property
    def accepted(self) -> dict[str, Call]:
        """Accepted submissions (2xx POST) by job id."""
        return {c.body["id"]: c for c in self.calls
                if c.op in ("submit", "lease") and c.status is not None and 200 <= c.status < 300}

    @property
    def unknown_names(self) -> set[str]:
        """Names of submissions that got no answer."""
        return {c.name for c in self.calls if c.op in ("submit", "lease") and c.status is None}

    @property
    def server_errors(self) -> list[Call]:
        """Answers with a 5xx status."""
        return [c for c in self.calls if c.status is not None and c.status >= 500]

    def problems(self) -> list[str]:
        """Every broken promise, one sentence each (empty: the run kept them all)."""
        out = [f"{c.op} {c.name}: {c.status} {c.body}" for c in self.server_errors]
        accepted = self.accepted
        out += [f"accepted {job_id} ({c.name}) is missing" for job_id, c in accepted.items() if job_id not in self.jobs]
        names: dict[str, list[str]] = {}
        for job in self.jobs.values():
            names.setdefault(job["name"], []).append(job["id"])
        out += [f"{name} exists {len(ids)} times: {ids}" for name, ids in names.items() if len(ids) > 1]
        accepted_names = {c.name for c in accepted.values()}
        out += [f"{job['id']} ({job['name']}) was never accepted nor left unanswered" for job in self.jobs.values()
                if job["name"] not in accepted_names | self.unknown_names]
        for c in self.calls:
            if c.op == "cancel" and c.status is not None and 200 <= c.status < 300:
                state = self.jobs.get(c.target or "", {}).get("state")
                if state not in TERMINAL:
                    out.append(f"cancel of {c.target} was accepted but it is {state}")
                elif c.body.get("state") == "cancelled" and state != "cancelled":
                    out.append(f"{c.target} was answered cancelled but ended {state}")
        for job in self.jobs.values():
            if job["kind"] != "lease" and job["state"] not in TERMINAL:
                out.append(f"{job['id']} never settled: {job['state']}")
            if job["state"] == "lost" and not job.get("message"):
                out.append(f"{job['id']} is lost without a reason")
        out += list(self.integrity_problems) + self.double_allocations
        return out


def _duration_s(rng: random.Random, *, early: bool) -> float:
    """A job's run time, seconds: mostly short; some of a client's first jobs (``early``) outlive a
    restart and the old leader's lease (15 s), so a later leader must re-adopt them — early, so
    the run does not wait for them at its end."""
    roll = rng.random()
    if early and roll > 0.8:
        return rng.uniform(18, 24)
    return rng.uniform(0.2, 2.5) if roll < 0.75 else rng.uniform(5, 10)


def _driver(server: EmbeddedServer, rng: random.Random, tag: str, calls: list[Call], lock: threading.Lock,
            stop: threading.Event, max_submits: int) -> None:
    """One client: submit short jobs, request leases, cancel what it got (never waits for the server)."""
    mine: list[str] = []
    n = submitted = 0
    # one client for the run, a new connection per request as a bare httpx.request makes (no keep-alive: a
    # request on a connection the killed server left would be sent-but-unanswered, not refused), without a
    # client and TLS context built per request (~25 ms of CPU each, s41 speed)
    with httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), timeout=10) as client:
        while not stop.is_set():
            n += 1
            roll = rng.random()
            name = f"{tag}-{n}"
            if submitted >= max_submits and not mine:
                time.sleep(0.1)
                continue
            if submitted < max_submits and (roll < 0.5 or not mine):
                op, method, path = "submit", "POST", "jobs"
                body: Any = {"gpus": rng.choice([1, 1, 2]), "name": name,
                             "command": ["sleep", f"{_duration_s(rng, early=submitted < 4):.2f}"]}
            elif submitted < max_submits and roll < 0.65:
                op, method, path, body = "lease", "POST", "leases", {"gpus": 1, "name": name, "kernel_id": f"k-{name}"}
            else:
                target = mine.pop(rng.randrange(len(mine)))
                op, method, path, body = "cancel", "DELETE", f"jobs/{target}", None
            target = path.split("/")[1] if op == "cancel" else None
            try:
                r = client.request(method, server.api + path, json=body, headers=server.headers())
                status, payload = r.status_code, r.json() if r.content else None
            except httpx.ConnectError:  # nothing was sent: the server is down; try again soon
                if op == "cancel":
                    mine.append(target or "")
                time.sleep(0.2)
                continue
            except (httpx.HTTPError, ValueError):  # sent, but no answer: the server died meanwhile
                status, payload = None, None
            if op != "cancel" and status != 400:
                submitted += 1  # answered or not: it may exist, it counts against the budget
            if op != "cancel" and status == 201:
                mine.append(payload["id"])
            with lock:
                calls.append(Call(op=op, name=name, target=target, status=status, body=payload))
            time.sleep(rng.uniform(0.0, 0.15))


def run_chaos(workdir: Path, *, db_url: str | None = None, kills: int = 5, seed: int = 20, clients: int = 3,
              max_submits: int = 12, up_s: tuple[float, float] = (1.0, 3.5), settle_timeout_s: float = 90.0) -> ChaosOutcome:
    """Run the chaos scenario and return what happened (see module docstring).

    Args:
        workdir: a fresh temporary directory (server dirs, job logs, SQLite file).
        db_url: the store; default a SQLite file in ``workdir``.
        kills: SIGKILLs to deliver; each lands ``uniform(*up_s)`` seconds after the server answered.
        seed: RNG seed (kill times and client behaviour).
        clients: client threads.
        max_submits: submissions (jobs and leases) per client, so the queue stays short.
        settle_timeout_s: how long the last server may take to lead and finish the batch jobs.
    """
    rng = random.Random(seed)
    started = time.monotonic()
    server = EmbeddedServer.start(workdir, db_url=db_url, simulated_gpus=4)
    outcome = ChaosOutcome()
    lock, stop = threading.Lock(), threading.Event()
    threads = [threading.Thread(target=_driver, args=(server, random.Random(seed * 100 + i), f"c{i}", outcome.calls,
                                                      lock, stop, max_submits), daemon=True) for i in range(clients)]
    try:
        for t in threads:
            t.start()
        for _ in range(kills):
            time.sleep(rng.uniform(*up_s))
            server.kill()
            outcome.kills += 1
            time.sleep(rng.uniform(0.0, 0.5))  # clients meet a dead server for a moment
            server.restart()
        time.sleep(rng.uniform(*up_s))
        stop.set()
        for t in threads:
            t.join(timeout=30)
        # The last server takes the lease once the killed leader's expires, adopts what still runs,
        # and finishes every batch job (all are short sleeps). Leases live until released: release
        # them so queued jobs get their GPUs.
        with server.client() as c:
            for lease in c.get("leases", params={"all": "true", "state": "pending,admitted,running"}).json():
                r = c.delete(f"leases/{lease['id']}")
                outcome.calls.append(Call(op="cancel", name="teardown", target=lease["id"], status=r.status_code,
                                          body=r.json()))
            def settled() -> bool:
                jobs = c.get("jobs", params={"all": "true"}).json()
                return all(j["state"] in TERMINAL for j in jobs if j["kind"] != "lease")

            wait_until(settled, "the batch jobs to settle after the last restart", timeout_s=settle_timeout_s,
                       poll_s=0.5)
            outcome.jobs = {j["id"]: j for j in c.get("jobs", params={"all": "true"}).json()}
        outcome.adopted = len(server.audit(action="adopted"))
        outcome.settled_while_down = sum(1 for j in outcome.jobs.values()
                                         if "while the server was down" in (j.get("message") or ""))
        outcome.leader_terms = server.leads()
    finally:
        stop.set()
        server.kill()
    store = Store(server.db_url)
    try:
        outcome.integrity_problems = check_integrity(store).problems
        outcome.double_allocations = overlapping_allocations(store.usage_rows())
    finally:
        store.close()
    outcome.seconds = time.monotonic() - started
    return outcome
