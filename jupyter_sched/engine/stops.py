"""Stop reconciler: carry out stop intents (cancel, time limit, preemption, idle reclaim).

The stored intent is the job row's ``stop_intent``, written by whoever asked (the API for a
cancel, the decision transaction for a preemption or reclaim, this module for a time limit).
Each tick, for every job the executor runs whose intent was not sent in this term, the
reconciler checks the leader lease (a deposed leader stops nothing) and sends the stop; the
executor runs the plan (checkpoint signal, SIGTERM, SIGKILL after the grace) and the end arrives
later as an executor event (:mod:`.observe`).

A stop that raises (a Kubernetes 5xx, a permission error) is retried with exponential backoff
and jitter to a cap, and the job says so; it never stops the other stops or the cycle. A
released lease has nothing to stop and ends at once — except a lease lent to a running job
(``parent_job_id``) whose GPU a process of that job still holds open: a devices cgroup denies new
opens only, so the lease stays running (its GPU held, given to nobody else) until the job's
processes close it, and past the stop grace those processes are killed, the job's others going on
(red team 17, R2). A process of the owner's account outside the job that holds it (an fd passed on,
a mapping) keeps it held too, named with the words to end it, and is never killed (red team 18, R6).
Where telemetry lists each GPU's processes by pid (NVML's compute processes, as ``nvidia-smi``
shows them, of every account), any released lease — a kernel's too — stays held while a process no
other holder of the GPU owns still has a context on it: the kernel after ``%gpu release``, or a
process of another account an fd was passed to, which no scan of the owner's processes finds.
Held only by processes of OTHER accounts, a released lease waits at most the stop grace: then it
ends (charged to nobody from then; audited ``lease_outside_process`` with their pids and accounts)
and the GPU, still holding their memory, stays out of placement as used outside the scheduler
(red team 19, R9: another account's process pinned the owner's lease with no time limit).
A lease revoked by idle reclaim (intent ``idle``) whose kernel is still on the GPU: its kernel is
shut down or the GPU held, per the admin's ``idle_kernel_action`` (:mod:`.idle_kernels`).
A lease ended — idle reclaim with ``shutdown``, a preemption, a release by anyone, its owner too —
whose owner's processes are still on the GPU (a child its kernel started in its own session outlives
the kernel) does not wait for them for ever: past the kernel-shutdown wait (idle), at once when the
owner's server stopped, or past the stop grace (otherwise), those of the OWNER's account are sent
SIGTERM, then SIGKILL :data:`~.leftovers.TERM_WAIT_S` later (audited ``lease_drain_killed``; red team
25, R2: a setsid child kept the GPU from everyone, past reclaims and guarantees); one appearing after
that gets SIGKILL at once, in bounded rounds (verify 26, V6: a re-spawning helper). Another account's or
root's process is never signalled. The owner's own release sweeps too (verify 26, V7: a ``setsid`` child
left by ``%gpu release`` held the GPU for ever), as a batch system's epilog does whoever ended the job.
The executor's probe runs off the engine thread (:mod:`.drainscan`; red team 19, R7).
An admitted job not started yet is settled by the start reconciler (:mod:`.start`).
"""

from __future__ import annotations

import logging
import os
import pwd
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

from ..backoff import Retries
from ..errors import NotLeaderError
from ..executors.base import Executor
from ..model import Job, JobState
from ..model.horizon import capped
from ..model.units import clock_text
from ..store import JobRecord
from ..wording.reasons import JUST_STARTED, NOT_AN_ATTEMPT
from ..wording.time_limits import stopped_limit_text
from .clock import Clock
from .drainscan import PENDING, Background
from .failures import classify
from .idle_kernels import IdleKernels
from .leadership import Leadership
from .leftovers import Leftovers, owned
from .transitions import JobWriter, just_started

__all__ = ["SAMPLE_WAIT_S", "GpuProcesses", "StopReconciler", "lease_held_message", "lease_release_message",
           "preempted_message",
           "stop_words"]

log = logging.getLogger(__name__)

