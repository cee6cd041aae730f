"""Quota (pure): guarantees, borrowing limits, borrowed work and fair share (Kueue semantics)."""

from .ledger import Line, QuotaCheck, QuotaLedger

__all__ = ["Line", "QuotaCheck", "QuotaLedger"]
