"""kube-scheduler's ``FailedScheduling`` text → stable categories with counts and one plain sentence (pure).

The message has the shape (kube-scheduler ``FitError``)::

    0/14 nodes are available: 3 node(s) didn't match Pod's node affinity/selector, 3 node(s) had
    taint {node-role.kubernetes.io/infra: }, that the pod didn't tolerate, 5 Insufficient
    nvidia.com/gpu. preemption: 0/14 nodes are available: ...

:func:`parse_failed_scheduling` reads it into :class:`SchedulingFailure`: the node count, a count
per *category* (names are stable; tests and the UI key on them), the preemption clause (kept:
it says whether waiting can help), the taints nobody tolerated, and every phrase it does not know
verbatim under ``other`` (never dropped). A node may be counted under several categories, so the
counts may add up to more than the nodes (case 027 E3) — that is not a parse error; when they add
up to fewer, the rest is ``unexplained`` (E1: the preemption clause is about them).

Categories: ``insufficient_gpu`` (``nvidia.com/gpu`` or a MIG resource), ``insufficient_cpu``,
``insufficient_memory``, ``insufficient_other``, ``selector_mismatch``, ``untolerated_taint``,
``unschedulable`` (cordoned), ``not_ready``, ``volume``, ``ports``, ``too_many_pods``,
``unexplained``; ``other`` is a list of phrases.

:func:`failure_sentence` turns it into one sentence for the user and says when the job's manifest,
not the cluster, is at fault: a pod that does not tolerate the GPU taint (``nvidia.com/gpu``) of
GPU nodes, or a node selector no node matches (case 019/027).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .manifests import GPU_RESOURCE, MIG_RESOURCE_PREFIX

__all__ = ["CATEGORIES", "GPU_TAINT_KEY", "SchedulingFailure", "failure_sentence", "parse_failed_scheduling"]

GPU_TAINT_KEY = "nvidia.com/gpu"
"""The taint GPU node pools commonly carry (GKE, EKS, AKS GPU pools; the GPU Operator docs)."""

CATEGORIES = ("insufficient_gpu", "insufficient_cpu", "insufficient_memory", "insufficient_other",
              "selector_mismatch", "untolerated_taint", "unschedulable", "not_ready", "volume", "ports",
              "too_many_pods", "unexplained")

_HEAD = re.compile(r"(?P<available>\d+)/(?P<total>\d+) nodes are available")
_TAINT = re.compile(r"taint \{(?P<key>[^:}]+):?\s*(?P<value>[^}]*)\}")
_PREEMPT_VICTIMS = re.compile(r"No preemption victims found", re.IGNORECASE)
_PREEMPT_USELESS = re.compile(r"Preemption is not helpful", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class SchedulingFailure:
    """A parsed ``FailedScheduling`` message (module docstring).

    Attributes:
        nodes: nodes the scheduler considered (the ``/N`` of ``0/N nodes are available``; 0 when absent).
        counts: nodes per category (only categories that occur).
        preemption: ``"no victims"``, ``"not helpful"``, the clause's text otherwise, or ``""``.
        taints: taint keys nobody tolerated, in order of appearance.
        other: phrases not understood, verbatim with their counts.
        text: the whole message.
    """

    nodes: int
    counts: Mapping[str, int] = field(default_factory=dict)
    preemption: str = ""
    taints: tuple[str, ...] = ()
    other: tuple[str, ...] = ()
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"nodes": 8, "insufficient_gpu": 1, "unexplained": 7, "preemption": "no victims"}`` plus
        ``other`` when present (the shape case 027 names; ``taints`` stay an attribute)."""
        out: dict[str, Any] = {"nodes": self.nodes, **self.counts}
        if self.preemption:
            out["preemption"] = self.preemption
        if self.other:
            out["other"] = list(self.other)
        return out


def _split(tail: str) -> list[tuple[int, str]]:
    """``3 node(s) x, 5 Insufficient y`` → ``[(3, "node(s) x"), (5, "Insufficient y")]``: a new
    item starts at ``, <number> `` (commas inside taint braces and phrases stay put)."""
    items: list[tuple[int, str]] = []
    for match in re.finditer(r"(?:^|,\s+)(\d+)\s+(.+?)(?=,\s+\d+\s|$)", tail):
        items.append((int(match.group(1)), match.group(2).strip().rstrip(".")))
    return items


def _category(phrase: str) -> str | None:
    lower = phrase.lower()
    if lower.startswith("insufficient "):
        resource = phrase.split(None, 1)[1].strip()
        if resource == GPU_RESOURCE or resource.startswith(MIG_RESOURCE_PREFIX):
            return "insufficient_gpu"
        return {"cpu": "insufficient_cpu", "memory": "insufficient_memory"}.get(resource, "insufficient_other")
    if "didn't match" in lower and ("affinity" in lower or "selector" in lower):
        return "selector_mismatch"
    if "taint" in lower and ("tolerate" in lower or "untolerated" in lower):
        return "not_ready" if "node.kubernetes.io/not-ready" in lower or "unreachable" in lower else "untolerated_taint"
    if "unschedulable" in lower:
        return "unschedulable"
    if "volume" in lower:
        return "volume"
    if "free ports" in lower:
        return "ports"
    if "too many pods" in lower:
        return "too_many_pods"
    return None


