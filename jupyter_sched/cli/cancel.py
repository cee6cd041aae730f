"""``jupyter-sched cancel``: by id, all of mine (``--mine``) or everyone's (``--all``, admins).

Each cancel prints what happened — ``cancelled j-7 (was running; stopping, grace 60 s)`` — not
the state the server answered with (``running`` read as a failed cancel). A bulk cancel lists
what it would do, asks (``--yes`` skips the question; without a terminal it refuses rather than
guess), shows a progress bar while it works and ends with the counts.
"""

from __future__ import annotations

import argparse
from collections import Counter
from datetime import datetime, timezone
from io import StringIO
from typing import Any

from ..errors import AuthorizationError, ConflictError, NotFoundError, SchedError
from ..wording import cancel_outcome
from ..wording.jobs import (
    KERNEL_TOLD,
    TERMINAL_STATES,
    bulk_cancel_answers,
    granted_uuids,
    in_bulk_cancel,
    nothing_to_cancel,
    work_count,
)
from .confirm import confirmed, interactive
from .main import EXIT_OK, EXIT_USAGE, PROG, Streams, error_line, failure, job_of, refused_status
from .progress import CountingProgress

__all__ = ["cancel"]

WAITING = ("pending", "preempted")
BULK_PAGE = 1000
"""Jobs listed per request of a bulk cancel (the server's largest page); it reads every page."""
BULK_IDS = 1000
"""Ids per ``POST jobs/cancel`` of a confirmed bulk cancel (the server takes 10,000; smaller
batches move the progress bar)."""
HOLDING = ("admitted", "running")
STATES = {"pending": WAITING, "running": HOLDING, "": WAITING + HOLDING}
"""``--state`` → the states a bulk cancel acts on (none: every live state)."""


