"""What every application service shares: the store, clock, engine, inventory, events, admission.

One :class:`Context` per scheduler, built by the composition root (:mod:`.root`). It also holds
the two lookups several services need: :meth:`Context.visible` (a job the caller may see, with
the refusal audited when it is someone else's) and :meth:`Context.live` (a pending job with the
leading engine's latest reason).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from ..admission import Admission, Caller
from ..engine.clock import Clock
from ..engine.engine import Engine
from ..engine.events import EventBus
from ..engine.runner import EngineRunner
from ..errors import AuthorizationError, NotFoundError, SchedError, ValidationError
from ..executors.base import Executor
from ..model import GPU, Inventory, Job, JobState, Profile
from ..model.resources import Cordon
from ..scheduling.gates import HELD
from ..store import IdGenerator, JobRecord, Store
from ..wording.not_yours import not_yours_words

__all__ = ["Context"]

T = TypeVar("T")

Kick = tuple[str, str | None, JobRecord | None]
"""An engine kick: event, job id, the row just written (see :meth:`Context.kick`)."""

_held = threading.local()
"""Per thread: the kicks :meth:`Context.holding_kicks` holds (``kicks``: a list, or None)."""


@dataclass
class Context:
    """Shared dependencies of the services (see module docstring).

    Attributes:
        store: the store (the one source of truth).
        clock: time source.
        ids: job id generator.
        engine: the engine (its cycle function, latest reasons, idle state).
        runner: drives the engine; :meth:`kick` asks it for a cycle.
        inventory_source: ``current() -> Inventory`` (cached).
        bus: the event bus services publish job and lease changes on.
        admission: the admission step.
        executor: the executor (logs of jobs whose log file it keeps).
        profiles: admin request templates by name.
        default_time_limit_s: time limit of training jobs that set none (None = none).
    """

    store: Store
    clock: Clock
    ids: IdGenerator
    engine: Engine
    runner: EngineRunner
    inventory_source: Any
    bus: EventBus
    admission: Admission
    executor: Executor
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    default_time_limit_s: float | None = None

    def inventory(self) -> Inventory:
        """The current inventory (cached by the source)."""
        inventory: Inventory = self.inventory_source.current()
        return inventory

    def devices(self, *, wait: bool = True) -> frozenset[str] | None:
        """The GPU and MIG device uuids the current inventory lists (:meth:`Inventory.device_uuids`,
        the same object while the inventory is unchanged); None when it cannot be read, or — with
        ``wait=False``, on the event loop — when reading it now could block (a cached source's refresh
        is due: its ``peek()`` answers None)."""
        return self._current(Inventory.device_uuids, wait=wait)

    def unhealthy(self, *, wait: bool = True) -> Mapping[str, GPU] | None:
        """The inventory's unhealthy GPUs by uuid (:meth:`Inventory.unhealthy_gpus`); None as
        :meth:`devices` answers it (unreadable, or ``wait=False`` while a refresh is due)."""
        return self._current(Inventory.unhealthy_gpus, wait=wait)

    def drained(self, *, wait: bool = True) -> Mapping[str, Cordon] | None:
        """The inventory's nodes drained with a deadline (``nodes drain --evict-after``): ``{node: cordon}``
        (:meth:`Inventory.drained_nodes`; hubadmin26 B1); None as :meth:`devices` answers it."""
        return self._current(Inventory.drained_nodes, wait=wait)

    def _current(self, fact: Callable[[Inventory], T], *, wait: bool) -> T | None:
        """``fact`` of the current inventory; None when it cannot be read, or (``wait=False``) when
        reading it could block (:meth:`devices`)."""
        source = self.inventory_source
        try:
            if not wait and hasattr(source, "peek"):
                kept = source.peek()
                return None if kept is None else fact(kept)
            return fact(self.inventory())
        except SchedError:
            return None

    def simulated(self) -> bool:
        """True when the inventory is simulated (labels every job answer); False when unreadable."""
        try:
            return self.inventory().simulated
        except SchedError:
            return False

    def kick(self, event: str = "change", job_id: str | None = None, record: JobRecord | None = None) -> None:
        """Ask the engine for a decision now (``("submit", job_id, record)``: see :meth:`Engine.kick`;
        ``record``: the row just written, which the engine then need not read again) — or, inside
        :meth:`holding_kicks` on this thread, once the caller has answered."""
        held: list[Kick] | None = getattr(_held, "kicks", None)
        if held is not None:
            held.append((event, job_id, record))
            return
        self.runner.kick(event, job_id, record)

    @contextmanager
    def holding_kicks(self) -> Iterator[list[Kick]]:
        """Hold the engine kicks this thread makes inside the block, for :meth:`send_kicks` once
        the answer is written (issue 17: a submit's decision, started at once, took the
        interpreter from the thread writing the submit's answer — POST jobs p95 22 ms instead of
        7). Kicks of a block that raises are sent at once."""
        held: list[Kick] = []
        _held.kicks = held
        try:
            yield held
        except BaseException:
            _held.kicks = None
            self.send_kicks(held)
            raise
        finally:
            _held.kicks = None

    def send_kicks(self, held: list[Kick]) -> None:
        """Send kicks held by :meth:`holding_kicks` (each once: the list is emptied)."""
        while held:
            event, job_id, record = held.pop(0)
            self.runner.kick(event, job_id, record)

    def publish(self, event: dict[str, Any]) -> None:
        """Put ``{"type", "data"}`` on the event stream."""
        self.bus.publish(event)

    def live(self, job: Job) -> Job:
        """``job`` with the leading engine's latest pending reason (fresher than the stored one)."""
        if job.state is JobState.PENDING and self.engine.is_leader:
            reason = self.engine.reasons.get(job.id)
            if reason is not None and (job.held is not None) != (reason.code == HELD):
                return job  # held or released since that cycle: the row's reason says it (hubadmin25 B18)
            if reason is not None and reason != job.reason:
                return replace(job, reason=reason, message=reason.message)
        return job

    def visible(self, caller: Caller, job_id: str, *, request: str, field: str = "job_id") -> JobRecord:
        """The record of ``job_id`` if ``caller`` may see it (their own, or any for an admin).
        ``field``: the path parameter as the route names it (``lease_id`` on leases/{id}; new user 10, N9).

        Raises:
            ValidationError: an empty id.
            NotFoundError: no such job, or another user's that has ended (not shown to the caller).
            AuthorizationError: another user's live job, which the shared queue shows ("j-… is another
                user's job: …", 403 forbidden: newuser29 n5 — its words say it exists, so its tag and status
                do too). Either refusal is audited: probing other users' work is worth knowing about.
        """
        if not isinstance(job_id, str) or not job_id:
            raise ValidationError("job id must be a non-empty string", field=field, hint="e.g. j-01hf3k2m9-x7q4za")
        try:
            record: JobRecord | None = self.store.get_job(job_id)
        except NotFoundError:
            record = None
        if record is None:
            raise not_visible(job_id, field, admin=caller.admin)
        if not caller.admin and record.job.spec.user != caller.user:
            # in the shared queue, id and owner shown to everyone (new user 10, N7): a 403 (newuser29 n5)
            refusal: SchedError = _not_yours(record.job, request, field) if not record.job.state.terminal \
                else not_visible(job_id, field)
            self.admission.refuse(caller, refusal, request=request, job_id=job_id)
        return record


