"""A job named by its name: the server resolves a name for its caller, and refuses another user's (newuser39 n6).

``GET jobs?name=NAME`` lists the caller's own jobs and leases of that name — what the CLI's and the magics'
one resolver of a job reference reads (:func:`jupyter_sched.client._wire.job_named`). When none of theirs has
it and other users' live work does (the shared queue shows everyone each live job's name, id and owner), the
answer says whose that work is, as a refusal of its id does (:meth:`.context.Context.visible`):

- a non-admin gets a 403 (``forbidden``) in the words of the request ``purpose`` names (``'half0' is n39c's
  job j-… (running), not yours: you may cancel only your own``), and it is audited as that request
  (:data:`~jupyter_sched.wording.not_yours.PURPOSES`: ``cancel job``, ``read logs``…) with the job's id: an
  admin reading "who tried to stop my job" finds an attempt by name beside one by id;
- an admin, who acts on anyone's work by its id but is never sent to someone else's by a name (a name is
  looked for among the caller's own only), gets a 400 with its id to give.

Before, the client found the name in the queue and refused it itself: the server saw a read of the queue and
the audit had no row of it (newuser39 n6: ``jupyter-sched cancel half0`` of another user's job).
"""

from __future__ import annotations

from typing import Any

from ..admission import Caller
from ..errors import AuthorizationError, ValidationError
from ..model import JobKind
from ..model.job import public_name
from ..store import LIVE_STATES
from ..wording.not_yours import PURPOSES, named_by_others
from .context import Context
from .models import ListJobsRequest

__all__ = ["AUDITED_AT_MOST", "LOOKED_AT", "NAME_WIDTH", "looks_for_others", "others_named", "refuse_named_by_others"]

NAME_WIDTH = 200
"""Characters of a name ``GET jobs?name=`` takes and matches: the longest a submit gives, what the store's
``jobs.name`` column keeps (a longer lease name is matched by its start)."""

LOOKED_AT = 100
"""Other users' live jobs of one name read at most (the refusal names three and counts the rest)."""

AUDITED_AT_MOST = 3
"""Audit records one refusal by name writes at most: one per job of another user's its words name."""


def looks_for_others(request: ListJobsRequest, kind: JobKind | None) -> bool:
    """Whether an empty page of ``request`` is the caller's own work of its ``name`` alone — no other filter, no
    other user's list, no later page: only then does "none of yours has it" hold, and others' are looked for."""
    return (request.name is not None and kind is None and not request.all and request.user is None
            and request.state is None and request.kind is None and request.team is None and request.since is None
            and request.until is None and request.cursor is None)


def others_named(ctx: Context, caller: Caller, name: str) -> list[dict[str, Any]]:
    """Other users' live work named ``name`` as the queue shows it to everyone (``id``, ``user``, ``state``,
    ``kind``), oldest first. A lease is matched by its public name (:func:`~jupyter_sched.model.job.public_name`):
    one still named after its kernel id is never found by that id (new user 10, N11)."""
    with ctx.store.transaction(write=False) as tx:
        records = tx.list_jobs(name=name, states=LIVE_STATES, limit=LOOKED_AT)
    return [{"id": job.id, "user": job.spec.user, "state": job.state.value, "kind": job.spec.kind.value}
            for job in (record.job for record in records)
            if job.spec.user != caller.user and public_name(job.spec)[:NAME_WIDTH] == name]


def refuse_named_by_others(ctx: Context, caller: Caller, request: ListJobsRequest) -> None:
    """Refuse ``request``'s ``name`` when only other users' live work has it (module docstring); return when none
    has it (the empty page then says so).

    Raises:
        AuthorizationError: a non-admin (field ``name``; ``details``: ``name``, ``others``, ``admin``) — audited
            once per job its words name, as the request ``purpose`` names.
        ValidationError: an admin: the id to give (field ``name``; the same ``details``).
    """
    name = str(request.name)
    others = others_named(ctx, caller, name)
    if not others:
        return
    message, hint = named_by_others(name, others, admin=caller.admin, command=request.purpose)
    details: dict[str, Any] = {"name": name, "others": others, "admin": caller.admin}
    if caller.admin:
        raise ValidationError(message, field="name", hint=hint, details=details)
    audited_as = PURPOSES[request.purpose]
    for row in others[1:AUDITED_AT_MOST]:  # each job named is on the record, as a probe of its id would be
        ctx.admission.record_refusal(caller, AuthorizationError(message, field="name", hint=hint, details=details),
                                     request=audited_as, job_id=row["id"])
    ctx.admission.refuse(caller, AuthorizationError(message, field="name", hint=hint, details=details),
                         request=audited_as, job_id=others[0]["id"])