def cancel(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """Dispatch: ids one by one, else the bulk forms. ``-q``: nothing on stdout (the outcome lines), as
    ``submit -q`` for scripts; errors still go to stderr and set the exit status, ``--json`` still answers,
    and --mine/--all still ask first (new user 30, n5: ``cancel -q`` was "not an option")."""
    if getattr(args, "quiet", False) and not args.json:  # a Namespace made by hand has none
        io = Streams(out=StringIO(), err=io.err, stdin=io.stdin)
    if args.mine or args.everyone:
        return _cancel_many(client, args, io)
    grace: list[float | None] = []
    code = EXIT_OK
    for ref in args.job_ids:
        try:
            # a name of mine is taken for its id, as logs and wait do (new user 11, N5): of several, the live
            # one (newuser22 N4: a rerun's ended runs made the name ambiguous)
            job_id = job_of(client, ref, "cancel", io)
        except SchedError as exc:
            if len(args.job_ids) == 1:
                raise
            print(failure(args, error_line("cancel", exc), exc), file=io.err)
            code = max(code, refused_status(exc))  # 2 if any was bad input (newuser38 n2)
            continue
        try:
            before = client.job(job_id)
        except (NotFoundError, AuthorizationError):  # none, or another user's (403 since newuser29 n5)
            before = None  # the cancel below says "not found" in the server's words
        if before is not None and before.get("state") in TERMINAL_STATES and not args.json:
            print(nothing_to_cancel(before, datetime.now(timezone.utc)), file=io.out)  # news, not an error (new user 22)
            continue
        try:
            after = client.cancel(job_id)
        except SchedError as exc:
            ended = _ended_meanwhile(client, job_id, exc) if not args.json else None
            if ended is not None:
                print(ended, file=io.out)
                continue
            if len(args.job_ids) == 1:
                raise
            print(failure(args, error_line("cancel", exc), exc), file=io.err)  # keep going with the other ids
            code = max(code, refused_status(exc))  # 2 if any was bad input (newuser38 n2)
            continue
        if args.json:
            _dump_line(after, io)
            continue
        print(cancel_outcome(before, after, grace_s=_grace(client, after, grace), now=datetime.now(timezone.utc)),
              file=io.out)
        if after.get("kind") == "lease" and (before or after).get("kernel_id") and granted_uuids(before or after):
            # what its kernel's magics do, and when (new user 6, F18; new user 23, N17: it said "not told")
            print(f"  {KERNEL_TOLD}", file=io.out)
    return code


def _ended_meanwhile(client: Any, job_id: str, exc: SchedError) -> str | None:
    """:func:`nothing_to_cancel`'s line when the cancel was refused because the work ended between
    the read and the cancel (a 409); None for any other refusal."""
    if not isinstance(exc, ConflictError):
        return None
    try:
        job = client.job(job_id)
    except SchedError:
        return None
    return nothing_to_cancel(job, datetime.now(timezone.utc)) if job.get("state") in TERMINAL_STATES else None


def _grace(client: Any, after: dict[str, Any], cache: list[float | None]) -> float | None:
    """The server's SIGTERM→SIGKILL grace (``GET config``'s ``stop_grace_s``), asked once, only
    when a running job is being stopped."""
    if after.get("state") not in HOLDING:
        return None
    if not cache:
        value = client.config().get("stop_grace_s")
        cache.append(float(value) if isinstance(value, (int, float)) else None)
    return cache[0]


def _cancel_many(client: Any, args: argparse.Namespace, io: Streams) -> int:
    """``--mine`` / ``--all``: one ``POST jobs/cancel`` (issue 20 F2: one ``DELETE`` per job took
    ~20 ms of server time each). With ``--yes`` the server selects the jobs; otherwise the CLI
    lists them, asks, and cancels exactly the ones it listed (by id, in :data:`BULK_IDS` batches,
    with the same state filter: a listed job that changed state meanwhile is left alone)."""
    me = client.me()
    who = str(me.get("user") or "you")
    if args.everyone and not me.get("is_admin"):
        raise AuthorizationError(f"only admins may cancel everyone's jobs ({who} is not an admin)", field="--all",
                                 hint="cancel --mine cancels your own")
    user, team = getattr(args, "user", None), getattr(args, "team", None)  # --all narrowed (hubadmin24 B17)
    states = STATES.get(args.state or "", STATES[""])
    scope = f" of {user}" if user else f" of team {team}" if team else ""
    nothing = (f"nothing to cancel: no {args.state or 'pending or running'} jobs"
               + (scope if args.everyone else f" of {who}"))
    if args.yes and not scope:
        answer = client.cancel_jobs(mine=not args.everyone, all_users=bool(args.everyone), states=list(states))
        if not answer.get("jobs"):
            print(nothing, file=io.out)
            return EXIT_OK
        print(_summary([answer]), file=io.out)
        return EXIT_OK
    listed = client.jobs_all(state=",".join(states), all_users=bool(args.everyone), user=user or None,
                             page=BULK_PAGE)  # every page
    if scope:  # the listing's own filter is no promise for every server: said here
        listed = [j for j in listed if (not user or j.get("user") == user) and (not team or j.get("team") == team)]
    jobs = [j for j in listed if in_bulk_cancel(j)]  # and leases bound to no kernel (new user 13, N4)
    leases = len(listed) - len(jobs)
    whose = ("every user's" if not scope else f"{user}'s" if user else f"team {team}'s") if args.everyone else "your"
    if not jobs:
        from .team_names import unknown_team

        unknown = unknown_team(client, team) if args.everyone else None
        if unknown:  # a mistyped team is no team with nothing to cancel (hubadmin25 B14)
            print(f"{PROG} cancel: --team: {unknown} [usage_error]", file=io.err)
            return EXIT_USAGE
        print(nothing, file=io.out)
        return EXIT_OK
    by_state = Counter("running" if j.get("state") in HOLDING else "pending" for j in jobs)
    breakdown = ", ".join(f"{n} {s}" for s, n in sorted(by_state.items()))
    users = Counter(str(j.get("user")) for j in jobs)
    owners = f" of {len(users)} users" if args.everyone else ""
    _list(jobs, io, owners=bool(args.everyone), leases=leases)
    if args.yes:  # a scoped --yes cancels exactly what it listed
        pass
    elif not interactive(io):
        print(f"{PROG} cancel: would cancel {work_count(jobs)} ({breakdown}); not "
              "asking without a terminal — add --yes to go ahead", file=io.err)
        return EXIT_USAGE
    leased = any(j.get("kind") == "lease" for j in jobs)
    counted = (f"{work_count(jobs)} of {'yours' if whose == 'your' else whose}" if leased
               else f"{len(jobs)} of {whose} jobs")
    if not args.yes:
        if not confirmed(io, f"Cancel {counted}{owners} ({breakdown})?"):
            print("nothing cancelled", file=io.out)
            return EXIT_OK
    ids = [str(j["id"]) for j in jobs]
    answers = []
    with CountingProgress(io.err, total=len(ids), label="cancelling") as bar:
        for start in range(0, len(ids), BULK_IDS):
            batch = ids[start:start + BULK_IDS]
            answers.append(client.cancel_jobs(ids=batch, states=list(states)))
            bar.advance(len(batch))
    print(_summary(answers), file=io.out)
    return EXIT_OK


def _summary(answers: list[dict[str, Any]]) -> str:
    """The one line of a bulk cancel (the renderer's, shared with ``%schedule cancel --mine``)."""
    return bulk_cancel_answers(answers, datetime.now(timezone.utc))


SHOWN = 10
"""Jobs a bulk cancel names before it asks (the running ones first: those lose work)."""


def _list(jobs: list[dict[str, Any]], io: Streams, *, owners: bool, leases: int) -> None:
    """What a bulk cancel would cancel, on stderr before the question: ``  j-… (train)  running  2 GPUs``."""
    from ..wording import gpus_text

    ordered = sorted(jobs, key=lambda j: 0 if j.get("state") in HOLDING else 1)
    for job in ordered[:SHOWN]:
        name = f" ({job['name']})" if job.get("name") not in (None, "", "job") else ""  # "job": the default
        who = f"{job.get('user')}  " if owners else ""
        state = "running" if job.get("state") in HOLDING else "pending"
        print(f"  {who}{job['id']}{name}  {state}  {gpus_text(job)}", file=io.err)
    if len(ordered) > SHOWN:
        print(f"  … and {len(ordered) - SHOWN} more (`{PROG} queue --mine` lists them)", file=io.err)
    if leases:
        print(f"  (kernel leases are left alone: {leases}; a notebook releases its GPUs with %gpu release)",
              file=io.err)


def _dump_line(value: Any, io: Streams) -> None:
    import json

    io.out.write(json.dumps(value, sort_keys=True) + "\n")
