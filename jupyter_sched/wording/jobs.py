"""One line per job or lease, and what a cancel or a release did — shared by the magics and the CLI.

Inputs are jobs as the REST API carries them (:func:`jupyter_sched.model.codec.job_to_dict`).
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..model.names import LEASE_NAMES, kernel_named
from ..model.units import clock_text, format_duration, gpus_phrase, relative_text
from ..textsafe import printable_line, printable_name
from .cordons import drain_text
from .exit_codes import exit_code_words
from .preemption import planned_preemption_text, release_cooldown_text
from .projected import projected_end_text
from .reasons import clock_times, refusal_line, render_reason, wire_time
from .reported import progress_text
from .time_limits import limit_source_words, planned_limit_line

__all__ = ["UNSEEN_KERNEL_KEEP", "ended_text", "run_file_hint", "searched_path_text", "unhealthy_gpu_dict", "unhealthy_text", "BULK_STATES", "IN_CLUSTER", "LEASE_END_CAUSES", "GPU_MILLI_ENV", "SHARED_GPU_NOTE", "TERMINAL_STATES", "granted_milli", "granted_words", "bulk_cancel_answers", "bulk_cancel_plan", "nothing_to_cancel",
           "bulk_cancel_summary", "reclaim_cost_text",
           "cancel_outcome", "cluster_wait", "LOG_QUOTES", "split_log_quote", "in_bulk_cancel", "work_count", "ends_by", "planned_text", "projected_text", "gpus_text", "granted_uuids", "fit_name", "GONE_WORDS", "gone_text", "idle_note", "KERNEL_TOLD", "keepalive_line", "busy_bound_words", "kept_alive_until", "lease_end_words", "idle_release_words", "job_detail", "limit_end", "job_head", "job_line", "job_outcome", "held_lines", "my_work", "named", "preemptor", "public_serving", "restarted_text", "serving_text", "still_going", "stop_detail", "stopping_text",
           "lease_end_message", "lease_given_back", "work_name", "SERVER_CAUSES", "state_filter", "state_word", "changed_line",
           "same_name_note", "dryrun_line", "never_here", "not_kept_text"]

TERMINAL_STATES = frozenset({"succeeded", "failed", "cancelled", "lost", "rejected"})
WAITING_STATES = frozenset({"pending", "preempted"})


def never_here(said: str) -> str:
    """A dry run's answer to a request that can never start here (``said``: the refusal's sentence)."""
    return f"Would never start here: {said}"


def dryrun_line(answer: Mapping[str, Any], now: datetime) -> str:
    """One line for a dry-run answer (``POST dryrun``): fits now / when / never, and where — said alike by
    ``%schedule dryrun`` and ``jupyter-sched submit --dry-run`` (newuser26 N8). ``now``: the reader's clock."""
    fits = answer.get("fits", answer.get("would_fit"))
    where = answer.get("allocation") or answer.get("placement")
    where_text = ""
    if isinstance(where, Mapping):
        uuids = ", ".join(str(uuid) for uuid in where.get("gpu_uuids") or [])
        # a 0-GPU job's place: "on vm (no GPUs)", not "on vm: " and nothing (newuser27 n7)
        where_text = f" on {where.get('node')}: {uuids}" if uuids else f" on {where.get('node')} (no GPUs)"
    reason = answer.get("reason")
    if fits:
        return "Would start now" + where_text
    if answer.get("never") and isinstance(reason, Mapping):  # not a wait: it can never run here
        text = render_reason(reason, never=True)
        return never_here(refusal_line(text.summary, text.unblock))  # as a refusal says it (newuser32 n1)
    if isinstance(reason, Mapping):
        return "Would wait: " + render_reason(reason, now=now, relative=True, kind="", mine=True).line
    return f"Would not start now: {answer}"


def same_name_note(name: str, others: Sequence[tuple[str, str, datetime]], now: datetime) -> str:
    """The submit note of a job named as the caller's live job(s) ``others`` — ``(id, state, since)``,
    oldest first: a re-run cell (Shift-Enter twice, "Run all" again) or ``submit --name X`` while X runs
    started a second job silently, holding GPUs twice (newuser26 N2). Said, never refused: a sweep may
    reuse a name on purpose. ``now``: the clock the times are said on (UTC). "cancel the older, j-…" names no
    command: the note is said by every surface, each with its own way to cancel (newuser32 n4: a notebook was
    told "`jupyter-sched cancel j-…` (%schedule cancel j-…)", the CLI's command first)."""
    first, state, since = others[0]
    more = f", and {len(others) - 1} more of that name" if len(others) > 1 else ""
    doing = "waiting" if state in WAITING_STATES else "running" if state == "running" else state
    return (f"a job named {printable_name(name)[:80]!r} is already {doing} ({first}, submitted "
            f"{clock_text(since, now)}{more}): this is another one — if re-running it was a slip, cancel the older, "
            f"{first}")


IN_CLUSTER = "pending (in the cluster)"
"""How an ``admitted`` job with a reason reads: the scheduler gave it GPUs, but the cluster has not
started it (e.g. Kubernetes pods that cannot be scheduled — FailedScheduling, case 027). It is
not running, and "admitted" alone would read as if it were."""


def cluster_wait(job: Mapping[str, Any]) -> str:
    """The reason an admitted job has not started in the cluster, one sentence; "" when it has
    none (an admitted job on its way to running)."""
    reason = job.get("reason")
    if job.get("state") != "admitted" or not isinstance(reason, Mapping):
        return ""
    text = render_reason(reason)
    return " ".join(part for part in (text.summary, text.unblock) if part)


STARTING = "starting"
"""How an ``admitted`` job reads while it is on its way to running (GPUs granted, process not yet
started; usually under a second). New users 9, 10 and 11 (N4): ``%schedule queue`` said
"admitted" for a job the CLI listed as running a moment later, a word said nowhere else."""


def state_word(job: Mapping[str, Any]) -> str:
    """The job's state for people: its wire state, except :data:`IN_CLUSTER` for an admitted job
    the cluster holds back, :data:`STARTING` for one on its way to running and ``stopping`` for work
    in the grace of a stop (:func:`stopping_text`). An ended lease is ``cancelled``, as REST's
    documented ``state`` says it (new user 17, N23: the CLI and the panel said ``released``, every
    REST body ``cancelled``); how it ended ("released by root …") is its message."""
    if stopping_text(job, None):
        return "stopping"
    if cluster_wait(job):
        return IN_CLUSTER
    return STARTING if job.get("state") == "admitted" else str(job.get("state"))


def state_filter(state: str | None) -> tuple[str | None, Callable[[Mapping[str, Any]], bool]]:
    """``--state`` of a job list as people say states → ``(the server's state query, row test)``.

    ``stopping`` (running work in a stop's grace, :func:`stopping_text`) is a word of
    :func:`state_word`, not a state on the wire (new user 9, N12: ``--state stopping`` was refused
    though the lists show it): asked for as ``running`` and kept by its word; ``released`` is kept
    as a filter of ended (``cancelled``) leases, as ``GET jobs?state=released`` is."""
    if not state:
        return state, lambda job: True
    words = [w.strip() for w in state.split(",") if w.strip()]
    wire = {"stopping": "running", "released": "cancelled", STARTING: "admitted"}
    query = ",".join(dict.fromkeys(wire.get(w, w) for w in words))
    wanted = set(words)

    def keep(job: Mapping[str, Any]) -> bool:
        word = state_word(job)
        if "released" in wanted and job.get("kind") == "lease" and job.get("state") == "cancelled":
            return True
        return word in wanted or (str(job.get("state")) in wanted and (word not in wire or word == STARTING))

    return query, keep


_STOP_CAUSES = {"cancel": "cancel requested", "timeout": "time limit reached", "preempt": "preempted",
                "idle": "reclaimed as idle", "idle_stop": "reclaimed as idle",
                "budget": "released: the GPU-hour budget is spent"}


def stopping_text(job: Mapping[str, Any], now: datetime | None) -> str:
    """``stopping (cancel requested by root at 04:08:01 UTC; killed at 04:08:11 UTC)`` for work still
    holding GPUs after a stop was asked for (``stopping_since``; who and why from ``stop_requested``,
    else the job's message); "" otherwise. New user 8, N13: for the whole grace (60 s for real jobs)
    ``jobs``, ``queue`` and ``%schedule status`` said "running", which read as a failed cancel."""
    since = wire_time(job.get("stopping_since"))
    if since is None or job.get("state") not in ("admitted", "running"):
        return ""
    stop = job.get("stop_requested")
    stop = stop if isinstance(stop, Mapping) else {}
    cause = _STOP_CAUSES.get(str(stop.get("intent")), "")
    by = str(stop.get("by") or "")
    if not cause:  # a list row of an older server: its message says it ("cancel requested by root")
        cause = printable_line(str(job.get("message") or "")).split(";")[0].strip() or "stop requested"
        by = ""
    # both times by the one clock renderer, in the reader's zone (newuser29 N5: "at 07:04 CET UTC; killed at
    # 06:04:46 UTC" — the zone's name with UTC after it, and the kill time in another zone)
    clock = _clock_of(since.replace(microsecond=0), now or since)
    said = f"{cause}{f' by {by}' if by and by != 'scheduler' and ' by ' not in cause else ''} at {clock}"
    kill = wire_time(stop.get("kill_at"))
    if kill is not None:
        said += f"; killed at {_clock_of(kill.replace(microsecond=0), now or since, seconds=True)} if still running"
    return f"stopping ({said})"


def stop_detail(job: Mapping[str, Any], now: datetime | None) -> str:
    """:func:`stopping_text` without its "stopping (…)" frame, for a column beside a ``stopping``
    state: ``cancel requested by ann at 07:33:06 UTC; killed at 07:33:16 UTC if still running``. Once a
    stop is asked for, that is when the work ends, not its time limit (new user 9); "" otherwise."""
    return stopping_text(job, now).removeprefix("stopping (").removesuffix(")")


