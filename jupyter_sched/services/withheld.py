"""A waiting job's reason as one reader may see it: what it says of *other users'* work (red team 22, R2).

A waiting job's ETA reads the work it waits for — and the core keeps, in the reason's ``details``, the
state of that work that only its owner may see on its own routes (``GET jobs/{id}`` is 404 to anyone
else): a running job's progress (``eta_progress``: 49 % done; the time of the report read,
``eta_progress_at``; ``eta_progress_capped``: its progress says its limit stops it; ``eta_progress_lapsed``:
its progress said an end that passed), whether a kernel lease is idle now and when it is reclaimed
(``eta_idle_release.at``, ``eta_idle_at``), and a move of the ETA caused by those reports
(``eta_moved.message``: "bob's job j-1 is projected to end from its progress (49 % done)"), and what its
end learnt from its owner's past runs says of their history (``eta_learned_other``: "at ~12 % of its
time limit, as its owner's other runs did"; a re-estimate note with that figure, ``eta_note`` and an
``overran`` move's message, whose public form the core keeps beside it in ``eta_note_learnt``). The
waiter's reason goes to everyone in ``GET queue``, and to its own owner in ``GET jobs/{id}``, the event
stream, the panel, the CLI and ``%schedule`` — so one user's progress and idle kernel were everyone's.

:func:`reason_for` decides it in one place, on the wire reason every surface renders from (the server's
``reason.text``, and the CLI's and the magics' own rendering of ``details``): a blocker's private state
stays for a reader who may see it — the blocker's owner, or an admin — and for anyone else it is taken
out of ``details`` and the blocker's id listed in ``details.eta_withheld``; the words then say the ETA
and a neutral cause ("from its reported progress", "when red22a's kernel lease (l-…) is released";
:func:`jupyter_sched.wording.reasons.eta_sentence`). The ETA itself stays: when the wait ends is the
waiter's to know (an ETA that only an idle lease's reclaim gives is kept as the reason's ``eta``).

Who owns each blocker: ``details.eta_waits_on_owners`` (the core's: work of a user other than the
waiter's owner), else the waiter's owner.

A job held for its owner's standing says it too, and that is the owner's own (verify 23, V2): "held:
owner no longer a user of this hub … re-add ve23a on the hub" (``OwnerRemoved``) in every user's
``GET queue`` told everyone who had been offboarded, and "held: red18c is no longer a member of team
teama" (``TeamMembership``) who had left which team. To a reader other than the owner and admins
such a reason reads :data:`HELD_CODE` — "held · ETA unknown: it waits until its owner or an admin acts" —
("… it waits for an admin" where the owner is no longer a hub user: the owner cannot act; new user 38, n17)
with none of the owner's standing in its code, words or ``details`` (:func:`held_for_others`).

Pure: plain dicts in and out, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.units import moved_text
from ..scheduling.gates import OWNER_REMOVED, TEAM_MEMBERSHIP
from ..wording.reasons import HELD_FOR_OTHERS_WAIT, held_for_others_wait

__all__ = ["HELD_CODE", "STANDING_CODES", "WITHHELD_KEY", "held_for_others", "reason_for"]

WITHHELD_KEY = "eta_withheld"
"""``details`` key of the blockers (job and lease ids) whose private state the reader may not see."""

_BY_BLOCKER = ("eta_progress_at", "eta_progress_capped", "eta_progress_lapsed")
"""``details`` keys ``{blocker id: private state}`` whose rows are left out for a reader who may not see them."""

_PROGRESS_MOVE = ("ETA moved {frm} → {to}: progress reports of the running work it waits on moved it")
"""``eta_moved.message`` of a move caused by reports the reader may not see (the core's names each job's figure)."""

STANDING_CODES = frozenset({OWNER_REMOVED, TEAM_MEMBERSHIP})
"""Codes of holds that say the owner's standing — no longer a hub user, no longer in the job's team or
granted its class there: the owner's and admins' to read (verify 23, V2)."""
HELD_CODE = "Held"
"""The code such a hold has for every other reader (:func:`held_for_others`)."""
HELD_MESSAGE = "held"
"""Its summary for every other reader: nothing of why, nothing the reader can do."""
HELD_ETA_REASON = HELD_FOR_OTHERS_WAIT
"""Its ``eta_reason`` for every other reader (``ETA unknown: it waits until its owner or an admin acts``);
"it waits for an admin" where the owner is no longer a hub user (:func:`~jupyter_sched.wording.reasons.held_for_others_wait`)."""
_HELD_KEPT = ("time_limit_s", "time_limit_source")
"""``details`` keys of a held job's reason that say nothing of its owner (the rest is left out)."""


