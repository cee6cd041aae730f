"""Each user's submit keys: the ``submit_keys`` rows (schema version 28; s31-n8's next step).

A client sends a key of its own choosing with a submit (``POST jobs?idempotency_key=K``, or the
``Idempotency-Key`` header) and the same key when it sends that submit again — after an answer lost
in a restart of the service, say. The row remembers ``(user, key) → job id`` and a digest of the
request, in the submit's own transaction: a repeated key is answered with the job it made (never a
second job), a key reused for another request is refused (409 naming ``idempotency_key``). Keys
belong to their user: the same key of another user is another row, and never finds this one's job.

Bounded: each user keeps their newest :data:`KEPT_PER_USER` keys (older ones are deleted by the
insert that passes the bound), so a client that sends a new key per submit cannot grow the table.
"""

from __future__ import annotations

import re
from datetime import datetime

import sqlalchemy as sa

from ..errors import ConflictError, ValidationError
from . import schema
from .codec import ts

__all__ = ["KEPT_PER_USER", "KEY_FIELD", "SubmitKeyTaken", "check_key", "find_key", "remember_key"]

KEPT_PER_USER = 1000
"""Newest submit keys kept per user (a resend comes within minutes; this many submits is hours of a busy script)."""

KEY_FIELD = "idempotency_key"
"""The query argument (and error field) a submit key travels in."""

_KEY = re.compile(r"[A-Za-z0-9._:-]{1,128}")


class SubmitKeyTaken(ConflictError):
    """The key was written by a concurrent submit of the same user between this one's look and its insert."""


def check_key(key: str) -> str:
    """``key`` when it is a usable submit key.

    Raises:
        ValidationError: not 1 to 128 letters, digits, ``.``, ``_``, ``:`` or ``-`` (field ``idempotency_key``).
    """
    if not _KEY.fullmatch(key):
        raise ValidationError(f"idempotency_key {key[:40]!r} is not a submit key", field=KEY_FIELD,
                              hint="send 1 to 128 letters, digits, '.', '_', ':' or '-' (a UUID is one), the same "
                                   "for each resend of one submit")
    return key


def find_key(conn: sa.Connection, user: str, key: str) -> tuple[str, str] | None:
    """``(job id, request digest)`` remembered for ``user``'s ``key``; None when there is none."""
    table = schema.submit_keys
    row = conn.execute(sa.select(table.c.job_id, table.c.digest).where(
        table.c.user == user, table.c.key == key)).first()
    return None if row is None else (str(row.job_id), str(row.digest))


def remember_key(conn: sa.Connection, user: str, key: str, job_id: str, digest: str, at: datetime) -> None:
    """Remember ``user``'s ``key`` for ``job_id`` (in the submit's transaction), dropping the user's keys
    past the newest :data:`KEPT_PER_USER`.

    Raises:
        SubmitKeyTaken: a concurrent submit of the same user wrote that key first (nothing written here).
    """
    table = schema.submit_keys
    try:
        with conn.begin_nested():
            conn.execute(table.insert().values(user=user, key=key, job_id=job_id, digest=digest, created_at=ts(at)))
    except sa.exc.IntegrityError as exc:
        raise SubmitKeyTaken(f"submit key {key!r} was just used", field=KEY_FIELD) from exc
    cutoff = conn.execute(sa.select(table.c.created_at, table.c.key).where(table.c.user == user)
                          .order_by(table.c.created_at.desc(), table.c.key.desc())
                          .offset(KEPT_PER_USER).limit(1)).first()
    if cutoff is not None:
        conn.execute(table.delete().where(table.c.user == user, sa.or_(
            table.c.created_at < cutoff.created_at,
            sa.and_(table.c.created_at == cutoff.created_at, table.c.key <= cutoff.key))))
