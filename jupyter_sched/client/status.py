"""What ``jupyter-sched status`` and ``%schedule status`` (no job) ask the server, gathered once for
both (:func:`jupyter_sched.wording.status.status_lines` writes it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from ..errors import SchedError

__all__ = ["idle_notes", "status_lines_of"]


def status_lines_of(client: Any, *, config: dict[str, Any] | None = None, me: dict[str, Any] | None = None,
                    inventory: dict[str, Any] | None = None) -> list[str]:
    """The summary's lines for ``client``'s caller: three small answers (``GET config``, ``me``,
    ``inventory``; given ones are not asked again) — ``GET me`` already counts my running jobs,
    leases and pending jobs, so no list of all my jobs is fetched; only my GPU-holding work while
    I have some (``GET jobs?state=admitted,running``: to say the stops of jobs stopping, each job's
    own progress report, and work on GPUs gone from the inventory, verify 23 V4) — and the open idle
    warnings of my work."""
    from ..wording.status import status_lines

    config = client.config() if config is None else config
    me = client.me() if me is None else me
    inventory = client.inventory() if inventory is None else inventory
    in_use = me.get("in_use") if isinstance(me.get("in_use"), dict) else {}
    holding: list[dict[str, Any]] = []
    if isinstance(in_use, dict) and (int(in_use.get("jobs") or 0) or int(in_use.get("leases") or 0)):
        # my GPU-holding work: the jobs' stops and progress, and any of it on GPUs gone from the inventory
        holding = client.jobs(state="admitted,running")
    running = [j for j in holding if j.get("kind") != "lease"]
    stopping = [j for j in running if j.get("stopping_since")] if isinstance(in_use, dict) and \
        int(in_use.get("stopping") or 0) else []
    return status_lines(str(client.connection.url), config, me, inventory, stopping=stopping, idle=idle_notes(client, running),
                        running=running, now=datetime.now(timezone.utc), gone=[j for j in holding if j.get("gone_gpus") or j.get("unhealthy_gpus") or j.get("drain")])


def idle_notes(client: Any, work: Iterable[Mapping[str, Any]] = ()) -> dict[str, str]:
    """``{job id: idle_note}`` of the caller's idle work (``GET idle``: own; an admin's, everyone's),
    from its first idle sample (new user 22, N6); {} when the server offers none or refuses. ``work``:
    the job rows at hand — an idle deadline after a job's time limit ends it is not said before the
    warning (:func:`~jupyter_sched.wording.jobs.limit_end`)."""
    from ..wording.jobs import idle_note, limit_end

    try:
        entries = client.idle_candidates()
    except SchedError:
        return {}
    now = datetime.now(timezone.utc)
    rows = list(work)
    ends = {str(job.get("id")): limit_end(job) for job in rows}
    # a lease neither bound to a kernel nor held by a process of its own (POST leases as such)
    kernels = {str(job.get("id")): bool(job.get("kernel_id") or job.get("released_at_exit"))
               for job in rows if job.get("kind") == "lease"}
    simulated = {str(job.get("id")) for job in rows if job.get("simulated") is True}
    # held by a kernel this server did not start: maybe a notebook run headless, with no one to run a cell (race41)
    unseen = {str(job.get("id")) for job in rows if job.get("kind") == "lease" and job.get("released_at_exit")
              and not job.get("kernel_id")}
    return {str(e.get("job_id")): note for e in entries
            if (note := idle_note(e, now, ends_at=ends.get(str(e.get("job_id"))), kernel=kernels.get(str(e.get("job_id"))),
                                  simulated=str(e.get("job_id")) in simulated, unseen=str(e.get("job_id")) in unseen))}
