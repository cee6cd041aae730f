"""What a team holds as its quota lines count it, read from allocations (red team 15 R5, 38 R3).

The rule (DESIGN.md *Reclaim*; the scheduling cycle's
:func:`~jupyter_sched.scheduling.preempt.candidates.held_away`, which admission and reclaim both
read): a GPU that only one team's shares occupy counts as a whole GPU held by that team — it keeps
the rest from other teams' work — while shares packed on one GPU charge their fractions of it (4 x
0.25 = 1 GPU), and a GPU shared with another team's work charges each team its fractions. This
module says the same over plain ``(team, GPU, milli-GPUs)`` holdings, for the views that read job
rows rather than the cycle's cluster state (``GET me``'s ``team_in_use``), and :class:`HeldAway` keeps
it for the cycle's ledgers as they change (what every quota check of the cycle counts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from ..model import GPU_MILLI

__all__ = ["HeldAway", "ShareLedger", "team_milli_held"]


def team_milli_held(holdings: Iterable[tuple[str, str, int]], team: str) -> int:
    """Milli-GPUs ``team`` holds among ``holdings`` (``(team, GPU uuid, milli-GPUs)`` per GPU of every
    job holding GPUs, any team's): a GPU only its shares occupy counts whole."""
    on: dict[str, list[tuple[str, int]]] = {}
    for owner, gpu, milli in holdings:
        on.setdefault(gpu, []).append((owner, milli))
    total = 0
    for holders in on.values():
        mine = sum(milli for owner, milli in holders if owner == team)
        if mine and mine < GPU_MILLI and all(owner == team for owner, _ in holders):
            total += GPU_MILLI  # its shares alone: the rest is kept from every other team
        else:
            total += mine
    return total


LineKey = tuple[str, str | None, str]
"""A quota line's key: ``(team, user or None, GPU model or '*')``."""


class ShareLedger(Protocol):
    """What :class:`HeldAway` reads of the cycle's capacity ledger
    (:class:`~jupyter_sched.placement.state.ClusterState`)."""

    share_version: int
    share_log: list[int]
    gpu_shares: dict[int, dict[str, None]]
    free_milli: list[int]
    placeable: list[bool]


class HeldAway:
    """Per team quota line, the milli-GPUs its shares keep from other work beyond what they ask — the
    free rest of each GPU on which only that line's shares sit (red team 15 R5) — kept up to date as the
    cycle's admissions, evictions and undone trials change the shares, for every quota check to count as
    used (:attr:`~jupyter_sched.quota.QuotaLedger.held`; red team 38 R3).

    Kept incrementally: :meth:`sync` redoes only the GPUs whose shares or free rest changed since it
    last ran (the capacity ledger's :attr:`share_log` past :attr:`seen`), and a read while the ledger's
    ``share_version`` is the one synced to (whole-GPU changes never move it) costs an integer compare.
    It holds no reference to the cycle's context (a context → quota ledger → this → context loop kept
    every cycle's context, its placements and holdings alive until a full collection: session 39). A
    share taken is charged before the next read (admission: take, then charge; what is taken and not
    charged counts as no share of any line).

    Args:
        state: the capacity ledger.
        holders: the ids of the jobs that held a GPU share when the cycle began.
        fresh: the cycle's admissions of shares (kept by the cycle: added on admission, dropped on withdrawal).
        charges: the quota ledger's charges (job id -> its line keys and milli-GPUs).
    """

    __slots__ = ("away", "charges", "fresh", "holders", "on", "seen", "state", "team_sets", "version", "versions")

    def __init__(self, state: ShareLedger, holders: frozenset[str], fresh: Mapping[str, None],
                 charges: Mapping[str, tuple[tuple[LineKey, ...], int]], versions: dict[str, int] | None = None) -> None:
        self.state = state
        self.versions = versions
        """The quota ledger's ``team_version``: bumped for a team whose lines' held-away changes (its fair share)."""
        self.holders = holders
        self.fresh = fresh
        self.charges = charges
        self.version = -1
        """The ``share_version`` of the capacity ledger :attr:`away` was worked out at (-1: never)."""
        self.seen = 0
        """How much of the capacity ledger's ``share_log`` :attr:`on` accounts for."""
        self.on: dict[int, tuple[frozenset[LineKey], int]] = {}
        """Per GPU that adds to :attr:`away`: the team lines every share on it is charged to, and its free rest."""
        self.away: dict[LineKey, int] = {}
        """The sums per team line (a new dict after every change: a reader may keep the one before)."""
        self.team_sets: dict[tuple[LineKey, ...], frozenset[LineKey]] = {}
        """Per charge's line keys, its team lines (``user`` None)."""

    def now(self) -> dict[LineKey, int]:
        """:attr:`away` as the ledgers stand now."""
        return self.away if self.version == self.state.share_version else self.sync()

    def rests(self) -> Mapping[int, tuple[frozenset[LineKey], int]]:
        """Per GPU that adds to :meth:`now`, as the ledgers stand now: the team lines every share on it is
        charged to, and its free rest (milli-GPUs). The ETA projection frees each when its last share ends
        (:func:`~jupyter_sched.scheduling.eta._held_rests`). Its order is the sync history's: a reader that
        says anything in order sorts it (session 41)."""
        self.now()
        return self.on

    def sync(self) -> dict[LineKey, int]:
        """Bring :attr:`away` up to the ledgers: each GPU logged since the last sync comes off, and back as
        it is now (all GPUs a share is on, the first time)."""
        st = self.state
        log = st.share_log
        on = self.on
        touched: Iterable[int]
        if self.version < 0:
            out: dict[LineKey, int] = {}
            on.clear()
            touched = st.gpu_shares
        else:
            out = dict(self.away)
            touched = set(log[self.seen:])
            for g in touched:
                old = on.pop(g, None)
                if old is not None:
                    for key in old[0]:
                        left = out[key] - old[1]
                        if left:
                            out[key] = left
                        else:
                            del out[key]
        for g in touched:
            part = self.part(g)
            if part is not None:
                on[g] = part
                for key in part[0]:
                    out[key] = out.get(key, 0) + part[1]
        versions = self.versions
        if versions is not None:  # a team whose lines' held-away changed: its fair share is read again
            before = self.away
            for team in {k[0] for k in out.keys() | before.keys() if out.get(k) != before.get(k)}:
                versions[team] = versions.get(team, 0) + 1
        self.version, self.seen, self.away = st.share_version, len(log), out
        return out

    def part(self, g: int) -> tuple[frozenset[LineKey], int] | None:
        """GPU ``g``'s part of :attr:`away`: the team lines every share on it is charged to, and its free
        rest (None: it adds nothing — no share, no rest, not placeable, or shares of no one line)."""
        st = self.state
        sharers = st.gpu_shares.get(g)
        rest = st.free_milli[g]
        if not sharers or not 0 < rest < GPU_MILLI or not st.placeable[g]:
            return None
        lines: frozenset[LineKey] | None = None
        holders, fresh, charges, team_sets = self.holders, self.fresh, self.charges, self.team_sets
        for holder in sharers:
            if holder not in holders and holder not in fresh:
                continue  # a whole-GPU job, a reservation mask: not a share
            entry = charges.get(holder)
            if entry is None:
                return None  # taken, not charged: a share of no line
            mine = team_sets.get(entry[0])
            if mine is None:
                mine = team_sets[entry[0]] = frozenset(k for k in entry[0] if k[1] is None)
            lines = mine if lines is None else lines & mine
            if not lines:
                return None
        return None if lines is None else (lines, rest)