def my_work(me: Mapping[str, Any], stopping: Sequence[Mapping[str, Any]] = ()) -> str:
    """``2 jobs running, 1 lease, on 3 GPUs; 5 pending`` from ``GET me`` (``in_use``, ``pending``);
    jobs in a stop's grace (``in_use.stopping``) are said apart: ``1 job running, 1 stopping (cancel
    requested by ann at 06:50:01 UTC; killed at 06:50:31 UTC if still running), on 2 GPUs`` — the
    words of :func:`stopping_text` when ``stopping`` holds that one job's dict (new user 8, N13:
    ``status`` said "1 job running" during a cancel's grace)."""
    in_use = me.get("in_use") if isinstance(me.get("in_use"), Mapping) else {}
    assert isinstance(in_use, Mapping)
    jobs, leases, pending = int(in_use.get("jobs") or 0), int(in_use.get("leases") or 0), int(me.get("pending") or 0)
    halting = min(int(in_use.get("stopping") or 0), jobs)
    running = jobs - halting
    parts = []
    if running:
        parts.append(f"{running} job{'s' if running != 1 else ''} running")
    if halting:
        said = [text for job in stopping if (text := stopping_text(job, None))]
        words = said[0].removeprefix("stopping ") if halting == 1 and len(said) == 1 else ""
        noun = "" if running else f" job{'s' if halting != 1 else ''}"
        parts.append(f"{halting}{noun} stopping" + (f" {words}" if words else ""))
    if leases:
        parts.append(f"{leases} lease{'s' if leases != 1 else ''}")
    text = ", ".join(parts)
    if text:
        text += f", on {gpus_phrase(float(in_use.get('gpus') or 0))}"  # one GPU-count formatter (new user 17, N22)
    if pending:
        text += ("; " if text else "") + f"{pending} pending" + _held_said(me, pending)
    return text or "nothing running or pending"


def _held_said(me: Mapping[str, Any], pending: int) -> str:
    """``, held: never starts (you left team nlp) — cancel and resubmit with --team vision`` after ``1 pending``
    (``GET me``'s ``held``; newuser38 n24: ``1 pending`` alone of a job that never starts); ``, 2 of them held``
    with several kinds of hold (:func:`~.held.held_line` says each on a line of its own); where the caller's jobs
    cannot run as their account (``jobs_cannot_run``), that the others wait on it."""
    from .held import held_line

    groups = [g for g in me.get("held") or () if isinstance(g, Mapping) and held_line(g)]
    held = min(pending, sum(int(g["jobs"]) for g in groups))
    said = ""
    if held:
        said = ", " + (("held" if pending == 1 else "all held") if held == pending else f"{held} of them held")
        if len(groups) == 1:  # one kind: said here; several: one line each (held_lines)
            said += f": {groups[0]['what']}" + (f" — {groups[0]['fix']}" if groups[0].get("fix") else "")
    if me.get("jobs_cannot_run") and pending > held:
        said += (f"; the other{'s' if pending - held > 1 else ''}" if held else ", which") + \
            " cannot run until your OS account is fixed (the jobs line above)"
    return said


def held_lines(me: Mapping[str, Any]) -> list[str]:
    """One ``2 held: … — …`` line per kind of hold where the caller has several (:func:`my_work` says one itself)."""
    from .held import held_line

    lines = [line for g in me.get("held") or () if isinstance(g, Mapping) and (line := held_line(g))]
    return lines if len(lines) > 1 else []


def granted_uuids(job: Mapping[str, Any]) -> tuple[str, ...]:
    """GPU / MIG UUIDs of the job's allocation (all workers), empty when none."""
    alloc = job.get("allocation")
    if not isinstance(alloc, Mapping):
        return ()
    workers = alloc.get("workers") or []
    if workers:
        return tuple(str(u) for w in workers for u in w.get("gpu_uuids", ()))
    return tuple(str(u) for u in alloc.get("gpu_uuids", ()))


def granted_milli(job: Mapping[str, Any]) -> int:
    """Thousandths of each GPU the job's allocation holds (1000: whole GPUs; 500: half of one, shared
    with other fractional work), from ``allocation.gpu_milli``, else ``resources.gpu_milli``; 1000 when
    neither says (as ``JUPYTER_SCHED_GPU_MILLI`` of a job, ``executors.local``)."""
    for key in ("allocation", "resources"):
        part = job.get(key)
        milli = part.get("gpu_milli") if isinstance(part, Mapping) else None
        if isinstance(milli, int) and not isinstance(milli, bool) and 0 < milli <= 1000:
            return milli
    return 1000


GPU_MILLI_ENV = "JUPYTER_SCHED_GPU_MILLI"
"""The variable a job (``executors.local``) and a kernel holding a lease (``%gpu``) read their share of
each GPU in: thousandths, 1000 whole, 0 no GPU."""

SHARED_GPU_NOTE = "a share of one GPU, time-sliced with other fractional work, with no memory isolation"
"""What a fractional grant is, in the words of docs/admin.md's "Shared GPUs" (new user 19, N18)."""


def granted_words(job: Mapping[str, Any]) -> str:
    """The GPUs a grant gives, for "Allocated …" / "… re-attached": ``GPU-a, GPU-b`` for whole GPUs,
    ``0.5 of GPU-a`` for a share (new user 19, N18: a half GPU read as a whole one)."""
    uuids = ", ".join(granted_uuids(job))
    milli = granted_milli(job)
    return uuids if milli >= 1000 else f"{milli / 1000:g} of {uuids}"


def gpus_text(job: Mapping[str, Any]) -> str:
    """``1 GPU``, ``0.5 GPU``, ``2 GPUs (A100/H100)`` from the job's resources; a gang reads
    per worker, ``2 x 4 GPUs``, and one of worker groups group by group, ``1 x 1 + 4 x 8 GPUs``
    (workers x GPUs each: the job is one gang, shown as one job)."""
    res = job.get("resources") if isinstance(job.get("resources"), Mapping) else job
    assert isinstance(res, Mapping)
    gpus = res.get("gpus", 0)
    milli = res.get("gpu_milli", 1000)
    count = f"{milli / 1000:g}" if gpus == 1 and milli and milli < 1000 else str(gpus)
    models = res.get("gpu_models") or []
    groups = [g for g in res.get("groups") or () if isinstance(g, Mapping)]
    workers = res.get("workers", 1)
    if groups:
        count = " + ".join(f"{g.get('workers', 1)} x {g.get('gpus', 0)}" for g in groups)
    elif isinstance(workers, int) and workers > 1:
        count = f"{workers} x {count}"
    one = count == "1" or (" " not in count and gpus == 1 and bool(milli) and milli < 1000)  # "0.5 GPU", as gpus_phrase (new user 16, N8)
    return f"{count} GPU" + ("" if one else "s") + (f" ({'/'.join(models)})" if models else "")


def work_name(job: Mapping[str, Any]) -> str:
    """The name a job or lease is shown by — the CLI's and the magics' tables and lines, and the
    panel's (``workName`` in labextension/src/format.ts says it the same way): its name, except a
    lease that was given none (new user 10, N11: ``kernel-<8 hex of the kernel id>`` in the shared
    queue). Its owner, whose views carry ``kernel_notebook`` / ``kernel_id``, reads ``lease for
    nb/explore.ipynb`` or ``lease for kernel 1a2b3c4d``; everyone else the public default name,
    ``notebook lease`` (:data:`jupyter_sched.model.names.LEASE_NAMES`)."""
    name = str(job.get("name") or "")
    if job.get("kind") != "lease":
        return name
    kernel = job.get("kernel_id") if isinstance(job.get("kernel_id"), str) else None
    if name not in LEASE_NAMES and not kernel_named(name, kernel):
        return name
    notebook = job.get("kernel_notebook")
    if isinstance(notebook, str) and notebook.strip():
        return f"lease for {printable_name(notebook)}"
    if kernel:
        return f"lease for kernel {printable_line(kernel[:8])}"
    return name


def named(ref: Any, name: str) -> str:
    """``j-7 (daily_report)``: an id with the name its owner gave, the one way every line writes it;
    a name with brackets of its own is quoted instead of nesting them (``j-7 'report (v2)'``); the
    id alone for no name. Definitions are written so too (``d-1 (daily_report)``, new user 12, N1)."""
    name = printable_name(str(name or "")).strip()  # s30: a hidden character shown, as in the tables
    if not name:
        return str(ref)
    return f"{ref} {name!r}" if "(" in name or ")" in name else f"{ref} ({name})"


RUN_NAME_WIDTH = 40
"""The most characters a definition's run's name takes in a NAME column (:func:`fit_name`): its date, time and
zone (``2026-12-07 23:59 UTC``, 20-odd) whole, with room for a definition's name before them."""


def fit_name(name: str, width: int = 24) -> str:
    """``name`` in at most ``width`` characters for a table's NAME column, keeping the part that
    tells names apart: a path's last part (``lease for …/amy-private.ipynb``, ``…/amy-private.ipynb``,
    then its end), else the start (``a-long-experiment-na…``) — a cut always shown by its ``…``. New
    user 12, N7: every lease of a home read ``lease for /home/nu12amy…``. A definition's run keeps its
    whole date and time (``every-min @ 2026-12-04 16:26 UTC``, up to :data:`RUN_NAME_WIDTH`
    characters, its definition's name cut before the ``@`` where longer): new user 18, N13 (every
    run read ``every-min @ 2026-12-04 …``), and newuser42 N4 — ``nb-def @ 23:59 UTC``, its date
    left out, was no name ``status``/``logs`` took and the same every day, so what the column shows
    can be typed back."""
    head, at, when = name.partition(" @ ")
    if at and when and len(name) > width:  # a definition's run, "every-min @ 2026-12-04 16:26 UTC"
        room = max(width, RUN_NAME_WIDTH) - len(at) - len(when)
        if len(head) <= room:
            return name
        if room >= 4:
            return head[:room - 1] + "…" + at + when
    if len(name) <= width:
        return name
    slash = name.rfind("/")
    if slash >= 0:
        start = name.find("/")
        prefix, base = name[:start], name[slash + 1:]
        for candidate in (f"{prefix}…/{base}", f"…/{base}"):
            if len(candidate) <= width:
                return candidate
        return "…" + name[-(width - 1):]
    return name[:width - 1] + "…"


def job_head(job: Mapping[str, Any]) -> str:
    """``job j-7 (daily_report)`` / ``lease l-3 for nb/explore.ipynb``: what a job line starts with,
    and what a wait's progress line is titled (new user 12, N1: ``job j-… · starting`` had no name)."""
    return _head(job)


