"""Undoable trials over a ledger: ``with ledger.what_if() as trial: ...`` (STYLE §2).

:class:`Journaled` records each change a ledger makes inside a trial and, when the block exits
without ``trial.keep()``, hands the records back newest first to the ledger's ``_undo``. Nested
trials work: a kept inner trial's records join the outer one. Both the capacity ledger
(:class:`~.state.ClusterState`) and the quota ledger (:class:`~jupyter_sched.quota.ledger.QuotaLedger`)
use it, so placement and quota are tried and undone the same way.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Journaled", "Trial"]


class Trial:
    """Handle of one :meth:`Journaled.what_if` block; ``keep()`` makes its changes permanent."""

    __slots__ = ("kept",)

    def __init__(self) -> None:
        self.kept = False

    def keep(self) -> None:
        """Keep the changes made inside the block."""
        self.kept = True


class Journaled(ABC):
    """Mixin: ``what_if`` trials for a ledger.

    The ledger sets ``self._journal = None`` in ``__init__``, appends one record per change while
    ``self._journal is not None``, and implements ``_undo(record)`` with changes that it does not
    journal (the journal is off while undoing).
    """

    _journal: list[Any] | None

    @abstractmethod
    def _undo(self, record: Any) -> None:
        """Reverse one journaled change."""

    @contextmanager
    def what_if(self) -> Iterator[Trial]:
        """Run a trial: every change inside the block is undone when it exits, unless
        ``trial.keep()`` was called (then the changes stay and join any outer trial)."""
        outer = self._journal
        journal: list[Any] = []
        self._journal = journal
        trial = Trial()
        try:
            yield trial
        finally:
            if trial.kept:
                self._journal = outer
                if outer is not None:
                    outer.extend(journal)
            else:
                self._journal = None
                for record in reversed(journal):
                    self._undo(record)
                self._journal = outer