def reason_for(reason: Any, *, owner: str | None, reader: str | None, admin: bool = False) -> Any:
    """``reason`` (a wire reason: :func:`~jupyter_sched.model.codec.reason_to_dict` shape, or None)
    as ``reader`` may see it; the same object when it says nothing private that the reader may not see.

    Args:
        reason: the waiting job's reason.
        owner: the waiting job's owner (owns the blockers ``details.eta_waits_on_owners`` does not name).
        reader: the user reading it; None when it is not known (a line shared by every user but the
            owner): then nobody's private state is kept.
        admin: the reader is an admin (sees everything).

    Returns:
        a new reason dict whose ``details`` leave out the private state of every blocker the reader
        does not own — progress figures and report times, capped and lapsed rows, whether a lease is
        idle (``eta_idle_release[id].at`` None, ``eta_idle_at`` left out), a progress move's figures
        (``eta_moved.message`` said neutrally), the share of its limit its owner's other runs took
        (``eta_learned_other[id]`` None, left out of ``eta_learned_population``) and a re-estimate
        note's learnt figure (``eta_note`` and ``eta_moved.message`` in the public form of
        ``eta_note_learnt[id]``, whose row is left out) — with those ids in ``details.eta_withheld``; its
        ``eta`` is the idle reclaim time where only that gave one; any rendered ``text`` is dropped
        (rendered again from what is left). A hold that says its owner's standing
        (:data:`STANDING_CODES`) is the owner's: anyone else reads :func:`held_for_others`.
    """
    if admin or not isinstance(reason, Mapping):
        return reason
    if reason.get("code") in STANDING_CODES:
        return reason if reader is not None and reader == owner else held_for_others(reason)
    if not isinstance(reason.get("details"), Mapping):
        return reason
    details: Mapping[str, Any] = reason["details"]
    owners = details.get("eta_waits_on_owners") if isinstance(details.get("eta_waits_on_owners"), Mapping) else {}
    assert isinstance(owners, Mapping)
    waits = _ids(details.get("eta_waits_on"))

    def hidden(job_id: str, known: bool = True) -> bool:
        """Whether ``job_id``'s private state is not the reader's: a blocker the ETA does not wait on
        (``known`` False: its owner is not in the reason) is nobody's but an admin's."""
        whose = owners.get(job_id) or (owner if known else None)
        return reader is None or whose != reader

    progress = _map(details, "eta_progress")
    idle = _map(details, "eta_idle_release")
    start = _map(details, "eta_idle_at")
    learnt, notes = _map(details, "eta_learned_other"), _map(details, "eta_note_learnt")
    candidates = {str(w) for w in progress} | {str(w) for w in idle} | set(_ids(start.get("leases")))
    candidates |= {str(w) for w in learnt} | {str(w) for w in notes}
    for key in _BY_BLOCKER:
        rows = details.get(key)
        candidates |= {str(w) for w in rows} if isinstance(rows, Mapping) else set()
    withheld = sorted(w for w in candidates if hidden(w, known=w in waits))
    moved = details.get("eta_moved")
    moved_hidden = isinstance(moved, Mapping) and moved.get("cause") == "progress" and any(
        hidden(w, known=w in waits) for w in _ids(moved.get("jobs")))
    if not withheld and not moved_hidden:
        return reason
    out = {k: v for k, v in details.items() if k != "eta_idle_at"}
    gone = set(withheld)
    if learnt:  # the share stays the owner's: the words say "as estimated from past runs"
        out["eta_learned_other"] = {w: None if str(w) in gone else f for w, f in learnt.items()}
        for key in ("eta_learned_population", "eta_learned_gpu_runs"):
            population = [w for w in _ids(details.get(key)) if w not in gone]
            out.pop(key, None)
            if population:
                out[key] = population
    said = [(str(row["said"]), str(row["public"])) for w, row in notes.items()
            if str(w) in gone and isinstance(row, Mapping) and row.get("said") and "public" in row]
    if notes:
        kept_notes = {w: row for w, row in notes.items() if str(w) not in gone}
        out.pop("eta_note_learnt")
        if kept_notes:
            out["eta_note_learnt"] = kept_notes
    if said and isinstance(note := details.get("eta_note"), str):
        out["eta_note"] = _public(note, said)
    if progress:
        out["eta_progress"] = {w: None if str(w) in gone else f for w, f in progress.items()}
    for key in _BY_BLOCKER:
        rows = details.get(key)
        if isinstance(rows, Mapping):
            kept = {w: row for w, row in rows.items() if str(w) not in gone}
            out.pop(key)
            if kept:
                out[key] = kept
    eta = reason.get("eta")
    if idle:
        out["eta_idle_release"] = {w: {**h, "at": None} if str(w) in gone and isinstance(h, Mapping) else h
                                   for w, h in idle.items()}
        if eta is None and len(waits) == 1 and waits[0] in gone and isinstance(h := idle.get(waits[0]), Mapping) \
                and h.get("at"):  # its reclaim time is the ETA the waiter is given, worded as a release
            eta = h["at"]
    if start:
        if not gone & set(_ids(start.get("leases"))):
            out["eta_idle_at"] = start
        elif eta is None and start.get("at"):
            eta = start["at"]
    if eta is not None and reason.get("eta") is None:
        out["eta_code"] = "Projected"
    if moved_hidden and isinstance(moved, Mapping):
        said_from, said_to = moved_text(moved.get("from"), moved.get("to"))
        out["eta_moved"] = {**moved, "message": _PROGRESS_MOVE.format(frm=said_from, to=said_to)}
    elif said and isinstance(moved, Mapping) and isinstance(moved.get("message"), str):
        out["eta_moved"] = {**moved, "message": _public(moved["message"], said)}
    if withheld:
        out[WITHHELD_KEY] = withheld
    new = {k: v for k, v in reason.items() if k != "text"}
    new["details"] = out
    if eta is not None and reason.get("eta") is None:
        new["eta"], new["eta_reason"] = eta, ""
    return new


