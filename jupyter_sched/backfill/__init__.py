"""Backfill (pure): EASY reservations and ETAs from running jobs' time limits (Lifka 1995)."""

from .easy import Ending, Reservation, find_reservation, job_end

__all__ = ["Ending", "Reservation", "find_reservation", "job_end"]