def _head(job: Mapping[str, Any]) -> str:
    kind = job.get("kind", "job")
    head = f"{'lease' if kind == 'lease' else 'service' if kind == 'inference' else 'job'} {job.get('id')}"
    name = work_name(job)
    if kind == "lease" and name.startswith("lease for "):  # "lease l-3 for nb/explore.ipynb"
        return f"{head} {name[len('lease '):]}"
    if kind == "lease" and name in LEASE_NAMES:  # "lease l-3 (notebook lease)" says lease twice
        return head
    if name and name != "job":  # the server's default name says nothing the line does not
        head = f"{head.split(' ', 1)[0]} {named(job.get('id'), name)}"
    return head


def job_line(job: Mapping[str, Any], now: datetime | None, *, log_shown: bool = False) -> str:
    """One status line: state, GPUs and where, the exit code, or the rendered pending reason.

    ``lease l-3 for nb/explore.ipynb: pending, 1 GPU · queued #2 · <summary> · ETA 19:42 UTC (in 5m)``.
    ``log_shown``: the job's log was just printed (``logs -f``), so an ended job's "last lines: …"
    are not quoted again (new user 17, N20: ``%schedule logs -f`` repeated the five lines it had shown).
    """
    return f"{_head(job)}: {job_outcome(job, now, log_shown=log_shown)}"


def job_outcome(job: Mapping[str, Any], now: datetime | None, *, log_shown: bool = False) -> str:
    """:func:`job_line` after its head: ``failed, exit code 1 · ended 07:38 UTC (ran 2s) — KeyError: 'x' (a.py, line
    2)``, ``pending, 1 GPU · …`` — how a definition's run ended (the CLI's run lines and its list's ``last:``, the
    magics' ``last_state`` / ``last_reason``: newuser37 N1) in the words of a job's line, whatever the job's name
    holds. ``log_shown``: without the log lines an ended job's message quotes."""
    state = str(job.get("state"))
    detail = job_detail(job, now)
    if state in WAITING_STATES:
        return f"{state}, {gpus_text(job)} · {detail}"
    if cluster_wait(job):
        return f"{IN_CLUSTER}, {gpus_text(job)} · {detail}"
    if state in ("admitted", "running"):
        if detail.startswith("stopping ("):
            return detail
        word = STARTING if state == "admitted" else state  # new user 11, N4: one word with the tables
        # its projected end (the end its waiters are given: new user 22, N10) and its planned preemption, as
        # the queue's line says them (new user 21, N5): `status JOB` too; a job's end at the latest, its time
        # limit's, before a projection exists and beside one, as `queue` and `jobs` say it (newuser27 n9); where
        # the answer says its limit (a server's always does: null for none)
        ends = ends_by(job, now) if now is not None and job.get("kind") != "lease" and "time_limit_s" in job else ""
        tail_parts = (ends,) if ends else (projected_text(job, now), planned_text(job, now))
        detail = " · ".join(part for part in (detail, *tail_parts) if part)
        return f"{word}{f' {detail}' if detail.startswith('on ') else f' · {detail}' if detail else ''}"
    tail, message = _ended(job)
    if log_shown and message.startswith("last lines: "):
        message = ""
    elif log_shown and str(job.get("message") or "").startswith("exited with code"):
        message = split_log_quote(message)[0]  # what its end stopped stays (newuser30 n16), and the error line
    if job.get("kind") == "lease" and state == "cancelled" and message.startswith(_RELEASED_BY):
        # said once, with when (new user 16, N9: "lease l-…: released — released by root")
        said, colon, why = message.partition(": ")
        ended = wire_time(job.get("finished_at"))
        return f"{said}{f' at {clock_text(ended, now)}' if ended else ''}{colon}{why}"
    # one state word with the tables and REST (new user 14, N13; new user 17, N23)
    word = state_word(job)
    when = f" · {said}" if (said := ended_text(job, now)) else ""  # when it ran (newuser27 N5)
    if message.startswith(f"{word} "):  # "cancelled by you (killed by SIGKILL)", the word once (newuser26 n9)
        return f"{message}{tail}{when}"
    return f"{word}{tail}{when}{f' — {message}' if message else ''}"


_CANCELLED_BY = "cancelled by "
"""How the message of a job cancelled by a person opens (``cancelled by ann (killed by SIGTERM)``)."""

_RELEASED_BY = "released by "
"""How the message of a lease given back after its grant opens (:func:`lease_end_message`; the
engine's ``lease_release_message`` says it the same way)."""

KERNEL_TOLD = ("its kernel is told before the next cell it runs (it looks at most every 5 s): CUDA_VISIBLE_DEVICES "
               "there is then '' (no GPU), or, where CUDA is already initialised, it is told to restart; a cell "
               "running now keeps the GPUs' names until it ends")
"""What ``jupyter-sched cancel`` and ``%schedule cancel`` say after releasing a kernel's granted lease: what
its kernel's magics do before its next cell (new user 23, N17: "its kernel is not told … until %gpu status
(or %gpu release) runs", while the next cell printed "This kernel's lease l-… ended … it is now ''")."""

_SYSTEM_ACTORS = frozenset({"user", "scheduler", "jupyterhub"})
"""Actors of a release that are no person (the engine's and the hub service's names for themselves)."""


def lease_end_words(job: Mapping[str, Any]) -> str:
    """An ended lease's message as its reader reads who released it (new user 23, N17: ``jobs`` listed
    ``l-…  cancelled … released by root`` for the reader's own release): ``released by you`` (the
    reader's own lease, ``mine``), ``released by its owner`` (an admin reading another's), ``released
    by an admin (root)`` (anyone else who released it: only an admin may), with the cause after a colon
    kept (``released by the server: its kernel was shut down`` and every other message — reclaimed while
    idle, a request withdrawn at its timeout, preempted — as it is). A job's ``cancelled by ann (killed by
    SIGTERM)`` likewise (``cancelled by you (…)``, new user 25, n2) where its owner and ``mine`` are known.
    The panel's ``leaseEndWords`` says the same. The clocks in it (``asked to shut down at 11:02:05 UTC``) in the
    reader's zone, with their date (newuser38 n30; :func:`~.reasons.clock_times`, written as it ended)."""
    message = clock_times(printable_line(str(job.get("message") or "")), None, ref=wire_time(job.get("finished_at")))
    owner = str(job.get("user") or "")
    if job.get("kind") != "lease":
        # a job's cancel as a lease's release (new user 25, n2: "cancelled by root (killed by SIGTERM; …)" to
        # root on a single-user lab, beside "released by you"); only where its owner is known
        if not owner or not message.startswith(_CANCELLED_BY):
            return message
        rest = message[len(_CANCELLED_BY):]
        actor = re.split(r": | \(", rest, maxsplit=1)[0]
        mine = job.get("mine")
        if actor != owner or not isinstance(mine, bool):  # another's cancel names them (as the panel's toasts)
            return message
        return f"{_CANCELLED_BY}{'you' if mine else 'its owner'}{rest[len(actor):]}"
    if not message.startswith(_RELEASED_BY):
        return message
    actor, colon, why = message[len(_RELEASED_BY):].partition(": ")
    if owner and actor == owner:
        who = "you" if job.get("mine") is True else "its owner"
    elif actor and " " not in actor and actor not in _SYSTEM_ACTORS:
        who = f"an admin ({actor})"
    else:
        return message
    return f"{_RELEASED_BY}{who}{colon}{why}"


def lease_given_back(job: Mapping[str, Any]) -> bool:
    """A lease its owner gave back after its GPUs were granted — themselves (``%gpu release``, ``cancel``,
    its kernel's exit) or through their Jupyter server (their kernel shut down or restarted): the normal
    end of a lease, which ``jupyter-sched wait`` counts as success (new user 16, N9: exit 4, "did not
    succeed"). Not one preempted, reclaimed while idle, ended by an admin or by the job it was held
    for, nor a request withdrawn before any GPU was granted."""
    if job.get("kind") != "lease" or job.get("state") != "cancelled":
        return False
    message = str(job.get("message") or "")
    by = message[len(_RELEASED_BY):].partition(":")[0] if message.startswith(_RELEASED_BY) else ""
    return bool(by) and by in (str(job.get("user") or ""), "the server")


def still_going(job: Mapping[str, Any], waited_s: float, now: datetime | None) -> str:
    """A wait's ``--for`` ran out: ``still running after 30m: job j-7 (train): running on vm: GPU-0``
    (``still pending after 10s: …`` for one that has not started) — ``jupyter-sched wait`` (exit 5) and
    ``%schedule wait`` alike (new user 17, N12: the magic said "3s" where the CLI said "3 s"); the
    duration as every other line says one, :func:`format_duration` (newuser35 n12: "after 1800 s")."""
    return f"still {job.get('state')} after {format_duration(waited_s)}: {job_line(job, now)}"


def job_detail(job: Mapping[str, Any], now: datetime | None) -> str:
    """What a job's line says after its state, for a table's detail line (``jupyter-sched jobs``):
    why it waits and until when; where it runs (``on vm: GPU-…``) and how far it is (``42 % done,
    reported 02:10 UTC (3m ago)``, :func:`~.reported.progress_text`); how it ended (``exit code 2 —
    last lines: …``); "" when there is nothing to add."""
    state = str(job.get("state"))
    if state in WAITING_STATES:
        reason = job.get("reason")
        # the limit it is planned with and stopped at, giving none: "time limit 30m (queue default; none
        # given)" (newuser28 N8, verify28 V9: said on no line while it pended)
        planned = planned_limit_line(job)
        if isinstance(reason, Mapping):
            line = render_reason(reason, now=now, relative=now is not None, kind=str(job.get("kind") or ""),
                                 mine=job.get("mine") is True).line
            return f"{line} · {planned}" if planned else line
        return "waiting for the next scheduling cycle" + (f" · {planned}" if planned else "")
    held_back = cluster_wait(job)
    if held_back:
        return held_back.rstrip(".")
    if state in ("admitted", "running"):
        uuids = granted_uuids(job)
        alloc = job.get("allocation") or {}
        # a share said as such on every line, not only at the grant (new user 20, N14)
        shared = " (shared, time-sliced)" if granted_milli(job) < 1000 else ""
        where = f"on {alloc.get('node')}: {granted_words(job)}{shared}" if uuids else ""
        sim = " [simulated GPUs]" if job.get("simulated") and uuids else ""  # not on work that holds none
        # its own progress report, when it made one (session 21: GET jobs/{id} had it, no list said it)
        return " · ".join(part for part in (stopping_text(job, now), f"{where}{sim}", gone_text(job),
                                            unhealthy_text(job), drain_text(job), progress_text(job, now),
                                            restarted_text(job), serving_text(job, now)) if part)
    tail, message = _ended(job)
    said = " · ".join(part for part in (tail.lstrip(", "), ended_text(job, now)) if part)
    line = f"{said} — {message}" if said and message else said or message
    cut = not_kept_text(job)
    return f"{line} · {cut}" if line and cut else line or cut


