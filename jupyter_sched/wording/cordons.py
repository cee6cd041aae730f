"""A cordoned node in words: the one sentence every surface says it with (pending reasons, inventory,
``jupyter-sched status``, ``%gpu``, the panel, ``/metrics`` labels keep the reason).

``node n3 is cordoned for maintenance: PSU swap, by alice at 15:40 UTC`` — and, for a drain with
``--evict-after``, ``; work still on it is stopped at 17:40 UTC``. A node cordoned by Kubernetes
(``kubectl cordon``, ``spec.unschedulable``) and not here has no reason to say: ``node n3 is
cordoned``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import SchedError
from ..model.units import clock_text, gpus_phrase

if TYPE_CHECKING:  # the CLI's lean path imports wording; the model's dataclasses stay off it
    from ..model.resources import Cordon

__all__ = ["cordon_sentence", "cordon_wait_sentence", "drain_dict", "drain_text", "drained_sentence", "evict_clause"]


def cordon_sentence(node: str, cordon: Cordon | None, *, now: datetime | None = None) -> str:
    """``node n3 is cordoned for maintenance: PSU swap, by alice at 15:40 UTC`` (see the module
    docstring); ``now``: the reader's time (the date is left out on that day; None: always said)."""
    if cordon is None:
        return f"node {node} is cordoned"
    reason = cordon.reason.strip().rstrip(".") or "no reason given"
    said = f"node {node} is cordoned for maintenance: {reason}, by {cordon.by or 'an admin'} at {clock_text(cordon.at, now)}"
    return said + evict_clause(cordon, now=now)


def drained_sentence(node: str, cordon: Cordon) -> str:
    """Why work was stopped on a drained node, after "preempted: " (its job's message, its log's last
    line, the audit record): ``node n3 is drained for maintenance by alice (PSU swap)``."""
    reason = cordon.reason.strip().rstrip(".") or "no reason given"
    return f"node {node} is drained for maintenance by {cordon.by or 'an admin'} ({reason})"


def drain_dict(node: str, cordon: Cordon, noun: str, *, now: datetime | None = None) -> dict[str, Any]:
    """The drain of the node a piece of work runs on, as its answer's ``drain`` carries it (hubadmin26 B1: the
    owner of work about to be evicted was told nothing on its own line): ``{node, by, reason, evict_at, text}``,
    ``text`` the one sentence the CLI, the magics and the panel show — ``node-a is being drained by boss (BIOS
    update): this job is stopped at 18:37 UTC and requeued — checkpoint before then``; a lease's ``… this lease
    ends at 18:37 UTC — save your work before then``. ``noun``: ``job``, ``lease`` or ``service``; ``now``: the
    reader's time (the date left out on that day). Only for a drain (``cordon.evict_at`` set)."""
    assert cordon.evict_at is not None
    reason = cordon.reason.strip().rstrip(".") or "no reason given"
    at = clock_text(cordon.evict_at, now)
    past = now is not None and cordon.evict_at <= now
    if noun == "lease":
        fate = f"this lease {'ended' if past else 'ends'} at {at} — save your work before then"
    else:
        fate = (f"this {noun} {'was' if past else 'is'} stopped at {at} and requeued — "
                + ("it starts again elsewhere" if past else "checkpoint before then"))
    return {"node": node, "by": cordon.by or "an admin", "reason": reason, "evict_at": cordon.evict_at.isoformat(),
            "text": f"{node} is being drained by {cordon.by or 'an admin'} ({reason}): {fate}"}


def drain_text(job: Mapping[str, Any]) -> str:
    """The sentence of a job answer's ``drain`` (its node is drained: :func:`drain_dict`), "" when none or the
    work no longer holds GPUs — the one wording of the CLI's ``jobs`` and ``status JOB``, the magics' job views
    and (``drainLine``) the panel's My work — its clocks (``stopped at 18:37 UTC``) in a known reader's zone, as the
    line's others (newuser38 n30)."""
    drain = job.get("drain")
    if not isinstance(drain, Mapping) or job.get("state") not in ("admitted", "running"):
        return ""
    from ..model.periods import said_to_reader

    return said_to_reader(str(drain.get("text") or ""))


def evict_clause(cordon: Cordon, *, now: datetime | None = None) -> str:
    """``; work still on it is stopped at 17:40 UTC`` for a drain with a deadline (``""`` without):
    the stop has the normal grace and checkpoint signal, and a job goes back to the queue."""
    if cordon.evict_at is None:
        return ""
    verb = "was stopped" if now is not None and cordon.evict_at <= now else "is stopped"
    return f"; work still on it {verb} at {clock_text(cordon.evict_at, now)} (requeued)"


def cordon_wait_sentence(details: Mapping[str, Any], *, now: datetime | None = None) -> str:
    """Why a job waits on a cordoned node (reason code ``NodeCordoned``), from the reason's details
    (``requested``, ``model``, ``free``, ``cordons``: ``[{"node", "reason", "by", "at", "evict_at"}]``,
    as :func:`~jupyter_sched.model.codec.cordon_to_dict` with the node): ``needs 2 A100 GPUs, 0 free on
    the other nodes; node n3 is cordoned for maintenance: PSU swap, by alice at 15:40 UTC``. The core
    says it with no clock (the date always written); the renderer again with the reader's."""
    cordons = [c for c in details.get("cordons") or () if isinstance(c, Mapping)]
    requested = details.get("requested")
    # no "other nodes" where the cordoned node is the only one (newuser27 n5)
    others = "" if details.get("no_other_nodes") else f", {details.get('free', 0)} free on the other nodes"
    head = f"needs {gpus_phrase(requested, str(details.get('model') or ''))}{others}" if requested is not None else ""
    said = [cordon_sentence(str(c.get("node") or "?"), _cordon_of(c), now=now) for c in cordons[:1]]
    if len(cordons) > 1:
        more = len(cordons) - 1
        said.append(f"{more} more node{'s are' if more != 1 else ' is'} cordoned "
                    f"({', '.join(str(c.get('node')) for c in cordons[1:6])}{', …' if more > 5 else ''})")
    return "; ".join(part for part in (head, *said) if part)


def _cordon_of(d: Mapping[str, Any]) -> Cordon | None:
    """A cordon of the reason's details (None: a node cordoned outside the scheduler, e.g. ``kubectl cordon``)."""
    if not d.get("at"):
        return None
    from ..model.codec import cordon_from_dict  # lazily: see the TYPE_CHECKING import above

    try:
        return cordon_from_dict(d)
    except SchedError:
        return None
