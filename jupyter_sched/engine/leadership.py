"""Leadership: the store's leader lease, taken or renewed at each tick, and the fence on every act.

One engine per store decides and acts. Its lease is a row in the store (``leader``: owner, term,
expiry) taken by compare-and-set; a takeover increments ``term``, the fencing token.

* Every decision transaction re-checks the lease inside itself (:meth:`Leadership.fence`), so a
  deposed leader's late write aborts instead of landing.
* Every side effect outside the store (starting or stopping work, re-adopting it) is preceded by
  :meth:`Leadership.check`, a small transaction that renews the lease or raises: a leader that
  was paused (``SIGSTOP``, a VM migration, a long GC) past its lease and replaced meanwhile
  performs no start or stop after it resumes — its first check fails and it steps down.
* Expiry is decided by the **database's clock** (:meth:`~jupyter_sched.store.StoreTx.db_now`),
  not each host's: with a shared PostgreSQL store, a host whose wall clock runs ahead cannot
  take a lease that has not expired, and one whose clock lags cannot keep an expired one. Tests
  and the simulator, which drive time themselves, pass their clock as ``lease_clock``.

What no lease can fence is a pause between the check and the executor call itself (the
Kubernetes API takes no fencing token); the check makes that window one call wide.
"""

from __future__ import annotations

import logging
from datetime import datetime

from ..store import Store, StoreTx
from .clock import Clock

__all__ = ["Leadership"]

log = logging.getLogger(__name__)


class Leadership:
    """This engine's hold on the leader lease.

    Args:
        store: the store holding the lease row.
        clock: this host's clock (audit times).
        owner_id: this engine's identity in the lease.
        ttl_s: seconds a lease lasts without renewal (a crashed leader is replaced after at most
            this long).
        lease_clock: the clock leases expire by; None = the database's clock (production).

    Attributes:
        term: the lease's term while this engine leads (as of its last :meth:`acquire` or
            :meth:`check`), else None.
        checks: fenced checks made (tests and metrics).
    """

    def __init__(self, store: Store, clock: Clock, owner_id: str, ttl_s: float, *,
                 lease_clock: Clock | None = None) -> None:
        self.store = store
        self.clock = clock
        self.owner_id = owner_id
        self.ttl_s = ttl_s
        self.lease_clock = lease_clock
        self.term: int | None = None
        self.checks = 0
        self._renewed_at: datetime | None = None  # clock time of the last renewal committed on its own
        self._said_follows = False  # "follows: … leads the store" said once per stretch of following

    def renewed_recently(self) -> bool:
        """True when this engine leads and renewed the lease (by :meth:`acquire` or :meth:`check`)
        less than ``min(1 s, ttl/4)`` ago by its clock: a tick may then skip :meth:`acquire` (one
        transaction; issue 17: a submit's decision in milliseconds). Safety does not rest on it:
        every decision and side effect is still fenced, and a lost lease fails that fence."""
        if self.term is None or self._renewed_at is None:
            return False
        age = (self.clock.now() - self._renewed_at).total_seconds()
        return 0 <= age < min(1.0, self.ttl_s / 4)

    def _now(self, tx: StoreTx) -> datetime:
        return self.lease_clock.now() if self.lease_clock is not None else tx.db_now()

    def acquire(self) -> tuple[bool, bool]:
        """Take or renew the lease; return ``(leading, new_term)``.

        ``new_term`` is True when this engine just became leader (or its term changed): the
        caller recovers. Losing the lease leaves :attr:`term` set; the caller steps down.
        """
        with self.store.transaction(now=self.clock.now()) as tx:
            lease = tx.acquire_leadership(self.owner_id, self.ttl_s, at=self._now(tx))
            if lease is None or lease.owner != self.owner_id:
                if self.term is not None:
                    log.warning("engine %s lost the leader lease", self.owner_id)
                elif not self._said_follows and (lease := lease or tx.leader()) is not None:
                    # once per stretch of following (hubadmin23 A16: no log said which server led)
                    log.warning("jupyter_sched: engine %s follows: engine %s leads the store (term %s) and schedules; "
                                "this server answers requests, and takes over when that one stops", self.owner_id,
                                lease.owner, lease.term)
                    self._said_follows = True
                self._renewed_at = None
                return False, False
            new_term = lease.term != self.term
            if new_term:
                # after following: WARNING (the overlap ended, this one schedules now); else INFO
                log.log(logging.WARNING if self._said_follows else logging.INFO, "jupyter_sched: engine %s leads the "
                        "store (term %s)%s", self.owner_id, lease.term, " now: the one that led stopped"
                        if self._said_follows else "")
                self._said_follows = False
                tx.add_event(actor=self.owner_id, action="leader_acquired",
                             message=f"engine {self.owner_id} leads the store (term {lease.term})",
                             details={"term": lease.term})
        self.term = lease.term
        self._renewed_at = self.clock.now()
        return True, new_term

    def fence(self, tx: StoreTx) -> None:
        """Renew the lease inside ``tx`` iff this engine still holds it in its term.

        Raises:
            NotLeaderError: the lease was lost, or this engine does not lead (``tx`` must roll back).
        """
        if self.term is None:
            from ..errors import NotLeaderError

            raise NotLeaderError(f"engine {self.owner_id} does not lead", hint="another server schedules this store")
        self.checks += 1
        tx.assert_leader(self.owner_id, self.term, self.ttl_s, at=self._now(tx))

    def check(self) -> None:
        """Fence a side effect outside the store: renew the lease in its own transaction, or raise.

        Raises:
            NotLeaderError: the lease was lost (the caller must not act; the tick steps down).
            StoreError: the store failed.
        """
        with self.store.transaction(now=self.clock.now()) as tx:
            self.fence(tx)
        self._renewed_at = self.clock.now()

    def release(self) -> None:
        """Expire the lease now (clean shutdown: a successor need not wait) and forget the term."""
        if self.term is not None:
            with self.store.transaction(now=self.clock.now()) as tx:
                tx.release_leadership(self.owner_id, at=self._now(tx))
                tx.add_event(actor=self.owner_id, action="leader_resigned", message="engine stopped",
                             details={"term": self.term})
        self.term = None
        self._renewed_at = None