def not_kept_text(job: Mapping[str, Any]) -> str:
    """What a finished job's stored row no longer keeps (its ``not_kept``, red30 R4): ``env kept as names only
    after the job ended (61 KB of values not kept) · its command cut: 57 KB more, not kept after the job ended —
    give --env and the arguments again to run it again``; "" when everything is kept."""
    cut = job.get("not_kept")
    if not isinstance(cut, Mapping):
        return ""
    parts, again = [], []
    env, command = cut.get("env_bytes"), cut.get("command_bytes")
    if isinstance(env, int) and env > 0:
        parts.append(f"env kept as names only after the job ended ({_kb(env)} of values not kept)")
        again.append("--env")
    if isinstance(command, int) and command > 0:
        parts.append(f"its command cut: {_kb(command)} more, not kept after the job ended")
        again.append("the arguments")
    if not parts:
        return ""
    return " · ".join(parts) + f" — give {' and '.join(again)} again to run it again"


def _kb(size: int) -> str:
    return f"{max(1, round(size / 1024))} KB"


def ended_text(job: Mapping[str, Any], now: datetime | None) -> str:
    """When an ended job ended and how long it ran: ``ended 22:11 UTC (ran 4m02s)`` (``clock_text``,
    ``format_duration``), ``ended 22:11 UTC`` for one that never started; "" without ``finished_at``.
    newuser27 N5: ``jobs``, ``status JOB``, the magics said how a job ended, never when (only ``--json``
    had the times); the panel's My work row says the same (``endedText`` in labextension/src/format.ts)."""
    ended = wire_time(job.get("finished_at"))
    if ended is None:
        return ""
    started = wire_time(job.get("started_at"))
    ran = f" (ran {format_duration(max(0.0, (ended - started).total_seconds()))})" if started is not None else ""
    return f"ended {clock_text(ended, now)}{ran}"


GONE_WORDS = "no longer in the inventory (it runs on unless its GPUs went with it; an admin can cancel it)"
"""What :func:`gone_text` says after the GPUs' names: also the ``health`` of ``%gpu``'s row of such a GPU
(:data:`jupyter_sched.magics.render.GONE_HEALTH`), whose uuid column names it (new user 24: the row said it
in words of its own); the panel's ``goneLine`` says the same."""


def gone_text(job: Mapping[str, Any]) -> str:
    """``GPU-sim-vm-3 no longer in the inventory (it runs on unless its GPUs went with it; an admin can
    cancel it)`` for work whose answer names GPUs the inventory no longer lists (``gone_gpus``: a node or
    GPUs gone under it, hubadmin 22 H3); "" otherwise. The one sentence of the CLI's and the magics'
    lines; the panel's ``goneLine`` says the same words."""
    gone = job.get("gone_gpus")
    if not isinstance(gone, list) or not gone or job.get("state") not in ("admitted", "running"):
        return ""
    return f"{', '.join(str(uuid) for uuid in gone)} {GONE_WORDS}"


def unhealthy_gpu_dict(gpu: Any) -> dict[str, Any]:
    """A GPU (:class:`~jupyter_sched.model.resources.GPU`) that turned unhealthy under a job, as its
    answer's ``unhealthy_gpus`` carries it: ``{uuid, index, node, reason, since, text}`` (hubadmin24 B14)."""
    since = gpu.health_since
    reason = str(gpu.health_reason or "").strip()
    text = (f"GPU {gpu.index} ({gpu.uuid}) on {gpu.node} is unhealthy"
            + (f" ({reason})" if reason else "")
            + (f" since {clock_text(since, None)}" if since is not None else "")
            + ": the work runs on there, but may fail or slow down; if it does, cancel and resubmit it (nothing new is "
              "placed on that GPU)")
    return {"uuid": gpu.uuid, "index": gpu.index, "node": gpu.node, "reason": reason,
            "since": since.isoformat() if since is not None else None, "text": text}


def unhealthy_text(job: Mapping[str, Any]) -> str:
    """The sentences of a job answer's ``unhealthy_gpus`` (a GPU that turned unhealthy under running work,
    hubadmin24 B14), joined; "" when none. The one wording of the CLI's ``status JOB`` and the magics'
    job views; the panel's ``unhealthyLine`` shows the same ``text`` — its time (``since 2026-…Z``) a clock in the
    reader's zone (newuser38 n30)."""
    gpus = job.get("unhealthy_gpus")
    if not isinstance(gpus, list) or job.get("state") not in ("admitted", "running"):
        return ""
    return clock_times("; ".join(str(g.get("text") or "") for g in gpus if isinstance(g, Mapping) and g.get("text")),
                       None)


_SERVING = ("ready on port", "stopped answering on port")
"""The engine's messages of a service's readiness (the latter: new user 8, N8)."""


def public_serving(message: Any) -> str | None:
    """The part of a job's ``message`` another user may read: its readiness (``ready on port 8766``,
    ``stopped answering on port 8766`` without the why) — the port is on every queue line already;
    None for any other message, which stays its owner's (new user 17, N9: the redacted queue line
    dropped it, and the renderer then said "not answering" of a service that answered)."""
    text = str(message or "")
    return text.partition(":")[0].strip() if text.startswith(_SERVING) else None


def serving_text(job: Mapping[str, Any], now: datetime | None) -> str:
    """Whether a running service answers on its port: ``ready on port 8766`` (the engine's message once
    the port answered), else ``not answering on port 8765 yet (started 20:09 UTC)``; "" for other work.
    New user 7, F9: a service that never answered read word for word like a ready one.

    "Not answering" is said only from the job's own message, read and carrying no readiness: a line
    without ``message`` (another user's queue entry, which keeps only :func:`public_serving`) says
    nothing of it (new user 17, N9: "not answering on port 18951 yet" of a service that answered)."""
    if job.get("kind") != "inference" or job.get("state") != "running":
        return ""
    message = str(job.get("message") or "")
    if message.startswith(_SERVING):
        return printable_line(message)
    if "message" not in job:  # withheld, not empty: nothing is known of its readiness
        return ""
    port = job.get("port")
    if not isinstance(port, int) or isinstance(port, bool):
        return ""
    started = wire_time(job.get("started_at"))
    since = f" (started {_clock_of(started, now)})" if started is not None else ""
    return f"not answering on port {port} yet{since}"


LOG_QUOTES = ("; last lines: ", "; earlier lines: ")
"""How a failed job's message opens the log lines it quotes (:func:`jupyter_sched.executors.outcome.describe_exit`):
all of its last lines, or those before the error line it leads with (newuser34 N2)."""


def split_log_quote(message: str) -> tuple[str, str, str]:
    """``("exited with code 1: error: no data", "; earlier lines: ", "a | b")``: a message's words before the log lines it
    quotes, the opening of those (one of :data:`LOG_QUOTES`), and the lines; ``(message, "", "")`` when it quotes none."""
    found = [(at, opening) for opening in LOG_QUOTES if (at := message.find(opening)) >= 0]
    if not found:
        return message, "", ""
    at, opening = min(found)
    return message[:at], opening, message[at + len(opening):]


def _ended(job: Mapping[str, Any]) -> tuple[str, str]:
    """How a job ended: (``, exit code 2 (command not found)``, ``last lines: …``), either may be ""."""
    state = str(job.get("state"))
    tail = f", {exit_code_words(job['exit_code'])}" if job.get("exit_code") is not None else ""  # 137: SIGKILL (n1)
    # stored before red team 6's fix: raw log lines; a lease says who released it as its reader reads it
    message = lease_end_words(job)
    code = job.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool) and code < 0:
        # a negative code is the signal that ended it (Python's returncode), not an exit code the
        # user's program chose (new user 4: "cancelled, exit code -15 — … killed by SIGTERM")
        name = _signal_name(-code)
        tail = "" if name in message else f", killed by {name}"
    last = ""
    if message.startswith("exited with code"):
        # the exit code is said already; the log's last lines the executor kept are the why (issue 20:
        # "failed, exit code 2" and nothing else)
        head, opening, last = split_log_quote(message)
        # what its end stopped stays (newuser30 n16: "its main process left 2 processes running, ended …"), and
        # the launcher's own reason after the code ("exited with code 2: …/python3: can't open file …wrapper.py")
        # — newuser31 N10: the CLI's line said "failed, exit code 2" and nothing of why; the magics said it
        first, _, rest = head.partition("; ")
        why = first.split(":", 1)[1].strip() if ":" in first else ""
        kept = [said for said in (why, rest) if said]
        message = "; ".join(kept + ([f"{opening[2:]}{last}"] if last and state != "succeeded" else []))
        last = " | ".join(said for said in (why, last) if said)  # the log's error line may lead (newuser34 N2)
    if state == "failed" and job.get("exit_code") in (126, 127):  # the shell's (and our wrapper's) codes
        what = "command not found" if job["exit_code"] == 127 else "a command is not executable"
        if job["exit_code"] == 126 and "cannot enter the working directory" in last:
            # the wrapper's 126 for a working directory it cannot enter: the command was never tried
            # (new user 7, F6: "(a command is not executable)" pointed the user at their command)
            what = "its working directory cannot be entered"
        tail += f" ({what})" if last else f" ({what}: the log says which)"
    if state == "failed" and job.get("simulated") and _NO_CUDA_DEVICE.search(message) and granted_uuids(job):
        message = f"{SIMULATED_NO_CUDA} — {message}"  # newuser40 n9: only running lines said "[simulated GPUs]"
    return tail, message


