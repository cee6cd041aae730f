"""Leadership: the store's leader lease, taken or renewed at each tick, and the fence on writes.

One engine per store decides and acts. Its lease is a row in the store (``leader``: owner, term,
expiry) taken by compare-and-set; a takeover increments ``term``, the fencing token every
decision transaction re-checks (:meth:`Leadership.fence`), so a deposed leader's late write
aborts instead of landing.
"""

from __future__ import annotations

import logging

from ..store import Store, StoreTx
from .clock import Clock

__all__ = ["Leadership"]

log = logging.getLogger(__name__)


class Leadership:
    """This engine's hold on the leader lease.

    Args:
        store: the store holding the lease row.
        clock: time source (injected).
        owner_id: this engine's identity in the lease.
        ttl_s: seconds a lease lasts without renewal (a crashed leader is replaced after at most
            this long).

    Attributes:
        term: the lease's term while this engine leads (as of its last :meth:`acquire`), else None.
    """

    def __init__(self, store: Store, clock: Clock, owner_id: str, ttl_s: float) -> None:
        self.store = store
        self.clock = clock
        self.owner_id = owner_id
        self.ttl_s = ttl_s
        self.term: int | None = None

    def acquire(self) -> tuple[bool, bool]:
        """Take or renew the lease; return ``(leading, new_term)``.

        ``new_term`` is True when this engine just became leader (or its term changed): the
        caller recovers. Losing the lease leaves :attr:`term` set; the caller steps down.
        """
        with self.store.transaction(now=self.clock.now()) as tx:
            lease = tx.acquire_leadership(self.owner_id, self.ttl_s)
            if lease is None or lease.owner != self.owner_id:
                if self.term is not None:
                    log.warning("engine %s lost the leader lease", self.owner_id)
                return False, False
            new_term = lease.term != self.term
            if new_term:
                tx.add_event(actor=self.owner_id, action="leader_acquired",
                             message=f"engine {self.owner_id} leads the store (term {lease.term})",
                             details={"term": lease.term})
        self.term = lease.term
        return True, new_term

    def fence(self, tx: StoreTx) -> None:
        """Renew the lease inside ``tx`` iff this engine still holds it in its term.

        Raises:
            NotLeaderError: the lease was lost (the transaction must roll back).
        """
        assert self.term is not None
        tx.assert_leader(self.owner_id, self.term, self.ttl_s)

    def release(self) -> None:
        """Expire the lease now (clean shutdown: a successor need not wait) and forget the term."""
        if self.term is not None:
            with self.store.transaction(now=self.clock.now()) as tx:
                tx.release_leadership(self.owner_id)
                tx.add_event(actor=self.owner_id, action="leader_resigned", message="engine stopped",
                             details={"term": self.term})
        self.term = None
