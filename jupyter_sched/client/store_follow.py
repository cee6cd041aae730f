"""A job's clients find the server that serves their store now, when the one that started the job stops answering.

A job is told its server's address (``JUPYTER_SCHED_URL``). When a second ``jupyter lab`` of the same account takes
the store over on another port (as its log advises: stop the old one once this one answers), that address answers
no more: every progress report was dropped and a job's own ``connect()`` client talked to nobody (newuser27 N8).
The host's scheduler registry (:mod:`jupyter_sched.extension.host_schedulers`) names the schedulers running here;
this account's others are tried, at most :data:`MOVED_TRIES` — never another account's (no credential of the job
or of its owner is offered to another account's server). Each candidate is checked by the caller's own request
(a report the store's job token verifies, or ``GET jobs/{id}`` of the job answered): a server of another store
refuses it and the next is tried. :func:`follow_store` is the one code path of both:
:func:`jupyter_sched.client.progress.report_progress` and :class:`~jupyter_sched.client.sync.SchedClient` (a
``connect()`` made inside a job). Best effort: a registry that cannot be read is no server.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ..errors import SchedError

if TYPE_CHECKING:
    from .sync import SchedClient

__all__ = ["MOVED_TRIES", "follow_store", "store_candidates"]

MOVED_TRIES = 4
"""Other servers of this account on this host a job's request is offered to, at most, when its own stops answering."""

T = TypeVar("T")


def store_candidates(here: str) -> list[str]:
    """The URLs of this account's other schedulers on this host (not ``here``, http(s) only), registry order,
    at most :data:`MOVED_TRIES`; [] when the registry cannot be read."""
    from ..extension import host_schedulers

    here = here.rstrip("/")
    try:
        urls = [entry.url for entry in host_schedulers.others(me_pid=-1) if entry.uid == os.getuid()
                and entry.url.rstrip("/") != here and entry.url.startswith(("http://", "https://"))]
    except Exception:  # the registry is best effort: a folder that cannot be read is no server
        return []
    return list(dict.fromkeys(urls))[:MOVED_TRIES]


def follow_store(here: str, make: Callable[[str], SchedClient | None],
                 attempt: Callable[[SchedClient], T]) -> tuple[SchedClient, T] | None:
    """The first candidate (:func:`store_candidates` of ``here``) that takes ``attempt``: ``(its client, the
    answer)``. ``make``: a client for a candidate URL with the credential that may go there (None: none may);
    ``attempt``: the caller's request, which a server of another store refuses (any ``SchedError``, an
    unreachable one included). None when no candidate took it."""
    for url in store_candidates(here):
        client = make(url if url.endswith("/") else url + "/")
        if client is None:
            continue
        try:
            answer = attempt(client)
        except SchedError:  # another store's server (the credential does not verify there), or not answering
            client.close()
            continue
        return client, answer
    return None