SIMULATED_NO_CUDA = "ran on simulated GPUs (no NVIDIA driver here): CUDA sees no device"
"""Why a job on simulated GPUs failed when its error is CUDA finding no device (newuser40 n9)."""
_NO_CUDA_DEVICE = re.compile(r"no CUDA GPUs are available|no CUDA-capable device|found no NVIDIA driver|"
                             r"CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|NVIDIA driver on your system", re.IGNORECASE)
"""CUDA's (and PyTorch's, TensorFlow's, CuPy's) words for "there is no GPU here"."""


def idle_note(entry: Mapping[str, Any], now: datetime | None, *, magic: bool = False,
              ends_at: datetime | None = None, kernel: bool | None = None, simulated: bool = False,
              unseen: bool = False) -> str:
    """An idle warning as one sentence, from a ``GET idle`` entry (``idle`` or ``warned``, below):
    ``idle since 09:58 UTC (rule: kernel idle and GPU < 5 % for 30 min): its GPUs are released at 10:28
    UTC (in 7m) unless it is used — `%gpu keepalive` in its notebook keeps them`` (new user 4: the
    warning showed only in GET idle, never where a notebook or terminal user looks). A grace the
    admin set is said after the rule (``… for 30 min, then a 10m grace``); none is said otherwise.
    Work reported as idle (``notify``: stage ``reclaimed``, nothing freed, it runs on) keeps a note
    while it stays idle: ``idle since 09:58 UTC (rule: …): reported as idle at 10:28 UTC (nothing is
    freed) — using its GPUs ends the idle period`` (new user 19, N5: the line fell silent).

    Work idle but not warned yet (stage ``idle``) whose reclaim frees its GPUs says the same from its
    first idle sample on: the deadline is the one a job waiting for those GPUs is given as its ETA
    (:mod:`jupyter_sched.engine.idle_ends` reads the same idle candidates), so the owner — the one who
    can act — is told it as early as the waiter (new user 22, N6: ``queue`` never said it, ``jobs`` only
    once warned, while the waiter read "ETA 05:18 UTC … if it stays idle" three minutes before). Work
    only reported when idle (``notify``) says nothing before it is reported; busy work is no entry.
    ``ends_at``: when the job's time limit ends it (:func:`limit_end`): an idle deadline at or after it
    is not said, before the warning or after it — its limit ends it first (the panel's rule, new user 11,
    N23; new user 24, N2 for the warned stage). A warned ``notify`` note ends ``unless it is used``:
    nothing is taken, so nothing "keeps" the GPUs.
    ``kernel``: False for a lease no kernel is bound to (its job row has no ``kernel_id``): it has no
    notebook to run ``%gpu keepalive`` in, so the note names ``POST leases/{id}/keepalive`` (hubadmin23 A4).
    ``unseen``: a lease held by a kernel this server did not start (``released_at_exit``, no ``kernel_id``) — a
    notebook run headless by nbconvert/papermill as well as another front end's: no one may be there to run a cell,
    so the note says what keeps them either way (race41's leftover: "`%gpu keepalive` in its notebook").
    A lease whose one keep-alive was used (``keepalive_used``) is told ``using its GPUs keeps them``, as the
    panel says: a second ``%gpu keepalive`` is refused (newuser23 N5). ``simulated``: the work's GPUs are
    simulated — a GPU rule is then read from its CPU activity, which the rule says (new user 24, N2: a job
    reporting progress every 4 s while sleeping was "idle" with no word why)."""
    stage, action = entry.get("stage"), entry.get("action")
    reported = stage == "reclaimed" and action == "notify"
    if (stage not in ("warned", "idle") and not reported) or (stage == "idle" and action == "notify"):
        return ""
    since, deadline = wire_time(entry.get("idle_since")), wire_time(entry.get("deadline"))
    if not reported and ends_at is not None and deadline is not None and deadline >= ends_at:
        return ""  # its time limit ends it first, warned or not (new user 24, N2: "reported … at 12:06" after 12:06)
    # notify frees nothing (the admin's choice): the note must not promise a reclaim (new user 6 F14)
    what = {"release": "its GPUs are released", "requeue": "it is requeued (its GPUs freed)",
            "stop": "it is stopped", "notify": "it is reported as idle (nothing is freed)",
            }.get(str(entry.get("action") or ""), "its GPUs are reclaimed")
    when = ""
    if deadline is not None:
        when = f" at {_clock_of(deadline, now)}"
        if now is not None and deadline > now:
            when += f" ({relative_text((deadline - now).total_seconds())})"
    # the rule, not the standing sentence (that one states the times this note says itself);
    # a server before "rule" existed sent the rule as reason
    reason = str(entry.get("rule") or entry.get("reason") or "").strip()
    grace = entry.get("grace_s")
    if reason and isinstance(grace, (int, float)) and not isinstance(grace, bool) and grace > 0:
        # a grace only where the admin set one, said beside the rule it follows (new user 4)
        reason += f", then a {format_duration(float(grace))} grace"
    if simulated and "GPU" in reason:
        reason += "; simulated GPUs: their use is the job's CPU activity"
    head = f"idle since {_clock_of(since, now)}" if since is not None else "idle"
    if reported:
        at = f" at {_clock_of(deadline, now)}" if deadline is not None else ""
        return (f"{head}{f' (rule: {reason})' if reason else ''}: reported as idle{at} (nothing is freed) — using "
                "its GPUs ends the idle period")
    if action == "notify":  # nothing is taken: nothing to keep (new user 24, N2: "nothing is freed … keeps them")
        return f"{head}{f' (rule: {reason})' if reason else ''}: {what}{when} unless it is used"
    keep = "%gpu keepalive keeps them" if magic else "`%gpu keepalive` in its notebook keeps them"
    if str(entry.get("kind") or "") != "lease" or entry.get("keepalive_used") is True:
        keep = "using its GPUs keeps them"  # a second keep-alive is refused (newuser23 N5)
    elif kernel is False:
        keep = f"using its GPUs, or POST leases/{entry.get('job_id')}/keepalive, keeps them"
    elif unseen and not magic:
        keep = UNSEEN_KERNEL_KEEP
    # "rule:": the window is the policy's, not the time that has passed (new user 6, F16: "(… for 30 min)"
    # at 20 min idle read as a statement)
    return f"{head}{f' (rule: {reason})' if reason else ''}: {what}{when} unless it is used — {keep}"


UNSEEN_KERNEL_KEEP = ("using its GPUs keeps them, or `%gpu keepalive` in the kernel that holds it (a notebook run headless: "
                      "a line of the notebook)")
"""What keeps an idle lease of a kernel this server did not start (:func:`idle_note`'s ``unseen``)."""

_clock_of = clock_text
"""``09:58 UTC`` on ``now``'s day, else ``Dec 3 09:58 UTC`` (the year when far off): one formatter."""


def _restarted(job: Mapping[str, Any]) -> str:
    """`` · start 2, after preemption by mal3 (j-9)`` for work running again after a requeue (new user 4:
    "running on vm" alone hid that it had been preempted and restarted); "" on a first run. Runs stopped
    just after they started (``false_starts``) are no starts here (new user 24, N1)."""
    attempts = job.get("attempts")
    false_starts = job.get("false_starts")
    if isinstance(attempts, int) and isinstance(false_starts, int) and not isinstance(false_starts, bool):
        attempts -= false_starts
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts <= 1 or job.get("kind") == "lease":
        return ""
    by = job.get("preempted_by")
    if not by:
        return f" · start {attempts}, after a requeue"
    return f" · start {attempts}, after preemption by {preemptor(job)}"


def restarted_text(job: Mapping[str, Any]) -> str:
    """``start 2, after preemption by mal3 (j-9)`` (:func:`_restarted` without its separator): the queue's running
    lines say it as ``jobs`` and the panel's cards do (verify42 v5: the CLI's and the magics' queue left it out)."""
    return _restarted(job).removeprefix(" · ")


def preemptor(job: Mapping[str, Any]) -> str:
    """The job that preempted ``job`` last, as reasons name other jobs: ``mal3 (j-…)`` when the
    answer carries its name (``preempted_by_name``), else its id. New user 8 (issue 20 follow-up):
    "start 2, after preemption by j-1m8x162ph-dgvt2x" named it by a bare id."""
    by = str(job.get("preempted_by") or "")
    name = printable_name(str(job.get("preempted_by_name") or "")).strip()[:80]
    return f"{name} ({by})" if name and name != by else by


def _signal_name(number: int) -> str:
    """``15`` → ``SIGTERM`` (``signal 99`` for a number this platform does not name)."""
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def cancel_outcome(before: Mapping[str, Any] | None, after: Mapping[str, Any], *, grace_s: float | None = None,
                   now: datetime | None = None) -> str:
    """:func:`_cancel_outcome`, then what ending it costs its team when it took GPUs back by reclaim lately (the
    answer's ``reclaim_cooldown``; newuser36 N6): ``released lease l-1 (was running; gave back GPU-a); team vision's
    reclaims of other teams' borrowed GPUs wait until 04:52 UTC (a reclaim cool-down: …)``. ``now``: the reader's
    time for its clock time (None: the date is said too)."""
    said = _cancel_outcome(before, after, grace_s=grace_s)
    cost = reclaim_cost_text(after.get("reclaim_cooldown"), now)
    return f"{said}; {cost}" if cost else said


def reclaim_cost_text(cost: Any, now: datetime | None) -> str:
    """An answer's ``reclaim_cooldown`` (``DELETE jobs/{id}``'s, or one job's of ``POST jobs/cancel``) in the
    words of :func:`~.preemption.release_cooldown_text`, at the reader's clock ``now`` (None: with the date);
    its ``text`` where the numbers are missing; "" for none. The one reading of the single and the bulk
    cancel (s38: ``cancel --mine`` said nothing of the cool-down ``cancel JOB`` says)."""
    if not isinstance(cost, Mapping):
        return ""
    until = wire_time(cost.get("until"))
    held = cost.get("held_s")
    if until is not None and isinstance(cost.get("team"), str):
        return release_cooldown_text(cost["team"], until, float(held) if isinstance(held, (int, float)) else None,
                                     now)
    text = cost.get("text")
    return printable_line(text) if isinstance(text, str) and text else ""


