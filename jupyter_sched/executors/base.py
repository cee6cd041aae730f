"""The executor protocol: how the engine starts, watches, stops and re-adopts work.

An executor turns an admitted job plus its :class:`~jupyter_sched.model.Allocation` into running
work (a local process group, a Kubernetes Job) and reports what happens to it as
:data:`ExecutorEvent` values from :meth:`Executor.poll`. The engine persists the
:class:`ExecutorHandle` returned by :meth:`Executor.start` in the store, so that after a server
restart (even ``kill -9``) :meth:`Executor.adopt` can find the work again.

Events (all frozen dataclasses with ``job_id``):

* :class:`Started` — the work (re)started; persist ``handle`` (inference services restart
  after failures, each time with a new handle).
* :class:`Ready` — an inference service answers on its port.
* :class:`NotReady` — a service that was ready no longer answers (its process exited and waits to
  be restarted, or its listening socket went away); ``why`` says which.
* :class:`Exited` — the work ended with ``exit_code`` (0 = success; negative = killed by that
  signal, as :mod:`subprocess` reports it) at ``finished_at``.
* :class:`Waiting` — the work exists but waits in the cluster; ``reason`` says why (Kubernetes).
* :class:`Lost` — the work vanished and its outcome is unknown (``reason`` says why);
  ``started=False`` means it provably never started (the engine may requeue it).
* :class:`Connection` — the executor cannot see the work right now and is reconnecting (or
  sees it again); the job says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ..model import Allocation, Job, PendingReason
from .runas import RunAs

__all__ = ["Connection", "Executor", "ExecutorEvent", "ExecutorHandle", "Exited", "Lost", "NotReady", "Ready", "Started",
           "Waiting"]


@dataclass(frozen=True, slots=True)
class ExecutorHandle:
    """What identifies running work across restarts (persisted as JSON in the job row).

    Attributes:
        executor: the executor's name (``"local"``, ``"kubernetes"``).
        data: executor-specific identity, e.g. ``{"pid": 4242, "create_time": 1764443045.12,
            "job_dir": "/data/jobs/j-..."}`` for local processes or a Job name for Kubernetes.
    """

    executor: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape stored in ``jobs.executor_handle``."""
        return {"executor": self.executor, **dict(self.data)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExecutorHandle:
        """Inverse of :meth:`to_dict`."""
        return cls(executor=str(d.get("executor", "")), data={k: v for k, v in d.items() if k != "executor"})


@dataclass(frozen=True, slots=True)
class Started:
    """The job's work (re)started; ``restarts`` counts automatic restarts of a service."""

    job_id: str
    handle: ExecutorHandle
    restarts: int = 0


@dataclass(frozen=True, slots=True)
class Ready:
    """An inference service accepts connections on ``port``."""

    job_id: str
    port: int


@dataclass(frozen=True, slots=True)
class NotReady:
    """A service reported :class:`Ready` no longer answers on ``port``; ``why`` in words ("it exited
    with code 1; restarting in 4 s"). New user 8, N8: a crashed service read "ready" until its
    restart, up to 60 s later. :class:`Ready` follows when it answers again."""

    job_id: str
    port: int
    why: str


@dataclass(frozen=True, slots=True)
class Exited:
    """The work ended with ``exit_code`` at ``finished_at`` (``message`` explains, e.g. the signal)."""

    job_id: str
    exit_code: int
    finished_at: datetime
    message: str = ""
    claimed: bool = False
    """``finished_at`` is what a file of the job's owner says (the local executor's ``exit.json``), bounded by
    nothing this executor saw: the job ended while no service watched it. The engine takes it as no earlier
    than a service last saw the job running (``jobs.seen_running_at``; red33 R3)."""
    before_stop: bool = False
    """The work ended on its own, not by a stop: none had reached the executor, or nothing of it ran and its end was
    recorded when one did (newuser38 N4: a job that had exited 0 was recorded "cancelled … (exited with code 0)" when
    a cancel came between its exit and the engine's next look), or — the local executor's wrapper records it — its
    command had ended before any of the stop's signals reached it (red39 R2). The engine then keeps its own end, for a
    preemption too: it is not requeued (red39 R11). The local executor says it, and the Kubernetes executor of every
    end a Job's own ``Complete``/``Failed`` condition says (read again from the API server when a stop comes: a Job it
    deletes gets no condition after)."""


@dataclass(frozen=True, slots=True)
class Lost:
    """The work is gone and its outcome cannot be known; ``reason`` is one sentence."""

    job_id: str
    reason: str
    started: bool = True


@dataclass(frozen=True, slots=True)
class Waiting:
    """The work was handed over but waits in the cluster (e.g. a Kubernetes ``FailedScheduling`` or
    ResourceQuota ``FailedCreate`` event, case 019); ``reason`` is the pending reason to show.
    Emitted when the reason changes; added by the Kubernetes executor."""

    job_id: str
    reason: PendingReason


@dataclass(frozen=True, slots=True)
class Connection:
    """The executor lost (``reconnecting`` set: one sentence, "reconnecting to … (attempt n, next
    in s)") or regained (``reconnecting`` None) its view of the job's work; the work itself is
    unaffected. Emitted when that changes."""

    job_id: str
    reconnecting: str | None = None


ExecutorEvent = Started | Ready | NotReady | Exited | Lost | Waiting | Connection
"""Anything :meth:`Executor.poll` or :meth:`Executor.adopt` reports."""


@runtime_checkable
class Executor(Protocol):
    """Runs jobs somewhere. Implementations: :class:`~jupyter_sched.executors.local.LocalExecutor`,
    the Kubernetes executor.

    All methods are synchronous and quick (they never wait for work to finish); the engine
    calls them from its cycle thread. Any of them may raise anything; the engine classifies the
    error and it concerns the one job involved (:mod:`jupyter_sched.engine.failures`).

    An executor whose work exists before it runs (a Kubernetes Job whose pods may not schedule)
    sets the class attribute ``starts_async = True``: the engine then keeps a started job
    ``admitted`` until :meth:`poll` reports :class:`Started` (case 027). Without the attribute a
    job runs as soon as :meth:`start` returns.
    """

    name: str

    def start(self, job: Job, allocation: Allocation, run_as: RunAs) -> ExecutorHandle:
        """Start ``job`` on ``allocation`` as ``run_as`` and return the handle to persist.

        ``run_as`` is decided with the start (DESIGN, *Who runs it*) and must be honoured: the
        local executor runs the job as that OS account (``account None``: its own), the
        Kubernetes executor gives its pods that uid/gid when known.

        Raises:
            ExecutorError: the work could not be started (nothing is left running).
        """
        ...

    def poll(self) -> list[ExecutorEvent]:
        """Advance stop plans and report what happened since the last call."""
        ...

    def stop(self, job_id: str, *, grace_s: float, checkpoint_signal: bool = False, reason: str = "") -> None:
        """Begin stopping ``job_id``: optional checkpoint signal, then terminate, then kill after
        ``grace_s`` seconds. Returns at once; the end arrives later as :class:`Exited`/:class:`Lost`.
        Unknown or already finished jobs are ignored. ``reason``: why, in words (``cancelled by
        alice``, ``stopped: time limit 1m reached``), for the job's log where the executor can
        write one (the local executor's wrapper ends the log with it)."""
        ...

    def logs(self, job_id: str, offset: int = 0, limit: int = 65536) -> tuple[str, int]:
        """Return ``(text, next_offset)``: up to ``limit`` bytes of the job's output from byte
        ``offset`` (decoded as UTF-8; never splits a character). Works after the job ended and
        after a restart.

        Raises:
            NotFoundError: the executor has no output for this job.
        """
        ...

    def adopt(self, job: Job, handle: ExecutorHandle | None) -> ExecutorEvent | None:
        """Re-attach to ``job`` after a restart.

        Returns None when the work still runs and is now tracked again; otherwise the event
        that settles it (:class:`Exited` if it ended while nobody watched and left its exit
        code, :class:`Lost` if not).
        """
        ...

    def tracked(self) -> frozenset[str]:
        """Ids of the jobs this executor currently watches."""
        ...

    def detach(self) -> None:
        """Stop watching everything without touching the work (server shutdown: jobs keep
        running and are re-adopted by the next server)."""
        ...
