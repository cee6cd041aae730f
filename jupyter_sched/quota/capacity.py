"""Team guarantees against the GPUs that may get work now (hubadmin25 B12). Pure: no I/O, no clock.

The sum of the teams' guarantees per GPU model (and over any model) should not pass the GPUs of
that model that may get work — healthy, on a ready node (case 018). While a GPU is out (marked
unhealthy for an RMA, its node down or drained) the lines in force may pass it: that is said to the
admin as a warning naming the GPUs out and why, never an error — every line stays changeable. Only a
change that *raises* a model's total guarantee above the usable GPUs is refused (a new promise of a
withdrawn GPU, case 018): :func:`shortfalls` marks those ``raised``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model import ANY_MODEL, Inventory, Quota

__all__ = ["Shortfall", "shortfall_text", "shortfalls"]

_SHOWN = 3
"""GPUs out named in one sentence; more are counted (``and 5 more``)."""


@dataclass(frozen=True, slots=True)
class Shortfall:
    """One GPU model (or any model) whose teams are guaranteed more GPUs than may get work.

    Attributes:
        model: the GPU model, or :data:`~jupyter_sched.model.ANY_MODEL` for the any-model lines.
        promised: the sum of the team lines' guarantees, GPUs.
        before: that sum in the set the change replaces, GPUs (``promised`` when no change is asked).
        usable: the GPUs of the model that may get work now (healthy, on a ready node).
        installed: the GPUs of the model the inventory lists, usable or not.
        out: the GPUs listed but not usable, in words (``GPU-b0 on node-b marked unhealthy (ECC errors, RMA)``).
    """

    model: str
    promised: float
    before: float
    usable: int
    installed: int
    out: tuple[str, ...] = ()

    @property
    def raised(self) -> bool:
        """The change raises the model's total guarantee: refused (a new promise of GPUs that are out)."""
        return self.promised > self.before


def _team_sums(lines: Iterable[Quota]) -> dict[str, float]:
    sums: dict[str, float] = {}
    for q in lines:
        if q.user is None:  # a user's line is within its team's, never a promise of its own
            sums[q.gpu_model] = sums.get(q.gpu_model, 0.0) + q.guaranteed
    return sums


def _out(inventory: Inventory, model: str) -> tuple[str, ...]:
    """The GPUs of ``model`` (any model: all) that get no work now, in words, in inventory order."""
    said: list[str] = []
    for node in inventory.nodes:
        for gpu in node.gpus:
            if model != ANY_MODEL and gpu.model != model:
                continue
            if not node.ready:
                said.append(f"{gpu.uuid} on {node.name} (node not ready)")
            elif not gpu.healthy:
                why = f" ({gpu.health_reason})" if gpu.health_reason else ""
                said.append(f"{gpu.uuid} on {node.name} marked unhealthy{why}")
    return tuple(said)


def shortfalls(lines: Iterable[Quota], inventory: Inventory, before: Iterable[Quota] | None = None) -> list[Shortfall]:
    """The models whose team guarantees in ``lines`` pass the GPUs of ``inventory`` that may get work,
    in the order the lines first name them; ``before``: the lines the change replaces (None: no
    change, nothing is ``raised``). Models the inventory does not list count 0 usable GPUs."""
    lines = list(lines)
    sums = _team_sums(lines)
    was = sums if before is None else _team_sums(before)
    usable_by, installed_by = inventory.healthy_models(), inventory.models()
    found: list[Shortfall] = []
    for model, promised in sums.items():
        usable = sum(usable_by.values()) if model == ANY_MODEL else usable_by.get(model, 0)
        if promised <= usable:
            continue
        installed = sum(installed_by.values()) if model == ANY_MODEL else installed_by.get(model, 0)
        found.append(Shortfall(model=model, promised=promised, before=was.get(model, 0.0), usable=usable,
                               installed=installed, out=_out(inventory, model)))
    return found


def shortfall_text(s: Shortfall) -> str:
    """``teams are guaranteed 4 GPUs of L40S but only 3 of its 4 may get work now (GPU-b0 on node-b
    marked unhealthy (ECC errors, RMA))``; ``… but only 2 exist`` when every GPU listed may get work
    (the others are gone from the inventory). A raised total says what it was: ``… would be
    guaranteed 5 GPUs of L40S (4 before this change) …``."""
    what = "any model" if s.model == ANY_MODEL else s.model
    verb = f"would be guaranteed {s.promised:g} GPUs of {what} ({s.before:g} before this change)" if s.raised \
        else f"are guaranteed {s.promised:g} GPUs of {what}"
    if s.usable >= s.installed or not s.out:
        return f"teams {verb} but only {s.usable} exist"
    named = ", ".join(s.out[:_SHOWN]) + (f" and {len(s.out) - _SHOWN} more" if len(s.out) > _SHOWN else "")
    return f"teams {verb} but only {s.usable} of its {s.installed} may get work now ({named})"