def not_visible(job_id: str, field: str, *, admin: bool = False) -> NotFoundError:
    """The 404 for a job id the caller cannot see: none has it, or another user's that has ended (a
    live one of theirs gets :func:`_not_yours`). Also each such id's message in the bulk cancel.
    ``admin``: the caller sees every job, so none has that id — said without the words of what a
    non-admin is not shown (newuser35 n4: "finished jobs of other users are not shown to you", to an admin)."""
    lease = job_id.startswith("l-")  # ids say their kind: a lease id gets the lease's words
    # new user 9: `%schedule logs cellA` (a job's name) read "no job 'cellA' visible to you", as if hidden
    # new user 11, N2: "jobs are named by their ids, not their names" was untrue — the CLI and the
    # magics take a unique name of the caller's own job (client job_id_named); this route takes ids
    named = not job_id.startswith(("j-", "l-"))
    noun = "lease" if lease else "job"
    said = (f"no job has the id {job_id[:80]!r}: this route takes an id (j-…, leases l-…), not a name"
            if named else f"no {noun} has the id {job_id[:80]!r}" if admin
            else f"no {noun} {job_id[:80]!r} visible to you")
    if lease:
        hint = "GET leases?all=true lists every user's" if admin else \
            "GET leases lists yours (%gpu in a notebook shows its own)"
    elif named:
        hint = ("GET jobs lists yours with their ids and names (GET jobs?name=NAME: yours of that name); jupyter-sched "
                "and %schedule also take the name of one of your jobs")
    else:
        # "list your …" with its parenthesis: each surface puts its own listing command first (where_listed)
        hint = ("list your jobs to see their ids (an admin lists every user's: jupyter-sched jobs --all)" if admin
                else "list your jobs to see their ids (another user's job is shown only while it is in the queue: "
                     "finished jobs of other users are not shown to you)")
    return NotFoundError(said, field=field, hint=hint)


def _not_yours(job: Job, request: str, field: str) -> AuthorizationError:
    """The 403 for another user's job that the shared queue lists: "j-… is another user's job: you may
    cancel only your own", not "no job … visible to you", which contradicted the queue line the caller
    was reading (new user 10, N7). Tagged ``forbidden`` (403) since newuser29 n5: the words say the job
    exists, and a ``[not_found]`` 404 beside them said it did not (case 020 allows 403 or 404). It names
    nothing more of the job — not even its owner (the queue is where the caller sees what is shown of
    others' work); an ended job of another user stays a 404 (:func:`not_visible`)."""
    noun = "lease" if job.is_lease else "job"
    said = not_yours_words(request, noun)  # as the CLI and the magics refuse its name (newuser32 n3)
    return AuthorizationError(f"{job.id} is another user's {noun}: {said}", field=field,
                              hint="ask its owner (the queue names them) or an admin")
