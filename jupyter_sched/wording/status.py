"""The summary ``jupyter-sched status`` prints and ``%schedule status`` (no job) shows, in one place
(new user 12, N4: ``%schedule status`` alone was a usage error while the CLI's word meant this)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..model.periods import this_period_text
from ..model.units import clock_text, gpu_hours_phrase, gpu_hours_text
from .cordons import drain_text
from .jobs import gone_text, held_lines, my_work, projected_text, unhealthy_text
from .quota import quota_lines
from .reasons import wire_time, work_named
from .reported import progress_text
from .usage import last_days

__all__ = ["PROGRESS_SHOWN", "host_split_text", "status_lines", "waiting_on_you_text"]

PROGRESS_SHOWN = 5
"""``progress`` lines the summary shows at most (``jupyter-sched jobs`` lists them all)."""


_SPLIT_NODES = 3
"""GPU nodes the ``host`` line names (their part per GPU), the rest counted."""


def host_split_text(config: Mapping[str, Any], inventory: Mapping[str, Any]) -> str:
    """The ``host`` line: whether a GPU node's CPUs and host memory are split among its GPUs
    (``GET config``'s ``gpu_node_host_share``) and each such node's part per GPU — ``a GPU node's CPUs and host
    memory are split among its GPUs (c.SchedApp.gpu_node_host_share): g1 gives 4 CPU cores and 16 GiB per GPU``;
    "" where no GPU node tracks either (nothing is split) or the server does not say (an older one). The words a
    ``--cpu``/``--memory`` refusal or wait rests on, readable before one (s39-hostask's left-over)."""
    split = config.get("gpu_node_host_share")
    if not isinstance(split, bool):
        return ""
    parts = []
    for node in inventory.get("nodes") or ():
        gpus = len(node.get("gpus") or ()) if isinstance(node, Mapping) else 0
        cpu, mem = (int(node.get("cpu_millis") or 0), int(node.get("memory_mib") or 0)) if gpus else (0, 0)
        if cpu or mem:
            each = [f"{cpu // gpus / 1000:g} CPU core{'' if cpu // gpus <= 1000 else 's'}" if cpu else "",
                    (f"{mem // gpus // 1024} GiB" if (mem // gpus) % 1024 == 0 else f"{mem // gpus} MiB") if mem else ""]
            parts.append(f"{node.get('name')} gives {' and '.join(e for e in each if e)} per GPU")
    if not parts:
        return ""
    if not split:
        return ("c.SchedApp.gpu_node_host_share is False: a job may reserve any of a GPU node's CPUs and host memory, "
                "and work without GPUs may keep its GPUs idle")
    more = len(parts) - _SPLIT_NODES
    return ("a GPU node's CPUs and host memory are split among its GPUs (c.SchedApp.gpu_node_host_share): "
            + "; ".join(parts[:_SPLIT_NODES]) + (f"; {more} more node{'s' if more != 1 else ''}" if more > 0 else "")
            + " — a job without GPUs reserves none of it")


def _teams_said(me: Mapping[str, Any]) -> str:
    """``, team ml`` — or every team of a user in several, the default marked: ``, teams ml (default), cv``
    (newuser22 N12: a user in ml and cv was shown ``team ml`` alone, while GET me lists both)."""
    team = me.get("team")
    teams = [str(t) for t in me.get("teams") or () if isinstance(t, str)]
    if team and team not in teams:
        teams.insert(0, str(team))
    if len(teams) <= 1:
        return f", team {teams[0]}" if teams else ""
    return ", teams " + ", ".join(f"{t} (default)" if t == team else t for t in teams)


def status_lines(url: str, config: Mapping[str, Any], me: Mapping[str, Any], inventory: Mapping[str, Any], *,
                 stopping: Sequence[Mapping[str, Any]] = (), idle: Mapping[str, str] | None = None,
                 running: Sequence[Mapping[str, Any]] = (), now: datetime | None = None,
                 gone: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """``server …``, ``user …``, ``gpus …`` (``nvml …``), ``my work …``, one ``progress …`` line per
    running job that reported (``train (j-1): 42 % done, reported 02:10 UTC (3m ago)``, at most
    :data:`PROGRESS_SHOWN`), ``quota …`` and one ``idle …`` line per warned job, from ``GET config``,
    ``GET me`` and ``GET inventory``; ``stopping``: my GPU-holding jobs in a stop's grace
    (:func:`~.jobs.my_work`); ``idle``: ``{job id: idle note}``; ``running``: my GPU-holding jobs
    (REST shape, with their ``progress``), said as of ``now`` (UTC); ``gone``: my GPU-holding work on
    GPUs the inventory no longer lists (``gone_gpus``), one line each under ``my work`` in the words of
    ``jobs`` and ``queue`` (:func:`~.jobs.gone_text`; verify 23, V4: the summary said "2 jobs running, on
    2 GPUs" while one ran on a GPU gone from the inventory)."""
    gpus = inventory.get("gpus") or []
    label = " (simulated)" if inventory.get("simulated") else ""
    nvml = inventory.get("nvml") or {}
    lines = [f"server     {url}  jupyter_sched {config.get('version', '?')}"]
    if config.get("reinstalled"):  # before any job waits on it (newuser38 n12: status said nothing)
        lines.append(f"{'':<11}{config['reinstalled']}")
    lines.append(f"user       {me.get('user')}{' (admin)' if me.get('is_admin') else ''}{_teams_said(me)}")
    if me.get("team_note"):  # a hub group joined or left: where new work goes (newuser38 N3)
        lines.append(f"{'':<11}{me['team_note']}")
    if me.get("jobs_cannot_run"):  # hub user with no OS account to run as: not all green (newuser38 n16)
        lines.append(f"jobs       {me['jobs_cannot_run']}")
    models: dict[str, int] = {}
    for gpu in gpus:
        models[gpu["model"]] = models.get(gpu["model"], 0) + 1
    summary = ", ".join(f"{n} x {m}" for m, n in sorted(models.items())) or "none"
    lines.append(f"gpus       {len(gpus)}{label}: {summary}")
    if nvml and not nvml.get("available", True):
        why = str(nvml.get("error") or "").rstrip(".")
        if inventory.get("simulated"):  # expected: no NVIDIA driver, so the GPUs above are simulated
            lines.append(f"nvml       not used: the GPUs are simulated — {why}")
        else:
            lines.append(f"nvml       unavailable: {why}")
    if host := host_split_text(config, inventory):  # what a cpu/memory ask on a GPU node may take (session 40)
        lines.append(f"host       {host}")
    for node in inventory.get("nodes") or []:  # cordoned for maintenance, with the admin's reason (hubadmin24)
        if isinstance(node, Mapping) and node.get("unschedulable"):
            said = (node.get("cordon") or {}).get("text") or f"node {node.get('name')} is cordoned"
            lines.append(f"node       {said}")
    for warning in inventory.get("warnings") or []:  # admins: a bad inventory file edit (hub admin 22, H12)
        lines.append(f"inventory  {warning}")
    lines.append(f"my work    {my_work(me, stopping)}")
    lines.extend(f"{'':<11}{line}" for line in held_lines(me))  # several kinds of hold, each with its fix (n24)
    waiting = me.get("waiting_on_you")
    if isinstance(waiting, Mapping) and waiting.get("text"):  # someone waits on my GPUs (newuser31 n14)
        lines.append(f"{'':<11}{waiting['text']}")
    lines.extend(f"{'':<11}{work_named(str(job.get('id')), job.get('name'))}: {text}" for job in gone
                 for text in (gone_text(job), unhealthy_text(job), drain_text(job)) if text)  # unhealthy (B14), drained (B1)
    # with the end its waiters are given, where it is projected before its limit's (new user 22, N10)
    said = [f"{work_named(str(job.get('id')), job.get('name'))}: {text}"
            f"{f' · {ends}' if (ends := projected_text(job, now, brief=True)) else ''}" for job in running
            if (text := progress_text(job, now))]
    if len(said) > PROGRESS_SHOWN:  # a sweep of 40 reporting jobs is not 40 lines of a summary
        more = len(said) - PROGRESS_SHOWN + 1
        said = [*said[:PROGRESS_SHOWN - 1], f"and {more} more (`jupyter-sched jobs` or `%schedule jobs` lists them)"]
    lines.extend(f"{'progress' if i == 0 else '':<11}{line}" for i, line in enumerate(said))
    # new user 11, N21: first met as a pending reason or a 422; one line per team charged (new user 18, N1)
    lines.extend(f"{'quota' if i == 0 else '':<11}{line}" for i, line in enumerate(quota_lines(me, now)))
    lines.extend(f"{'budget' if i == 0 else '':<11}{line}" for i, line in enumerate(budget_lines(me, now)))
    hours = me.get("gpu_hours_7d")
    if isinstance(hours, (int, float)):  # a user's own GPU-hours, asked for as `jupyter-sched usage` (new user 14, N25)
        lines.append(f"usage      {gpu_hours_phrase(hours, f'{hours:.2f}')} allocated to you "
                     f"{last_days(me.get('gpu_hours_since'), now)}")  # the one period, with its start (s23)
    for job_id, note in (idle or {}).items():  # a warned lease loses its GPUs (new user 4)
        lines.append(f"idle       {job_id}: {note}")
    return lines


def waiting_on_you_text(jobs: int, leases: int, users: Sequence[str]) -> str:
    """``1 job of another user (n31a) waits for GPUs you hold``; ``2 jobs and 1 lease of other users (n31a, n31c)
    wait for GPUs you hold`` — what waits on the reader's GPU-holding work (``GET me``'s ``waiting_on_you``:
    :mod:`jupyter_sched.engine.waiting_on`; newuser31 n14: n31b held every GPU and was never told n31a waited).
    Owners only, as queue lines show them: no job's name or command. "" when nothing waits."""
    parts = [f"{n} {noun}{'s' if n != 1 else ''}" for n, noun in ((jobs, "job"), (leases, "lease")) if n > 0]
    if not parts:
        return ""
    many = jobs + leases > 1
    who = "another user" if len(users) == 1 else "other users"
    named = f" ({', '.join(users)})" if users else ""
    return f"{' and '.join(parts)} of {who}{named} {'wait' if many else 'waits'} for GPUs you hold"


def budget_lines(me: Mapping[str, Any], now: datetime | None = None) -> list[str]:
    """One line per GPU-hour budget that governs the caller (``GET me``'s ``budgets``: each of their
    teams' and their own in them, the default team's first; newuser36 n9): ``team nlp: 0.48 of 0.3 GPU-hours used this month — spent: new GPU jobs
    wait until Jan 1 00:00 UTC (or until an admin raises it); CPU-only jobs run`` or ``team nlp: 0.12 of
    0.3 GPU-hours used this month, resets Jan 1 00:00 UTC`` (hubadmin24 B8: ``status`` never said the
    budget, so a user could not see it was spent). ``now``: dates the reset only when not today."""
    out = []
    for budget in me.get("budgets") or []:
        if not isinstance(budget, Mapping):
            continue
        used, limit = budget.get("used_gpu_hours"), budget.get("gpu_hours")
        if not isinstance(used, (int, float)) or not isinstance(limit, (int, float)):
            continue
        who = f"team {budget.get('team')}" if budget.get("user") is None else f"you in team {budget.get('team')}"
        numbers = (f"{gpu_hours_text(float(used))} of {gpu_hours_phrase(float(limit))} used "
                   f"{this_period_text(budget.get('period'))}")
        reset = wire_time(budget.get("resets_at"))
        when = clock_text(reset, now) if reset is not None else f"the next {budget.get('period')}"
        if used >= limit:
            out.append(f"{who}: {numbers} — spent: new GPU jobs wait until {when} (or until an admin raises it); "
                       "CPU-only jobs run")
        else:
            out.append(f"{who}: {numbers}, resets {when}")
    return out