def _cancel_outcome(before: Mapping[str, Any] | None, after: Mapping[str, Any], *, grace_s: float | None = None) -> str:
    """What a cancel did, as one line: ``cancelled j-7 (was running; stopping, grace 60 s)``, its name first where it
    has one (``cancelled j-7 (train; was pending; removed from the queue)``; newuser34 n1: ``cancel j-… j-…``, pasted
    from ``definitions delete``'s hint, said ids alone where every other line names the job).

    Args:
        before: the job as read just before the cancel (None when not read); its state is the
            "was". Without it the answer's state stands in.
        after: the server's answer to the cancel (``DELETE jobs/{id}`` / ``leases/{id}``).
        grace_s: seconds between SIGTERM and SIGKILL for running work (``GET config``'s
            ``stop_grace_s``), None when the server does not say.
    """
    job_id = after.get("id")
    was = str((before or after).get("state"))
    was = STARTING if was == "admitted" else was  # the word the lists use (new user 11, N4)
    state = str(after.get("state"))
    whose = _whose(before or after) or _own_name(before or after)
    if after.get("kind") == "lease":
        if was in WAITING_STATES:
            return f"withdrew lease request {job_id} ({whose}was {was}; no GPUs had been granted)"
        uuids = granted_uuids(before or after)
        given = granted_words(before or after)  # "0.5 of GPU-a" for a share (new user 20, N14)
        if state == "running" and after.get("stop_requested"):  # the engine drains it (red team 18, R6)
            return (f"released lease {job_id} ({whose}was {was}); {given or 'its GPUs'} "
                    f"{'goes' if len(uuids) == 1 else 'go'} back once no process still uses "
                    f"{'it' if len(uuids) == 1 else 'them'} (if CUDA was initialised, restart the kernel; the "
                    f"scheduler ends any process of {(before or after).get('user')}'s account still on "
                    f"{'it' if len(uuids) == 1 else 'them'} after the stop grace)")  # verify 26, V7
        held = f"; gave back {given}" if uuids else ""
        return f"released lease {job_id} ({whose}was {was}{held})"
    if state == "cancelled":
        what = "removed from the queue" if was in WAITING_STATES else "stopped"
        return f"cancelled {job_id} ({whose}was {was}; {what})"
    # a second cancel (new user 9): the first one's stop stands — seen in the job read before (the CLI) or
    # said by the answer itself (new user 17, N12: the magic reads nothing first and said "cancelled … grace")
    stopping = stopping_text(before, None) if before else ""
    if not stopping and after.get("already_stopping") is True:
        stopping = stopping_text(after, None)
    if stopping and state in ("admitted", "running"):
        return f"cancel of {job_id}: it is already {stopping}"
    if state in ("admitted", "running"):
        grace = f", grace {grace_s:g} s" if grace_s is not None else ""
        return f"cancelled {job_id} ({whose}was {was}; stopping{grace})"
    return f"cancel of {job_id}: it is {STARTING if state == 'admitted' else state}"


def nothing_to_cancel(job: Mapping[str, Any], now: datetime | None) -> str:
    """The news of a cancel (or release) of work that had already ended, said as what it is — the
    user wanted it gone, and it is: ``nothing to do: it had already ended — lease l-… (cvlease):
    released — reclaimed while idle …`` (new user 22: ``lease l-… is already released — request a
    new lease``, an error line and exit code 1, for a lease the idle reclaim had given back).

    Args:
        job: the job or lease as read now (``GET jobs/{id}``), in a terminal state.
        now: for the clock times of its line (:func:`job_line`).
    """
    # "cancelled by root", said once (new user 24 nit: "cancelled — cancelled by root"; newuser26 n9: then
    # "cancelled — by root"): job_line says a message that opens with its state word as the state
    return f"nothing to do: it had already ended — {job_line(job, now)}"


def _own_name(job: Mapping[str, Any]) -> str:
    """``train; `` for one's own job that has a name (not a lease, whose line names it already; not the server's
    default ``job``); "" otherwise."""
    name = printable_name(str(job.get("name") or "")).strip()
    if job.get("kind") == "lease" or not name or name in ("job", str(job.get("id"))):
        return ""
    return f"{name}; "


def _whose(job: Mapping[str, Any]) -> str:
    """``nu10amy's amy-second; `` when an admin cancels another user's work (``mine`` false in the
    answer), so the line says whose work ended and which (new user 10, N8: the bare id); "" for one's own."""
    owner, name = job.get("user"), work_name(job)
    if job.get("mine") is not False or not isinstance(owner, str) or not owner:
        return ""
    named = f" {name}" if isinstance(name, str) and name.strip() and name != job.get("id") else ""
    return f"{owner}'s{named}; "


def ends_by(job: Mapping[str, Any], now: datetime, *, cancel: str = "") -> str:
    """When work holding GPUs ends at the latest — what a pending job's ETA hangs on: ``ends by
    05:40 UTC (in 2m58s), its 3m time limit``, ``ends by Dec 4 2027 23:58 UTC (in 366d), its 366d
    time limit``, ``no time limit``; a lease, how its GPUs are given back; "" for work not holding GPUs.
    The one renderer of the CLI's queue and jobs lines and the magics' queue table (issue 20: the
    table left it empty; new user 14, N18: the CLI had its own copy, without days or years, so a
    366-day limit's end read "Dec 4 23:58 UTC (in 8783h59m)" — the day after — in the CLI only).
    Work the scheduler will preempt at a known time says so after it (``preemption_planned``: ``ends
    by 02:16 UTC (in 9m32s), its 10m time limit — to be preempted at ~02:11 UTC for norm2 (j-…),
    normal priority of the same team, unless it ends first``; new user 21, N5). A job its owner (or an
    admin) reads with a projected end before its limit's (``projected_end``: from its progress report or a
    learnt runtime, the time its waiters are given) says that first: ``projected end ~05:10 UTC (in 1m20s),
    from its progress report of 05:08:30 UTC · at the latest 05:23 UTC (in 14m26s), its 15m time limit``
    (:func:`~.projected.projected_end_text`; new user 22, N10).

    Args:
        cancel: the command that cancels a job by id on this surface (``jupyter-sched cancel``,
            ``%schedule cancel``): a lease bound to no kernel is released with it; "" says
            ``cancel`` without a program.
    """
    if job.get("state") not in ("running", "admitted"):
        return ""
    if stopping := stop_detail(job, now):  # new user 9: not "ends by 07:42, its 10m time limit" as well
        return stopping
    if _drain_first(job):  # its node's drain stops it before its limit: its line says that instead (hubadmin26 B1)
        return ""
    text = _lease_hold(job, cancel or "cancel", now) if job.get("kind") == "lease" else _limit_end(job, now)
    if projected := projected_text(job, now):
        # the end its waiters are given, before the limit's (new user 22, N10: "ends by 05:23" only)
        text = f"{projected} · {_limit_end(job, now, latest=True)}"
    planned = planned_text(job, now)
    return f"{text} — {planned}" if planned else text


def projected_text(job: Mapping[str, Any], now: datetime | None, *, brief: bool = False) -> str:
    """The projected end of a running job (:func:`~.projected.projected_end_text`; ``brief``: the time only),
    "" when it has none (another user's job, a lease, one its limit ends) or it is stopping (new user 22, N10)."""
    if job.get("kind") == "lease" or job.get("state") not in ("running", "admitted") or job.get("stop_requested") \
            or stop_detail(job, now):
        return ""
    return projected_end_text(job.get("projected_end"), now, yours=job.get("mine") is not False, brief=brief)


def planned_text(job: Mapping[str, Any], now: datetime | None, *, brief: bool = False) -> str:
    """The planned preemption of running work (:func:`~.preemption.planned_preemption_text`; ``brief``:
    when and for whom only), "" when none is planned or the work is stopping already (its stop is what
    its line says)."""
    if job.get("state") not in ("running", "admitted") or job.get("stop_requested") or stop_detail(job, now):
        return ""
    return planned_preemption_text(job.get("preemption_planned"), now, lease=job.get("kind") == "lease", brief=brief)


def limit_end(job: Mapping[str, Any]) -> datetime | None:
    """When ``job``'s time limit ends it (``started_at`` + ``time_limit_s``), None without either."""
    limit, started = job.get("time_limit_s"), wire_time(job.get("started_at"))
    if not isinstance(limit, (int, float)) or isinstance(limit, bool) or started is None:
        return None
    return started + timedelta(seconds=float(limit))


def _drain_first(job: Mapping[str, Any]) -> str:
    """The drain sentence of work whose node's drain (its answer's ``drain``) stops it before its time limit
    ends (no limit, or not started: the drain's is the first end), "" otherwise: :func:`ends_by` then says
    nothing, the line's :func:`drain_text` (``job_detail``, the queue's and the magics' detail) says when."""
    text = drain_text(job)
    if not text:
        return ""
    limit, started = job.get("time_limit_s"), wire_time(job.get("started_at"))
    evict_at = wire_time((job.get("drain") or {}).get("evict_at"))
    if evict_at is None or started is None or not isinstance(limit, (int, float)) or isinstance(limit, bool):
        return text
    return text if evict_at < started + timedelta(seconds=float(limit)) else ""


def _limit_end(job: Mapping[str, Any], now: datetime, *, latest: bool = False) -> str:
    """``ends by 05:40 UTC (in 2m58s), its 3m time limit`` (:func:`ends_by` of a job); ``latest``:
    after its projected end, ``at the latest 05:40 UTC (in 2m58s), its 3m time limit``."""
    limit, started = job.get("time_limit_s"), wire_time(job.get("started_at"))
    if not isinstance(limit, (int, float)) or isinstance(limit, bool):
        return "no time limit"
    # a limit its queue gave, not the job: "its 30m time limit (queue default; none given)" (newuser28 N8)
    given_by = f" ({words})" if (words := limit_source_words(job.get("time_limit_source"))) else ""
    if started is None:
        return f"{format_duration(float(limit))} time limit{given_by}"
    end = started + timedelta(seconds=float(limit))
    left = max(0.0, (end - now).total_seconds())
    return (f"{'at the latest' if latest else 'ends by'} {clock_text(end, now)} ({relative_text(left)}), "
            f"its {format_duration(float(limit))} time limit{given_by}")


