"""The secret jobs' progress tokens are derived from, in the store (schema version 19; hubadmin23/24 A19).

It was a file beside each server's data folder (``c.SchedApp.job_token_secret_file``): servers sharing one
PostgreSQL store on several hosts, a redeploy onto a fresh folder, or a restored backup each had another
secret, and every running job's progress reports were refused. Now the ``job_token_secrets`` table holds it,
one row per generation:

* :func:`ensure_job_secret` — at a start: the store's secrets; when it has none, the old file's secret is
  moved in (the tokens of jobs running under it keep working), else a new random one is made. The row's key
  (generation 1) makes this race-free: of two servers starting at once, one inserts, the other reads it.
* :func:`rotate_job_secret` — ``jupyter-sched doctor rotate-job-secret``: a new generation is minted with from
  then on; the one before is retired and still verifies the tokens of runs admitted before the rotation, until
  those runs end (the retired secrets no running run can need are deleted then); ``revoke`` deletes every
  retired secret at once (a leaked secret: the running jobs' reports are refused until they end). Audited
  (action ``job_secret_rotated``), never with a secret.

A secret is never returned by any API, never logged and never in an audit row; :class:`JobSecret`'s repr
leaves it out.
"""

from __future__ import annotations

import secrets as random_secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import sqlalchemy as sa

from ..errors import StoreError
from ..model import JobState
from . import schema
from .codec import parse_ts, ts

if TYPE_CHECKING:
    from .store import Store

__all__ = ["ROTATED_ACTION", "JobSecret", "Rotation", "current_and_retired", "ensure_job_secret", "new_secret",
           "read_job_secrets", "rotate_job_secret"]

ROTATED_ACTION = "job_secret_rotated"
"""The audit action of a rotation."""
SECRET_BYTES = 32
"""Random bytes of a new secret (64 hex characters)."""


@dataclass(frozen=True, slots=True)
class JobSecret:
    """One generation of the job-token secret.

    Attributes:
        generation: 1, 2, … (the newest not retired is the one tokens are minted with).
        secret: the secret (hex text as bytes; never shown: not in the repr).
        created_at: when it was made or moved in (UTC).
        retired_at: when a rotation retired it (UTC); None: current.
        source: ``made``, ``moved from <file>`` or ``rotated by <actor>``.
    """

    generation: int
    secret: bytes = field(repr=False)
    created_at: datetime
    retired_at: datetime | None
    source: str


@dataclass(frozen=True, slots=True)
class Rotation:
    """What :func:`rotate_job_secret` did: the new ``generation``, the generations still kept retired for
    running runs (``kept``) and those deleted (``deleted``), and the runs holding GPUs now (``running``)."""

    generation: int
    kept: tuple[int, ...]
    deleted: tuple[int, ...]
    running: int


def new_secret() -> bytes:
    """A new random secret (:data:`SECRET_BYTES` bytes, hex)."""
    return random_secrets.token_hex(SECRET_BYTES).encode()


def read_job_secrets(conn: sa.Connection) -> list[JobSecret]:
    """Every generation in the store, newest first (empty: none yet)."""
    table = schema.job_token_secrets
    rows = conn.execute(sa.select(table).order_by(table.c.generation.desc())).all()
    return [JobSecret(int(r.generation), str(r.secret).encode(), parse_ts(r.created_at) or datetime.min.replace(tzinfo=timezone.utc),
                      parse_ts(r.retired_at) if r.retired_at else None, str(r.source)) for r in rows]


def ensure_job_secret(store: Store, *, from_file: bytes | None, file_name: str) -> tuple[list[JobSecret], str]:
    """The store's secrets (newest first) and what this call did: ``"kept"`` (there were some), ``"moved"``
    (``from_file``, the old file's secret, became generation 1) or ``"made"`` (a new random one did).
    Race-free between servers starting at once: the one whose insert loses reads the winner's.

    Raises:
        StoreError: the store failed.
    """
    found = _read(store)
    if found:
        return found, "kept"
    made = "moved" if from_file else "made"
    try:
        with store.transaction() as tx:
            tx.conn.execute(schema.job_token_secrets.insert().values(
                generation=1, secret=(from_file or new_secret()).decode(), created_at=ts(tx.now), retired_at=None,
                source=f"moved from {file_name}"[:300] if from_file else "made"))
    except StoreError as exc:
        if not isinstance(exc.__cause__, sa.exc.IntegrityError):
            raise
        made = "kept"  # another server inserted it first: theirs is the one
    return _read(store), made


def _read(store: Store) -> list[JobSecret]:
    with store.transaction(write=False) as tx:
        return read_job_secrets(tx.conn)


def rotate_job_secret(store: Store, actor: str, *, revoke: bool = False) -> Rotation:
    """Make a new generation (``actor``: who, for the audit row and ``source``); retire the current one.
    Retired generations are kept while a run admitted before their retirement still holds GPUs (its token
    verifies until it ends); ``revoke``: every retired one is deleted now. One write transaction; audited.

    Raises:
        StoreError: the store failed.
    """
    table = schema.job_token_secrets
    holding = [s for s in JobState if s.holds_gpus]
    with store.transaction() as tx:
        now = tx.now
        found = read_job_secrets(tx.conn)
        generation = (found[0].generation if found else 0) + 1
        tx.conn.execute(table.update().where(table.c.retired_at.is_(None)).values(retired_at=ts(now)))
        tx.conn.execute(table.insert().values(generation=generation, secret=new_secret().decode(), created_at=ts(now),
                                              retired_at=None, source=f"rotated by {actor}"[:300]))
        admitted = [r.job.admitted_at for r in tx.list_jobs(states=holding) if r.job.admitted_at is not None]
        retired = [(s.generation, s.retired_at or now) for s in found]
        oldest = min(admitted, default=None)
        deleted = tuple(g for g, at in retired if revoke or oldest is None or oldest >= at)
        kept = tuple(g for g, _ in retired if g not in deleted)
        if deleted:
            tx.conn.execute(table.delete().where(table.c.generation.in_(deleted)))
        said = (f"the running jobs' tokens stop verifying now ({len(admitted)} running)" if revoke else
                f"the tokens of the {len(admitted)} running job(s) keep verifying until they end" if kept else
                "no running job holds a token of the old secret")
        tx.add_event(actor=actor, action=ROTATED_ACTION,
                     message=f"rotated the job-token secret to generation {generation}: new jobs get tokens of it; "
                             f"{said}",
                     details={"generation": generation, "kept": list(kept), "deleted": list(deleted),
                              "revoked": revoke, "running": len(admitted)})
    return Rotation(generation, kept, deleted, len(admitted))


def current_and_retired(found: Sequence[JobSecret]) -> tuple[JobSecret | None, list[JobSecret]]:
    """The current generation (None: none) and the retired ones, newest first."""
    current = next((s for s in found if s.retired_at is None), None)
    return current, [s for s in found if s is not current]