def held_for_others(reason: Mapping[str, Any]) -> dict[str, Any]:
    """A reason of :data:`STANDING_CODES` as a reader other than its owner and admins reads it:
    ``{"code": "Held", "message": "held", "eta_reason": "it waits until its owner or an admin acts", ...}``
    ("it waits for an admin" for ``OwnerRemoved``: its owner is gone and cannot act, new user 38 n17)
    — no ETA, no ``unblock`` (nothing is the reader's to do), ``details`` only its time limit
    (:data:`_HELD_KEPT`: not the owner's name, team, teams or when the hold began, nor the core's
    ``eta_code``), its place in the queue kept; any rendered ``text`` dropped (rendered again from this)."""
    details = reason.get("details") if isinstance(reason.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    kept = {k: details[k] for k in _HELD_KEPT if k in details}
    out: dict[str, Any] = {"code": HELD_CODE, "message": HELD_MESSAGE, "details": kept, "unblock": "",
                           "eta": None, "eta_reason": held_for_others_wait(reason.get("code"))}
    if reason.get("position") is not None:
        out["position"] = reason["position"]
    return out


def _map(details: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``details[key]`` when it is a mapping, else an empty one."""
    value = details.get(key)
    return value if isinstance(value, Mapping) else {}


def _public(text: str, said: Sequence[tuple[str, str]]) -> str:
    """``text`` with each note of ``said`` (``(as the core said it, without its learnt figure)``) in
    its public form."""
    for note, public in said:
        text = text.replace(note, public)
    return text


def _ids(values: Any) -> list[str]:
    """``values`` (a list of ids on the wire) as strings; [] for anything else."""
    if not isinstance(values, Sequence) or isinstance(values, str):
        return []
    return [str(v) for v in values]