AT_EXIT_HOLDER = "GPUs held by a kernel this server did not start (nbconvert, papermill, VS Code…)"
"""Who holds a lease whose asking process releases it at exit (``released_at_exit``, new user 16,
N1: such a lease of a live nbconvert kernel read "GPUs held for no kernel … `cancel` releases them")."""


def _lease_hold(lease: Mapping[str, Any], cancel: str, now: datetime | None = None) -> str:
    """Until when a lease holds its GPUs (it has no time limit): its owner's lease bound to no kernel,
    which no notebook can release (new user 4), is released with ``cancel`` — or with the job it is held
    for (``parent_job_id``), or by the kernel the server did not start that holds it, at its exit
    (``released_at_exit``); another user's, only its
    owner releases — whether a kernel holds it is theirs to know (kernel_id is private: its public name
    says so, else "a lease", new user 13, N9)."""
    parent = lease.get("parent_job_id")
    if parent and lease.get("mine", True) is not False:  # held for a job, not "for no kernel" (red team 15, R15)
        return (f"GPUs held for job {parent}: released when it ends (`{cancel} {lease.get('id')}` releases them "
                "sooner), no time limit")
    if lease.get("released_at_exit") and lease.get("mine", True) is not False:  # new user 16, N1
        return (f"{AT_EXIT_HOLDER}: released when it runs %gpu release or exits "
                f"(`{cancel} {lease.get('id')}` releases them sooner), no time limit")
    when, note = idle_release_words(lease.get("idle_release"))
    if not lease.get("kernel_id") and lease.get("mine", True) is not False:
        idle = "" if not when else " (or idle reclaim)" if when == "when idle" else f" (or idle reclaim {when})"
        return f"GPUs held for no kernel: `{cancel} {lease.get('id')}` releases them{idle}, no time limit{note}"
    if lease.get("mine", True) is False:
        what = "a kernel's GPUs" if lease.get("name") in LEASE_NAMES[:2] else "a lease's GPUs"
        idle = f" or they are reclaimed {when}" if when else ""
        return f"{what}: held until its owner releases them{idle}, no time limit{note}"
    busy = busy_bound_words(lease.get("idle_release"))  # red39 R8: how long "busy" keeps idle GPUs
    busy = f" ({busy})" if busy else ""
    idle = f" or reclaimed {when}{busy}" if when else busy
    if when and (kept := kept_alive_until(lease.get("idle_release"), now)) is not None:  # newuser39 n11
        idle = (f" or reclaimed {when}{busy}, not before {clock_text(kept, now)}: kept while idle until then "
                "(its keepalive)")
    kernel = _IDLE_KERNEL.get(str((lease.get("idle_release") or {}).get("kernel")), "") if when else ""
    return f"a kernel's GPUs: held until released (%gpu release){idle}, no time limit{note}{kernel}"


def keepalive_line(lease: Mapping[str, Any], now: datetime | None) -> str:
    """``kept while idle until 16:16 UTC (its keepalive); reclaimed after 30m idle, not before then`` for a
    lease its keepalive keeps now, else "" — what ``%gpu status`` adds under "This kernel: …" (newuser39 n11)."""
    kept = kept_alive_until(lease.get("idle_release"), now)
    when, _ = idle_release_words(lease.get("idle_release"))
    if kept is None or not when:
        return ""
    return f"kept while idle until {clock_text(kept, now)} (its keepalive); reclaimed {when}, not before then"


def busy_bound_words(idle_release: Any) -> str:
    """How long a kernel's "busy" keeps its lease's idle GPUs, from its wire ``idle_release``
    (``busy_after_s``, ``busy_action``: :func:`jupyter_sched.engine.lease_horizon.lease_idle_release`):
    ``kept while its kernel is busy, up to 4h00m with idle GPUs`` (released then),
    ``kept while its kernel is busy; 4h00m with idle GPUs is reported, not reclaimed`` (notify), "" when
    not said. Red39 R8: a kernel's busy state deferred idle reclaim with no bound anyone could read."""
    if not isinstance(idle_release, Mapping):
        return ""
    after = idle_release.get("busy_after_s")
    if not isinstance(after, (int, float)) or isinstance(after, bool) or after <= 0:
        return ""
    if idle_release.get("busy_action") == "notify":
        return f"kept while its kernel is busy; {format_duration(float(after))} with idle GPUs is reported, not reclaimed"
    return f"kept while its kernel is busy, up to {format_duration(float(after))} with idle GPUs"


def kept_alive_until(idle_release: Any, now: datetime | None = None) -> datetime | None:
    """Until when a lease's keepalive keeps its GPUs while idle, from its wire ``idle_release``
    (``keepalive_until``, set while it lasts), else None — and None once that is not after ``now`` (an answer
    read or kept since it ended: s40-views, "not before 16:16 UTC" of a keepalive over). Newuser39 n11: after
    ``%gpu keepalive`` every line still said only "reclaimed after 30m idle", and nothing said until when it was
    kept."""
    if not isinstance(idle_release, Mapping):
        return None
    kept = wire_time(idle_release.get("keepalive_until"))
    return None if kept is None or (now is not None and kept <= now) else kept


_IDLE_KERNEL = {
    "shutdown": "; if the kernel still holds them then (a CUDA context), it is shut down",
    "hold": "; if the kernel still holds them then (a CUDA context), they stay out of use until it lets go",
}
"""What an owner's kernel-lease line adds for ``idle_release.kernel`` (session 20: idle reclaim no
longer hands out a GPU the idle kernel still has a context on; ``c.SchedApp.idle_kernel_action``)."""


def idle_release_words(idle_release: Any) -> tuple[str, str]:
    """What this server's idle policy does to a lease, from its wire ``idle_release``
    (:func:`jupyter_sched.engine.lease_horizon.lease_idle_release`), as ``(when, note)``: ``("after
    1h00m idle", "")`` (released after the window and grace), ``("", "; this server reports idle
    leases, it does not reclaim them")`` (notify), ``("", "; this server does not reclaim idle
    leases")`` (off); ``("when idle", "")`` without the field (an older server, an event's row).
    The one wording of a lease's own line in the CLI, ``%gpu`` and ``%schedule`` (session 19: it
    said "or reclaimed when idle" whatever the server's idle policy)."""
    if not isinstance(idle_release, Mapping):
        return "when idle", ""
    action = idle_release.get("action")
    after = idle_release.get("after_s")
    if action == "release" and isinstance(after, (int, float)) and not isinstance(after, bool):
        return f"after {format_duration(float(after))} idle", ""
    if action == "notify":
        return "", "; this server reports idle leases, it does not reclaim them"
    if action == "off":
        return "", "; this server does not reclaim idle leases"
    return "when idle", ""


BULK_STATES = {"pending": "pending,preempted", "running": "admitted,running"}
"""A bulk cancel's ``--state`` → the wire states it covers (``GET jobs?state=``)."""


def in_bulk_cancel(job: Mapping[str, Any]) -> bool:
    """Whether ``cancel --mine`` / ``--all`` takes ``job`` (wire form): jobs, and leases bound to no
    kernel, which no notebook can release (new user 13, N4); a kernel's lease is its notebook's to
    release. The server's rule for the same: :func:`jupyter_sched.services.cancelling.in_bulk_cancel`."""
    return job.get("kind") != "lease" or not job.get("kernel_id")


def work_count(work: Sequence[Mapping[str, Any]]) -> str:
    """``3 jobs`` / ``1 job and 2 leases`` / ``1 lease``: what a bulk cancel acts on, leases counted
    apart (a lease bound to no kernel is one of them, new user 13, N4)."""
    leases = sum(1 for w in work if w.get("kind") == "lease")
    jobs = len(work) - leases
    parts = [f"{jobs} job{'s' if jobs != 1 else ''}"] if jobs or not leases else []
    parts += [f"{leases} lease{'s' if leases != 1 else ''}"] if leases else []
    return " and ".join(parts)


def bulk_cancel_plan(jobs: Sequence[Mapping[str, Any]], *, everyone: bool, shown: int = 10) -> list[str]:
    """What a bulk cancel would do, to confirm before it is done: a head line — ``your 3 jobs (2
    pending, 1 running)``, for an admin's ``--all`` ``5 jobs of 2 users (5 pending)`` — then one line
    per job, running ones first (they are what a cancel kills): ``j-7 (train): running, 2 GPUs``,
    with the owner for ``--all``; at most ``shown`` of them, then ``and 4 more``."""
    holding = ("admitted", "running")
    by_state = Counter("running" if j.get("state") in holding else "pending" for j in jobs)
    breakdown = ", ".join(f"{n} {s}" for s, n in sorted(by_state.items()))
    count = work_count(jobs)
    users = len({str(j.get("user")) for j in jobs})
    head = f"{count} of {users} user{'s' if users != 1 else ''} ({breakdown})" if everyone else \
        f"your {count} ({breakdown})"
    ordered = sorted(jobs, key=lambda j: j.get("state") not in holding)
    lines = [head]
    for job in ordered[:shown]:
        whose = f" of {job.get('user')}" if everyone else ""
        lines.append(f"{_head(job).split(' ', 1)[1]}{whose}: {state_word(job)}, {gpus_text(job)}")
    if len(jobs) > shown:
        lines.append(f"and {len(jobs) - shown} more")
    return lines


def bulk_cancel_summary(done: Mapping[str, int], grace_s: float | None) -> str:
    """What a bulk cancel did, from counts by outcome (``removed``: pending, taken off the queue;
    ``stopping``: running, stopped after the grace; ``released``: a lease bound to no kernel, ended;
    ``ended``: it had ended meanwhile; ``skipped``: it left the states asked for meanwhile and was
    left alone):
    ``cancelled 3 jobs: 2 pending removed from the queue; 1 running job is stopping (60 s grace)``
    (the CLI's and the magics' one wording; "1 running stopping, grace 10 s" read garbled, new user 4)."""
    removed, stopping, ended = done.get("removed", 0), done.get("stopping", 0), done.get("ended", 0)
    released = done.get("released", 0)
    parts = []
    if removed:
        parts.append(f"{removed} pending removed from the queue")
    if stopping:
        one = stopping == 1
        parts.append(f"{stopping} running job{'' if one else 's'} {'is' if one else 'are'} stopping"
                     + (f" ({grace_s:g} s grace)" if grace_s is not None else ""))
    if released:  # leases bound to no kernel (new user 13, N4): not "removed from the queue" when held
        parts.append(f"{released} lease{'' if released == 1 else 's'} bound to no kernel released")
    if ended:
        parts.append(f"{ended} had already ended")
    skipped = done.get("skipped", 0)
    if skipped:  # listed, then changed state before the cancel came (a --state pending job that started)
        parts.append(f"{skipped} had changed state and {'was' if skipped == 1 else 'were'} left alone")
    if refused := done.get("refused", 0):  # named ids of another user's live work (new user 14, N7)
        parts.append(f"{refused} {'is' if refused == 1 else 'are'} another user's: you may cancel only your own")
    total = removed + stopping
    counted = work_count([{"kind": "job"}] * total + [{"kind": "lease"}] * released)
    return f"cancelled {counted}: " + "; ".join(parts)


