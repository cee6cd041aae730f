"""What a caller is told of another user's job they named: by its id (the server's 403) or by its name.

The shared queue shows everyone each live job's id, owner, state and name (others' leave out what they
run and where). A job named there is therefore said to be its owner's, by id as by name, and nothing more
of it: its command, folder and log stay its owner's. Ended work of others is not in the queue and is never
named (a name or id of it reads as unknown).

- :func:`not_yours_words`: what the caller may do instead, by request (``you may cancel only your own``):
  the server's refusal of an id (``services.context``) and the client's of a name say it alike.
- :func:`named_by_others`: the refusal of a NAME that none of the caller's jobs has but another user's live
  job in the queue does (newuser32 n3: ``jupyter-sched cancel b-x`` said "none of your jobs is named 'b-x',
  and no job has that id" while the queue listed bob's b-x, and its id was answered "another user's job").
  The server says it (``GET jobs?name=``, :mod:`jupyter_sched.services.job_names`) and audits it as it
  audits the id (newuser39 n6); the CLI and the magics say it again with the command to type.
- :func:`purpose_of`: what a typed command means to do with the job it names (``GET jobs``' ``purpose``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..textsafe import printable_name

__all__ = ["NOT_YOURS", "PURPOSES", "TOP_ADMIN_ONLY", "named_by_others", "not_yours_words", "purpose_of",
           "request_of"]

TOP_ADMIN_ONLY = "only an admin puts a job first in its class"
"""The refusal of ``top`` by a non-admin, of any job, their own or another's (newuser38 n8): an admin-only
request is refused as such before whose the job is — "you may … only your own" implied its owner could."""

NOT_YOURS: dict[str, str] = {
    "cancel": "you may cancel only your own",
    "update": "you may hold, release or change only your own (an admin changes anyone's)",
    "read logs": "you may read only your own jobs' logs",
    "keep a lease alive": "you may keep only your own leases alive",
}
"""Per request (its first words, as the server's services name them): what the caller may do instead."""

PURPOSES: dict[str, str] = {"read": "read job", "cancel": "cancel job", "update": "update job", "top": "update job",
                            "logs": "read logs"}
"""What a caller means to do with the job a name finds (``GET jobs?name=…&purpose=…``) → the request the server's
refusal of that job's id is audited as (``DELETE jobs/{id}``: ``cancel job``; ``GET jobs/{id}/logs``: ``read logs``):
a refusal by name is on the record as the same request (newuser39 n6)."""

_PURPOSE_OF = {"cancel": "cancel", "hold": "update", "release": "update", "update": "update", "top": "top",
               "logs": "logs"}
"""A CLI or magic command's last word → its purpose in :data:`PURPOSES` (others: ``read``, a look into the job)."""

_REQUEST_OF = {"cancel": "cancel", "update": "update", "top": "update", "logs": "read logs", "read": "look into"}
"""A purpose → its request in :data:`NOT_YOURS` (``look into``: the words of a request without its own)."""

_SHOWN = 3
"""Most jobs of others one refusal lists (the rest are counted)."""


def not_yours_words(request: str, noun: str = "job") -> str:
    """What the caller may do with their own ``noun`` (``job``, ``lease``) that ``request`` (``cancel``,
    ``read logs …``, ``look into``) refused for another user's: ``you may cancel only your own``; a request
    without words of its own reads ``you may look into only your own jobs (the queue shows what others see
    of it)``."""
    return next((words for verb, words in NOT_YOURS.items() if request.startswith(verb)),
                f"you may look into only your own {noun}s (the queue shows what others see of it)")


def purpose_of(command: str) -> str:
    """The purpose (:data:`PURPOSES`) of a typed command (``jupyter-sched cancel``, ``%schedule logs``, ``hold``,
    ``top``): its last word mapped by :data:`_PURPOSE_OF`, ``read`` for any other word; "" for none."""
    word = command.split()[-1] if command.split() else ""
    return _PURPOSE_OF.get(word, "read" if word else "")


def request_of(command: str) -> str:
    """The request of a typed command or of a purpose (``jupyter-sched cancel``, ``%schedule logs``, ``hold``,
    ``read``) in :data:`NOT_YOURS`' words; "" for none (the words then say only where names are looked for)."""
    return _REQUEST_OF.get(purpose_of(command), "")


def named_by_others(ref: str, others: Sequence[Mapping[str, Any]], *, admin: bool,
                    command: str = "") -> tuple[str, str]:
    """The refusal's ``(message, hint)`` for the name ``ref`` that none of the caller's jobs has and the
    queue lines ``others`` (another user's each: ``id``, ``user``, ``state``, ``kind`` as ``GET queue``
    shows them to everyone) have, for ``command`` (``jupyter-sched cancel``; the server's answer: its purpose
    alone, ``cancel`` — the ids are then given bare, as a REST caller types them; "" when not known).

    A non-admin reads whose it is and what they may do (the words of the same refusal by id)::

        'b-x' is bob's job j-1 (running), not yours: you may cancel only your own
        hint: ask bob or an admin

    An admin, who may act on anyone's job by its id (a name is looked for among their own only, so that a
    name never acts on someone else's work by surprise), gets that id to type::

        'b-x' is bob's job j-1 (running), not yours: a name is looked for among your own jobs only
        hint: give its id: `jupyter-sched cancel j-1`
    """
    name = printable_name(ref[:80])
    shown = [_whose(row) for row in others[:_SHOWN]]
    more = f" and {len(others) - _SHOWN} more" if len(others) > _SHOWN else ""
    noun = "lease" if all(row.get("kind") == "lease" for row in others) else "job"
    if len(others) == 1:
        said = f"{name!r} is {shown[0]}, not yours"
    else:
        said = (f"{name!r} is the name of {len(others)} {noun}s of other users in the queue, none of them yours: "
                f"{', '.join(shown)}{more}")
    if admin:
        ids = [str(row.get("id")) for row in others[:_SHOWN]]
        typed = [f"`{command} {job_id}`" if _typed(command) else job_id for job_id in ids]
        hint = f"give its id: {typed[0]}" if len(others) == 1 else f"give the id of the one you mean: {' or '.join(typed)}"
        return f"{said}: a name is looked for among your own {noun}s only", hint
    request = request_of(command)
    if purpose_of(command) == "top":  # admin-only: not "only your own", which its owner could not either (n8)
        top = f"`{command} {others[0].get('id')}`" if _typed(command) else \
            f"jupyter-sched top {others[0].get('id')}"  # as the server's refusal of its id hints (job_update)
        return f"{said}: {TOP_ADMIN_ONLY}", f"ask an admin: {top}"
    owners = sorted({str(row.get("user") or "") for row in others} - {""})
    ask = f"ask {owners[0]} or an admin" if len(owners) == 1 else "ask their owners or an admin"
    if not request:
        return f"{said}: a name is looked for among your own {noun}s only", ask
    return f"{said}: {not_yours_words(request, noun)}", ask


def _typed(command: str) -> bool:
    """Whether ``command`` is a command as typed (``jupyter-sched cancel``, ``%schedule wait``), not a purpose alone."""
    return len(command.split()) > 1


def _whose(row: Mapping[str, Any]) -> str:
    """``bob's job j-1 (running)`` — what the queue shows everyone of a line, said in one phrase."""
    noun = {"lease": "lease", "inference": "service"}.get(str(row.get("kind") or ""), "job")
    user = printable_name(str(row.get("user") or "another user")[:64])
    return f"{user}'s {noun} {row.get('id')} ({row.get('state')})"