def parse_failed_scheduling(message: str) -> SchedulingFailure:
    """Read a ``FailedScheduling`` message into categories with counts (module docstring). Never
    raises: text it cannot read is kept under ``other``."""
    text = message.strip()
    main, _, preempt = text.partition(" preemption:")
    head = _HEAD.search(main)
    nodes = int(head.group("total")) if head else 0
    tail = main[head.end():].lstrip(": ").strip() if head else main
    counts: dict[str, int] = {}
    taints: list[str] = []
    other: list[str] = []
    for count, phrase in _split(tail) if head else []:
        category = _category(phrase)
        if category is None:
            other.append(f"{count} {phrase}")
            continue
        counts[category] = counts.get(category, 0) + count
        if category == "untolerated_taint":
            taint = _TAINT.search(phrase)
            if taint is not None and taint.group("key").strip() not in taints:
                taints.append(taint.group("key").strip())
    if not head and tail:
        other.append(tail.rstrip("."))
    explained = sum(counts.values()) + sum(int(o.split(" ", 1)[0]) for o in other if o.split(" ", 1)[0].isdigit())
    if nodes and explained < nodes:
        counts["unexplained"] = nodes - explained
    return SchedulingFailure(nodes=nodes, counts=counts, preemption=_preemption(preempt), taints=tuple(taints),
                             other=tuple(other), text=text)


def _preemption(clause: str) -> str:
    """``no victims`` when any node has no victim to evict, ``not helpful`` when preemption would
    help on no node, else the clause itself ("" when there is none)."""
    clause = clause.strip()
    if not clause:
        return ""
    if _PREEMPT_VICTIMS.search(clause):
        return "no victims"
    head = _HEAD.search(clause)
    items = _split(clause[head.end():].lstrip(": ").strip()) if head else []
    if items and all(_PREEMPT_USELESS.search(phrase) for _, phrase in items):
        return "not helpful"
    return clause.rstrip(".")


def _nodes(n: int) -> str:
    return f"{n} node{'s' if n != 1 else ''}"


def failure_sentence(failure: SchedulingFailure, *,
                     gpu_taint_keys: tuple[str, ...] = (GPU_TAINT_KEY,)) -> tuple[str, str, str]:
    """``(sentence, manifest problem or "", what would unblock it)`` for one parsed failure.

    E1 → ``1 of 8 nodes has GPUs and none free; no lower-priority pod to preempt``;
    E2 → ``5 GPU nodes are full; 9 nodes are not eligible (3 selector, 6 taint)``;
    E3 → ``pod lacks toleration for nvidia.com/gpu taint`` with manifest problem
    ``missing_gpu_toleration`` (any of ``gpu_taint_keys``, the taints GPU nodes carry). A selector
    that no node matches is manifest problem ``selector_matches_no_node``.
    """
    c = failure.counts
    gpu = c.get("insufficient_gpu", 0)
    selector, taint = c.get("selector_mismatch", 0), c.get("untolerated_taint", 0)
    gpu_taint = next((t for t in failure.taints if t in gpu_taint_keys or t == GPU_TAINT_KEY), None)
    if gpu_taint is not None:
        return (f"pod lacks toleration for {gpu_taint} taint", "missing_gpu_toleration",
                f"the job's manifest is wrong, not the cluster: GPU nodes carry the {gpu_taint} taint; add the key "
                "to the Kubernetes executor's gpu_taint_keys setting (its GPU pods then tolerate it) and resubmit")
    if failure.nodes and selector >= failure.nodes:
        return ("no node matches the pod's node selector or affinity", "selector_matches_no_node",
                "the job's manifest is wrong: check its node selector / GPU model against the nodes' labels")
    preempt = {"no victims": "; no lower-priority pod to preempt",
               "not helpful": "; preempting other pods would not help"}.get(failure.preemption, "")
    if gpu:
        ineligible = selector + taint + c.get("unschedulable", 0) + c.get("not_ready", 0)
        if ineligible:
            parts = [f"{n} {word}" for n, word in ((selector, "selector"), (taint, "taint"),
                                                   (c.get("unschedulable", 0), "cordoned"),
                                                   (c.get("not_ready", 0), "not ready")) if n]
            verb = "are" if ineligible != 1 else "is"
            full = f"{gpu} GPU node{'s are' if gpu != 1 else ' is'} full"
            return (f"{full}; {_nodes(ineligible)} {verb} not eligible ({', '.join(parts)}){preempt}", "",
                    "wait for GPUs to be freed on the eligible nodes")
        has = "has" if gpu == 1 else "have"
        return (f"{gpu} of {_nodes(failure.nodes)} {has} GPUs and none free{preempt}", "",
                "wait for GPUs to be freed, or ask for fewer GPUs")
    words = {"insufficient_cpu": "too little CPU", "insufficient_memory": "too little memory",
             "insufficient_other": "too little of another resource", "selector_mismatch": "selector",
             "untolerated_taint": "taint", "unschedulable": "cordoned", "not_ready": "not ready",
             "volume": "volume conflict", "ports": "no free port", "too_many_pods": "too many pods",
             "unexplained": "no reason given"}
    parts = [f"{n} {words[k]}" for k, n in c.items() if n and k in words]
    parts.extend(failure.other)
    if not parts:
        return (failure.text.rstrip(".") or "Kubernetes cannot place the pod", "",
                "check the node selector, taints and resource requests of the job")
    return (f"no node fits ({', '.join(parts)}){preempt}", "",
            "check the node selector, taints and resource requests of the job")