def _account_of_service() -> str:
    """This server's own account name (embedded kernels run as it: theirs are the lease owner's)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


GpuProcesses = Callable[..., "dict[str, list[tuple[int, str]]] | None"]
"""``gpu_processes(uuids, *, leaving=lease id, since=release time)``: see
:meth:`~.telemetry.TelemetryMonitor.gpu_processes`."""

_SERVICE_ACCOUNT = _account_of_service()

SAMPLE_WAIT_S = 30.0
"""Longest wait (seconds) after a lease's release for a GPU sample that lists the GPU's processes;
past it (telemetry stalled) the lease ends on what the executor's probe says: a stalled collector
never keeps a lease held."""


def lease_held_message(job: Job) -> str:
    """What a granted lease says: bound to its kernel, or (no ``kernel_id``) to nothing but its
    release — in hub mode also to its owner having a running server (jupyter_sched.hub.liveness)."""
    if job.spec.kernel_id:
        return "GPUs bound to the kernel"
    if job.spec.released_at_exit:  # new user 16, N1
        return "GPUs held by a kernel this server did not start; released when it exits"
    return "GPUs held by the lease (no kernel is bound to it)"


def preempted_message(message: str | None) -> str:
    """``preempted: GPUs were needed elsewhere``, or the preemption's own message when it already
    opens with the verb (``preempted to return borrowed quota to ops``): the word once (hubadmin23
    A4: a lease's row read "preempted: preempted to …")."""
    said = message or "GPUs were needed elsewhere"
    return said if said.startswith("preempted") else f"preempted: {said}"


def lease_release_message(record: JobRecord) -> str:
    """What a lease ended by a stop intent says (a lease has no work to stop: it just ends)."""
    if record.stop_intent == "preempt":
        return preempted_message(record.job.message)
    if record.stop_intent == "budget":  # its safe budget is spent (red30 R5): the words the core gave it
        return record.job.message or "released: its GPU-hour budget is spent"
    return f"released by {record.stop_actor or 'user'}"


def stop_words(record: JobRecord, settle_s: float | None = None) -> str:
    """Why a job is being stopped, as the last line of its log says it (issue 20, F15: a job ended
    by its time limit or a cancel had a log that just stopped): ``cancelled by alice``,
    ``stopped: time limit 1m reached``, ``preempted: …`` (it goes back to the queue). A preemption or
    reclaim asked within ``settle_s`` of its start (:func:`~.transitions.just_started`) says so and that it
    is no attempt: ``stopped just after it started: preempted by … ; it is back in the queue, this does not
    count as an attempt`` (new user 24, N1). ``settle_s`` None: not looked at."""
    job, intent = record.job, record.stop_intent
    if intent in ("preempt", "idle") and settle_s is not None and just_started(record, settle_s):
        said = stop_words(record).removesuffix(" (it waits in the queue again)")
        return f"{JUST_STARTED}: {said}; {NOT_AN_ATTEMPT}"
    if intent == "timeout":
        return f"stopped: time limit {stopped_limit_text(job.spec.time_limit_s or 0, job.spec.time_limit_source)} reached"
    if intent == "cancel":
        return f"cancelled by {record.stop_actor or 'user'}"
    if intent == "preempt":  # who and when, the verb once (new user 18, N7: "preempted: preempted to …")
        said = job.message or ""
        rest = (said.removeprefix("preempted") if said.startswith("preempted")
                else f": {said or 'GPUs were needed elsewhere'}")
        by = f" by {job.preempted_by}" if job.preempted_by and not rest.startswith(" by ") else ""
        asked = record.stop_requested_at  # said as of then: the log's last line is written at the stop
        at = f" at {clock_text(asked, asked, seconds=True)}" if asked else ""
        return f"preempted{by}{at}{rest} (it waits in the queue again)"
    if intent == "idle":
        return f"reclaimed while idle: {job.message} (it waits in the queue again)"
    if intent == "idle_stop":
        return f"stopped while idle: {job.message}"
    if intent == "budget":
        return job.message or "released: its GPU-hour budget is spent"
    return f"stopped ({intent})"


class StopReconciler:
    """Stops sent to the executor in this engine's term (see module docstring).

    Args:
        executor: runs the stop plans.
        writer: job row writes.
        leadership: checked before every stop.
        clock: time source.
        retries: per-job retry state of failed stops.
        grace_s: SIGTERM→SIGKILL grace for cancels and time limits, seconds.

    Attributes:
        sent: ids of the jobs whose stop was sent in this term (not sent twice).
        plans: ``(grace_s, checkpoint_signal)`` decided with a preemption or reclaim, by job id,
            used instead of the defaults when its stop is sent.
    """

    def __init__(self, executor: Executor, writer: JobWriter, leadership: Leadership, clock: Clock, *,
                 retries: Retries, grace_s: float) -> None:
        self.executor = executor
        self.writer = writer
        self.leadership = leadership
        self.clock = clock
        self.retries = retries
        self.grace_s = grace_s
        self.sent: set[str] = set()
        self.plans: dict[str, tuple[float, bool]] = {}
        self.draining: dict[str, list[int]] = {}
        """Released leases waiting for processes to free their GPU: the pids said (``[-1]``: a sample awaited)."""
        self.scans: Background[dict[str, list[int]]] = Background("lease-drain-scan")
        """The executor's probes of which processes hold a released lent lease's GPU, run off the
        engine thread (red team 19, R7: their cost is the owner's to grow)."""
        self.ending: dict[str, str] = {}
        """Words a lease's end adds to its release message (:meth:`_end_outside`)."""
        self.gpu_processes: GpuProcesses | None = None
        """Where each GPU's processes are read (the telemetry monitor's
        :meth:`~.telemetry.TelemetryMonitor.gpu_processes` when it lists them: NVML, not a simulation)."""
        self.ends = Leftovers(writer, self._say)
        """Leases whose owner's leftover processes are being ended (red team 25, R2)."""
        self.idle_kernels = IdleKernels(writer.store, writer.publish)
        """What is done about the kernel of an idle-reclaimed lease still on its GPU (:mod:`.idle_kernels`)."""

    def plan(self, job_id: str, *, grace_s: float, checkpoint_signal: bool) -> None:
        """Remember how a decided stop is to be delivered (sent by the next :meth:`reconcile`)."""
        self.plans[job_id] = (grace_s, checkpoint_signal)

    def grace_of(self, record: JobRecord) -> float | None:
        """The SIGTERM→SIGKILL grace of ``record``'s stop — its plan's, else the default for cancels and
        time limits — for the core's ETAs (``Snapshot.stop_grace_s``); None when no stop was asked."""
        if record.stop_intent is None:
            return None
        return self.plans.get(record.job.id, (self.grace_s, False))[0]

    def _still_open(self, record: JobRecord, now: datetime) -> bool:
        """Whether a released lease must stay held (module docstring): a process of the job it was
        lent to holds its GPU's device open (the executor's probe), or — where telemetry lists each
        GPU's processes (NVML) — any process still has a context on it that no other holder of the
        GPU owns: its kernel after ``%gpu release``, or a process of another account an fd was passed
        to (red team 18, R6), which no scan of the owner's processes finds. Past the stop grace from
        the release, the lent job's own holders are killed (audited ``lease_drain_killed``); no other
        process is: the lease stays held, said with what it waits for and since when. The lease ends
        at the first pass that finds the GPU free."""
        job = record.job
        if job.allocation is None:
            return False
        uuids = job.allocation.all_gpu_uuids()
        released = record.stop_requested_at or now
        held: dict[str, set[int]] = {}
        parent = job.spec.parent_job_id
        probe = getattr(self.executor, "gpus_open", None)
        probed: set[int] = set()
        if parent and probe is not None:
            try:  # off the engine thread: its cost grows with the owner's processes and mappings (red team 19, R7)
                answer = self.scans.result(job.id, lambda: probe(parent, uuids))
            except Exception:  # the probe is the executor's: never keep a lease for its failure
                log.exception("lease %s: reading which processes of job %s hold its GPUs failed", job.id, parent)
                answer = {}
            if answer is PENDING:
                self._say(job, f"releasing: checking which processes of job {parent} and of {job.spec.user}'s account "
                               f"still hold GPU {', '.join(uuids)} open (released at "
                               f"{clock_text(released, now, seconds=True)}; the lease stays held, counted as "
                               f"this lease's, until the scan ends — the more processes and mappings, the longer)",
                          [-2])
                return True
            assert isinstance(answer, dict)
            for uuid, found in answer.items():
                held.setdefault(uuid, set()).update(found)
                probed.update(found)
        accounts: dict[int, str] = {}
        if self.gpu_processes is not None and uuids:
            try:
                seen = self.gpu_processes(uuids, leaving=job.id, since=released)
            except Exception:  # telemetry's failure never keeps a lease either
                log.exception("lease %s: reading the processes on its GPUs failed", job.id)
                seen = {}
            if seen is None and now < released + timedelta(seconds=SAMPLE_WAIT_S):
                self._say(job, f"releasing: checking that no process still uses GPU {', '.join(uuids)} (the first "
                               f"GPU sample after the release, within {SAMPLE_WAIT_S:g} s)", [-1])
                return True
            for uuid, found in (seen or {}).items():
                held.setdefault(uuid, set()).update(pid for pid, _ in found)
                accounts.update(found)
        if not held:
            return False
        pids = sorted({pid for found in held.values() for pid in found})
        gpus = ", ".join(sorted(held))
        mine = {job.spec.user, _SERVICE_ACCOUNT}
        foreign = [p for p in pids if p not in probed and accounts.get(p) not in (None, "unknown account", *mine)]
        due = released + timedelta(seconds=self.grace_s)
        if foreign and len(foreign) == len(pids) and now >= due:  # red team 19, R9: never the owner's cost
            self._end_outside(job, gpus, foreign, accounts, released)
            return False
        if not parent:
            mine_left = owned(pids, accounts, job.spec.user)
            ending = self._end_due(record, released, now)
            end = self.ends.get(job.id)
            if ending is not None and now >= ending[0] and (mine_left or (end is not None and not end.killed)):
                words = self.ends.end(job, gpus, mine_left, accounts, now, ending[1])  # red team 25, R2
                if words:
                    self.ending[job.id] = words
                return True
            if record.stop_intent == "idle" and foreign != pids:  # its kernel, not another account's
                self.idle_kernels.held(record, gpus, pids, accounts, now, self._say)
                return True
            self._say_kernel_held(job, gpus, pids, accounts, released, due if foreign == pids else None,
                                  ending[0] if ending is not None and mine_left and end is None else None)
            return True
        members = getattr(self.executor, "job_pids", None)
        group = members(parent) if members is not None else set(probed)
        inside, outside = [p for p in pids if p in group], [p for p in pids if p not in group]
        if now < due:
            self._say_held(job, parent, gpus, inside, outside, f"at most until {clock_text(due, now, seconds=True)}, "
                           "when they are killed", accounts)
            return True
        kill = getattr(self.executor, "kill_pids", None)
        killed = kill(parent, inside) if kill is not None and inside else []
        if killed:
            words = (f"released: process(es) {', '.join(map(str, killed))} of job {parent} held GPU {gpus} open "
                     f"{self.grace_s:g} s after the lease's release and were killed; the job's other processes go on")
            self.writer.say(job.id, words)
            self.writer.audit(job, "lease_drain_killed", words, {"parent_job_id": parent, "pids": killed,
                                                                  "gpu_uuids": sorted(held)})
        if outside:  # never killed here: not the job's (a reused pid could be anyone's); its owner or an admin ends it
            self._say_held(job, parent, gpus, [], outside, "", accounts)
        return True

    def _end_due(self, record: JobRecord, released: datetime, now: datetime) -> tuple[datetime, str] | None:
        """When the owner's processes left on the GPU of ``record``'s lease (bound to no job) are ended,
        and why (red team 25, R2): an idle reclaim's per :meth:`.idle_kernels.IdleKernels.end_due`; a
        lease taken back — preempted, or released by anyone, its owner too (verify 26, V7: a ``setsid``
        child left on the GPU by its owner's own release held it for ever) — after its stop grace."""
        if record.stop_intent == "idle":
            due = self.idle_kernels.end_due(record, now)
            return None if due is None else (due[0], f"reclaimed while idle: {due[1]}")
        job = record.job
        if record.stop_intent == "preempt":  # (its message is the drain's by now: not repeated)
            why = "preempted" + (f" by {job.preempted_by}" if job.preempted_by else "")
        elif record.stop_intent == "cancel":
            why = f"released by {record.stop_actor or job.spec.user}"
        else:
            return None
        return released + timedelta(seconds=self.grace_of(record) or 0.0), why

    def _unseen(self, job: Job) -> str:
        """What a lent lease's end could not check, said with it: without a GPU process list (NVML
        telemetry) only the job's and its owner's processes were scanned, so a process of another
        account an fd was passed to would go unseen (red team 18, R6: the server does not scan
        every account's processes — it may not run as root). "" when nothing is left unsaid."""
        if not job.spec.parent_job_id or self.gpu_processes is not None:
            return ""
        return (f"; checked: the processes of job {job.spec.parent_job_id} and of {job.spec.user}'s account — a "
                "process of another account still using the GPU is not visible to this server (it reads no GPU "
                "process list; an admin's c.SchedApp.telemetry_source = 'nvml' makes it read one)")

    def _say(self, job: Job, words: str, said: list[int]) -> bool:
        """Write ``words`` as the lease's message once per ``said`` (the pids it names); False when said."""
        if self.draining.get(job.id) == said:
            return False
        self.draining[job.id] = said
        self.writer.say(job.id, words)
        return True

    def _end_outside(self, job: Job, gpus: str, pids: list[int], accounts: dict[int, str], released: datetime) -> None:
        """The released lease ``job`` is held past the stop grace only by processes of OTHER accounts
        (red team 19, R9: one of them could pin the owner's lease, quota and GPU-hours for as long as
        it lived, and the owner cannot end it): the lease ends — charged to nobody from here — and the
        GPU, which those processes still hold memory on, is left out of placement as used outside
        the scheduler (the inventory's "blocked: unmanaged process") until they end. Audited
        ``lease_outside_process`` with the pids and their accounts, for an admin."""
        named = ", ".join(f"{pid} ({accounts.get(pid, 'unknown account')})" for pid in pids)
        words = (f"; process(es) {named} of another account still have a context on GPU {gpus} "
                 f"{self.grace_s:g} s after the release at {clock_text(released, self.clock.now(), seconds=True)}: the "
                 f"lease ended (not charged to {job.spec.user} from then), and the GPU is given to nobody while they "
                 f"use it (used outside the scheduler; an admin ends them)")
        self.ending[job.id] = words
        self.writer.audit(job, "lease_outside_process", "released" + words,
                          {"pids": pids, "accounts": {str(p): accounts.get(p, "unknown account") for p in pids},
                           "gpu_uuids": gpus.split(", "), "grace_s": self.grace_s})

    def _say_kernel_held(self, job: Job, gpus: str, pids: list[int], accounts: dict[int, str],
                         released: datetime, until: datetime | None = None, ends_at: datetime | None = None) -> None:
        """Say (and audit ``lease_draining``) that a released lease bound to no job stays held: its
        kernel — or whichever process, of any account — still has a context on the GPU (new user 18
        leftover: the GPU was given to the next user under a live CUDA context). Nothing is killed
        here: the lease ends when the process frees the GPU (exits, or its kernel restarts); a lease
        taken back from its owner says when their processes are ended (``ends_at``: :class:`~.leftovers.Leftovers`)."""
        named = ", ".join(f"{pid} ({accounts.get(pid, 'unknown account')})" for pid in pids)
        now = self.clock.now()
        if until is not None:  # only other accounts' processes: bounded (red team 19, R9)
            words = (f"releasing: process(es) {named} of another account still have a context on GPU {gpus} (the "
                     f"GPU's process list); released at {clock_text(released, now, seconds=True)}, the lease "
                     f"ends at the latest at {clock_text(until, now, seconds=True)} — the GPU then stays out "
                     f"of placement, charged to nobody, while they use it")
        elif ends_at is not None:  # taken back from its owner: their processes are ended (red team 25, R2)
            words = (f"releasing: process(es) {named} still have a context on GPU {gpus} (the GPU's process list); "
                     f"released at {clock_text(released, now, seconds=True)}, the GPU stays held, given to "
                     f"nobody else, until they free it — those of {job.spec.user}'s account still on it at "
                     f"{clock_text(ends_at, now, seconds=True)} are ended by the scheduler (SIGTERM, then "
                     f"SIGKILL)")
        else:
            words = (f"releasing: process(es) {named} still have a context on GPU {gpus} (the GPU's process list); "
                     f"released at {clock_text(released, now, seconds=True)}, the GPU stays held, given to "
                     f"nobody else and counted as this lease's, until they free it — no time limit: restart the "
                     f"kernel (Kernel > Restart) or end the process (kill {' '.join(map(str, pids))}); the scheduler "
                     f"does not kill kernels")
        if self._say(job, words, pids):
            self.writer.audit(job, "lease_draining", words, {"pids": pids, "accounts": {str(p): a for p, a in
                                                                                       accounts.items()},
                                                              "gpu_uuids": gpus.split(", ")})

    def _say_held(self, job: Job, parent: str, gpus: str, inside: list[int], outside: list[int], until: str,
                  accounts: dict[int, str] | None = None) -> None:
        """Say (and audit ``lease_draining``, once per set of pids) which processes keep the
        released lease ``job`` held: ``inside`` its parent job's group (killed at the grace, said
        ``until``), ``outside`` it — the owner's other processes holding the GPU through a passed fd
        or a mapping (red team 18, R6), or any account's process the GPU's process list shows
        (``accounts``: pid → account), never killed by the scheduler: they are named, to be ended."""
        said = [*inside, *outside]
        if self.draining.get(job.id) == said:
            return
        parts = []
        if inside:
            parts.append(f"process(es) {', '.join(map(str, inside))} of job {parent} still hold GPU {gpus} open; "
                         f"it stays held, given to nobody else, until they close it (restart the kernel or end the "
                         f"process), {until}")
        if outside:
            known = accounts or {}
            ids = ", ".join(f"{p} ({known[p]})" if p in known else str(p) for p in outside)
            whose = "of another account or " if any(known.get(p) not in (None, job.spec.user) for p in outside) else ""
            parts.append(f"process(es) {ids} {whose}of {job.spec.user}'s account, outside job {parent}, hold GPU "
                         f"{gpus} open (an fd passed on, or a mapping kept); it stays held, given to nobody else, until "
                         f"they end: end them (kill {' '.join(map(str, outside))}); the scheduler does not kill "
                         f"processes outside the job")
        words = "releasing: " + "; ".join(parts)
        self._say(job, words, said)
        self.writer.audit(job, "lease_draining", words, {"parent_job_id": parent, "pids": inside,
                                                          "outside_pids": outside, "gpu_uuids": gpus.split(", ")})

    def forget(self, job_id: str) -> None:
        """``job_id`` ended: a later stop of the same id (after a requeue) is sent again."""
        self.sent.discard(job_id)
        self.plans.pop(job_id, None)
        self.retries.succeeded(f"stop:{job_id}")

    def clear(self) -> None:
        """A new term (or stepping down): nothing is known to be sent."""
        self.sent.clear()
        self.plans.clear()
        self.draining.clear()
        self.ends.clear()
        self.scans.clear()
        self.idle_kernels.clear()

    def reconcile(self, record: JobRecord) -> JobRecord:
        """Time-limit and stop one admitted/running job the executor may run; return its row.

        Raises:
            NotLeaderError: the lease was lost (nothing was sent).
            StoreError: the store failed.
        """
        job = record.job
        now = self.clock.now()
        limit = job.spec.time_limit_s
        if (record.stop_intent is None and limit and job.started_at is not None and not job.is_lease
                and now >= capped(job.started_at, limit)):  # never overflows (red team 21, R5)
            record = self.writer.mutate(job.id, lambda r: replace(
                r, stop_intent="timeout", stop_requested_at=now, stop_actor="scheduler")) or record
            self.writer.audit(job, "time_limit", f"time limit of {stopped_limit_text(limit, job.spec.time_limit_source)} reached; stopping",
                              {"limit_s": limit})
        if record.stop_intent is None or job.id in self.sent:
            return record
        if job.is_lease:
            if job.state is JobState.RUNNING and not self._still_open(record, now):
                self.draining.pop(job.id, None)
                self.ends.pop(job.id, None)
                said = self.idle_kernels.ended(record) if record.stop_intent == "idle" else lease_release_message(record)
                self.writer.end_lease(record, said + self._unseen(job) + self.ending.pop(job.id, ""))
            return record
        key = f"stop:{job.id}"
        if job.id not in self.executor.tracked() or not self.retries.due(key):
            return record
        grace, checkpoint = self.plans.get(job.id, (self.grace_s, False))
        self.leadership.check()
        try:
            self.executor.stop(job.id, grace_s=grace, checkpoint_signal=checkpoint,
                               reason=stop_words(record, self.writer.settle_s))
        except NotLeaderError:
            raise
        except Exception as exc:  # one failing stop never blocks the others
            failure = classify(exc)
            self.retries.failed(key, failure.cause)
            waiting = self.retries.reconnecting(key, f"the {self.executor.name} executor to stop it")
            assert waiting is not None
            log.warning("job %s: stop failed (%s); %s", job.id, failure.cause, waiting.message)
            self.writer.say(job.id, f"stopping: {waiting.message}")
            self.writer.audit(job, "stop_retry", waiting.message, {"cause": failure.cause, "status": failure.status})
            return record
        self.retries.succeeded(key)
        self.sent.add(job.id)
        return record
