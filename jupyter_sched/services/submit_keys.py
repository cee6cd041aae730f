"""A submit sent again with its key is answered with the job it made (s31-n8's next step; :mod:`..store.submit_keys`).

:meth:`~.jobs.JobsService.submit_keyed` looks the caller's key up first (a resend: the job, 200); a new
key is remembered in the insert's own transaction (:func:`remember_in`), so two sends racing with one
key make one job — the later finds the earlier's row (or its insert of the key fails) and is answered
with that job. A key reused for another request is refused (409, field ``idempotency_key``): the key
names one submit, and answering another request with its job would hide that this one was not made.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ..errors import ConflictError
from ..store import StoreTx
from ..store.submit_keys import KEY_FIELD, find_key, remember_key

__all__ = ["Replayed", "reused_key", "remember_in", "request_digest"]


class Replayed(Exception):
    """The caller's key was already remembered (found inside the insert's transaction, which rolled back)."""

    def __init__(self, job_id: str, digest: str) -> None:
        super().__init__(job_id)
        self.job_id = job_id
        self.digest = digest


def request_digest(body: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the request as sent, its keys sorted: what a resend must repeat."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def remember_in(tx: StoreTx, user: str, key: str, job_id: str, digest: str) -> None:
    """In the submit's insert transaction: :class:`Replayed` when ``user`` already used ``key``, else remember it.

    Raises:
        Replayed: the key is ``user``'s already (the transaction rolls back; nothing is written).
        SubmitKeyTaken: a concurrent submit wrote it first.
    """
    found = find_key(tx.conn, user, key)
    if found is not None:
        raise Replayed(*found)
    remember_key(tx.conn, user, key, job_id, digest, tx.now)


def reused_key(key: str, job_id: str) -> ConflictError:
    """The 409 of a key sent with another request than the one it made ``job_id`` with."""
    return ConflictError(f"idempotency_key {key!r} was sent before with another request (it made job {job_id})",
                         field=KEY_FIELD, hint="send a new key with each new submit; the same key only when sending "
                                               "the same submit again", details={"job": job_id})