def bulk_cancel_answers(answers: Sequence[Mapping[str, Any]], now: datetime | None = None) -> str:
    """:func:`bulk_cancel_summary` of one or more ``POST jobs/cancel`` answers, from the server's
    counts (``ended`` also counts ``not_found``: it ended, or vanished, between a listing and the
    cancel; ``released``: a lease, said apart), then what ending them costs their teams' reclaims, one
    clause per team, as a single cancel says it (:func:`reclaim_cost_text`; ``now``: the reader's clock,
    None: with the date). The CLI's and the magics' one reading."""
    done: dict[str, int] = {"removed": 0, "released": 0, "stopping": 0, "ended": 0, "skipped": 0, "refused": 0}
    for answer in answers:
        counts = answer.get("counts") or {}
        done["removed"] += int(counts.get("removed", 0))
        done["released"] += int(counts.get("released", 0))
        done["stopping"] += int(counts.get("stopping", 0))
        done["ended"] += int(counts.get("ended", 0)) + int(counts.get("not_found", 0))
        done["skipped"] += int(counts.get("skipped", 0))
        done["refused"] += int(counts.get("refused", 0))
    grace = answers[0].get("grace_s") if answers else None
    said = bulk_cancel_summary(done, float(grace) if isinstance(grace, (int, float)) else None)
    costs = _team_costs(job for answer in answers for job in (answer.get("jobs") or ()) if isinstance(job, Mapping))
    return "; ".join([said, *(reclaim_cost_text(cost, now) for cost in costs)])


def _team_costs(jobs: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Of the jobs' ``reclaim_cooldown`` (a bulk cancel's answers), the one that holds each team's reclaims
    longest (its ``until``, the team's wait), in the order the teams first come: one line per team."""
    latest: dict[str, tuple[datetime, Mapping[str, Any]]] = {}
    for job in jobs:
        cost = job.get("reclaim_cooldown")
        until = wire_time(cost.get("until")) if isinstance(cost, Mapping) else None
        if until is None or not isinstance(cost, Mapping):
            continue
        team = str(cost.get("team"))
        if team not in latest or until > latest[team][0]:
            latest[team] = (until, cost)
    return [cost for _, cost in latest.values()]


LEASE_END_CAUSES = {
    "release": "",
    "timeout": "",  # said with its timeout: see lease_end_message
    "interrupt": "the request was interrupted while it waited",
    "kernel_exit": "its kernel's process exited",
    # a hub user's server releases through the central service with its owner's token; these say
    # it was the server, as a personal server's own release does (new user 5 #16: "released by alice")
    "kernel_shutdown": "its kernel was shut down",
    "kernel_restart": "its kernel was restarted",
    "server_stop": "the Jupyter server running its kernel was stopped",
}
SERVER_CAUSES = frozenset({"kernel_shutdown", "kernel_restart", "server_stop"})
"""Causes a hub user's Jupyter server gives for leases it releases itself (``DELETE leases/{id}?why=``): said as
``released by alice's Jupyter server`` — the owner's server, whose token the owner's own code holds too, so never as
``the server`` (red40 R4: a user's hand release read as the service's). Only the lease's owner may give one."""
"""Why a client ends a lease (``DELETE leases/{id}?why=``: the request model's closed set) → the
clause its record adds; ``release`` (the owner gave it back) needs none."""


def lease_end_message(*, granted: bool, actor: str, why: str = "", cause: str | None = None,
                      timeout_s: float | None = None) -> str:
    """The message a lease keeps when it ends by request: a grant given back reads differently
    from a request withdrawn before any GPU was granted, and a request given up by its timeout
    says so instead of naming its owner (issue 20: a timed-out request showed "released by bob",
    then "request withdrawn by root", like a withdrawal the user made).

    Args:
        granted: it held GPUs when it ended.
        actor: who ended it (user name, ``the server``).
        why: a cause in words, e.g. ``its kernel was shut down`` (the server's own).
        cause: the client's cause, one of :data:`LEASE_END_CAUSES` (``timeout``: no GPUs came
            within ``timeout_s`` seconds).
        timeout_s: with ``cause="timeout"``: the timeout that passed.
    """
    if cause == "timeout":
        # "2.5s" as the magic's --timeout said it; longer ones as durations ("10m")
        said = (f"{timeout_s:g}s" if timeout_s < 60 else format_duration(timeout_s)) if timeout_s else ""
        within = f"its {said} timeout" if said else "its timeout"
        if not granted:
            return f"request withdrawn: no GPUs granted within {within}; nothing was held"
        why = why or f"granted only after {within} had passed"
    why = why or LEASE_END_CAUSES.get(cause or "", "")
    if cause in SERVER_CAUSES:  # the owner's own server says it with the owner's token, which the owner's code holds
        actor = f"{actor}'s Jupyter server"  # too: named as theirs, never as this service (red40 R4)
    if granted:
        return f"{_RELEASED_BY}{actor}" + (f": {why}" if why else "")
    return f"request withdrawn by {actor} before any GPU was granted" + (f": {why}" if why else "")


def definition_deleted(target: str, answer: Mapping[str, Any], *, cancel: str) -> str:
    """What ``DELETE definitions/{id}`` did, in words: its runs stay, and the ones still waiting
    to start are named with how to cancel them (``cancel``: ``jupyter-sched cancel`` or
    ``%schedule cancel``), or said cancelled (``cancel_runs``). New user 8, N3: "its runs stay in
    the job history" while a queued firing went on to run two minutes later."""
    waiting = [run for run in answer.get("waiting_runs") or () if run.get("state") in ("pending", "preempted")]
    gone = [run for run in answer.get("waiting_runs") or () if run.get("state") == "cancelled"]
    total = int(answer.get("waiting_total") or len(waiting) + len(gone))
    more = total - len(waiting) - len(gone)
    said = f"deleted {target}: it fires no more"

    def ids(runs: Sequence[Mapping[str, Any]]) -> str:
        return " ".join(str(run["id"]) for run in runs)

    if gone and not waiting:
        return (f"{said}; cancelled its {_count(len(gone) + max(more, 0), 'queued run')} ({ids(gone)}"
                + (" …" if more > 0 else "") + "); the others stay in the job history")
    if not waiting:
        return f"{said}; its runs stay in the job history"
    listed = ", ".join(named(run["id"], str(run.get("name") or "")[:60]) for run in waiting[:3])
    extra = f" and {total - 3} more" if total > 3 else ""
    them = "it" if total == 1 else "them"
    verb = "is" if total == 1 else "are"
    return (f"{said}; {_count(total, 'run')} {verb} still queued and will run: {listed}{extra} — to cancel {them}: "
            f"{cancel} {ids(waiting)}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def changed_line(job: Mapping[str, Any], now: datetime | None = None) -> str:
    """What a ``PATCH jobs/{id}`` did to ``job`` (its answer, wire form), one line: ``j-… (train): held (release
    with: …)``; several fields joined with ``; `` (hubadmin25 B18: ``jupyter-sched hold|release|update|top`` and
    ``%schedule hold|release`` say it alike). The server's times in it as clock times on ``now``'s day
    (newuser27 n3: ``released (held by root since 2026-12-05T22:14:15Z)``)."""
    name = str(job.get("name") or "")
    who = f"{job.get('id')}" + (f" ({name})" if name and name != job.get("id") else "")
    said = "; ".join(str(line) for line in job.get("changed") or ()) or "nothing changed"
    return f"{who}: {clock_times(said, now)}"


def searched_path_text(sent: str | None, *, hub: bool) -> str:
    """Where a program named without a folder was looked for, for the refusal of one found in none (new user 13,
    N10): the PATH sent with the job (``sent``: the CLI and the magics send the submitter's since newuser27 N2) —
    ``the job runs with the PATH sent with it (/p/.venv/bin first, 7 folders) and none of its folders holds it``
    (newuser28 n1: it said "the server's PATH, not your shell's" of the shell's own PATH); else the server's
    (``hub``: the owner's clean environment's), ``not your shell's (env PATH sets its own)``."""
    if sent is None:
        return ("the job runs " + ("as your account with a clean environment's PATH" if hub else "with the server's PATH")
                + ", not your shell's (env PATH sets its own)")
    folders = [part for part in sent.split(":") if part]
    if not folders:
        return "the PATH sent with the job is empty (env PATH sets it)"
    first = folders[0] if len(folders[0]) <= 120 else folders[0][:119] + "…"
    count = f"{len(folders)} folders" if len(folders) != 1 else "1 folder"
    return f"the job runs with the PATH sent with it ({first} first, {count}) and none of its folders holds it"


def run_file_hint(name: str) -> str:
    """How to run ``name``, a file in the job's working directory that is no program on its PATH, by its
    kind (newuser26 n6: ``submit slow.py`` was told "give its full path"): ``run it with its interpreter
    (CLI: -- python slow.py, or --script slow.py)``; ``-- bash x.sh``; ``--notebook x.ipynb``; else ``-- ./x``."""
    shown, lower = shlex.quote(name), name.lower()
    if lower.endswith(".ipynb"):
        return f"run it as a notebook (CLI: --notebook {shown})"
    if lower.endswith(".py"):
        return f"run it with its interpreter (CLI: -- python {shown}, or --script {shown})"
    if lower.endswith(".sh"):
        return f"run it with its interpreter (CLI: -- bash {shown})"
    return f"give its path (CLI: -- ./{name if shown == name else shlex.quote('./' + name)}), or run it with its interpreter"
