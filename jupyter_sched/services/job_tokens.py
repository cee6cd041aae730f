"""Per-job progress tokens (issue 16 item 4): a job reports its progress with no token wired by its user.

Every job the scheduler starts gets ``JUPYTER_SCHED_JOB_TOKEN`` (and ``JUPYTER_SCHED_URL``) in its
environment. The token is **derived, never stored**: ``jsjob1.<job id>.<attempt>.<mac>``, where
``mac`` is HMAC-SHA256 (base64url, 43 characters) of ``"<job id>:<attempt>"`` under a key derived from
the store's secret (:mod:`jupyter_sched.store.job_secrets`: every server sharing the store, and a restored
backup, has it; rotated by ``jupyter-sched doctor rotate-job-secret``, after which the retired secret
still verifies the tokens of runs admitted before the rotation, until they end). No token is stored, and
the same token after a server restart re-adopts the job.

What it may do — one thing: ``POST jobs/{its job id}/progress``, while that run of the job holds its
GPUs (state admitted or running, ``attempts`` equal to the token's). Checked by :meth:`JobTokenCheck.caller`:

- not a job token's shape, or a MAC that does not verify (a forgery): 401, named nobody, so not on the
  audit log (anyone can write any job id into a forgery; the service log says it, never the token);
- the token of a job that no longer holds its GPUs, or of an earlier run of it (requeued since): 401
  ``job token expired``, audited under the job's owner;
- any other route, or another job's progress: 403, audited under the token's job's owner.

The token is the owner's in effect only for that one route: the caller it yields is the owner with
no team and no admin flag (:func:`token_caller`), which is all ``ProgressService.report`` reads.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import stat
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import NoReturn

from ..admission import Caller
from ..errors import AuthorizationError, NotFoundError, TokenRefusedError
from ..model import Job
from ..store.job_secrets import ROTATED_ACTION, JobSecret, current_and_retired
from .context import Context

__all__ = ["ENV_JOB_TOKEN", "PREFIX", "JobTokenCheck", "JobTokens", "StoredJobTokens", "is_job_token", "read_secret_file",
           "token_caller"]

log = logging.getLogger(__name__)

ENV_JOB_TOKEN = "JUPYTER_SCHED_JOB_TOKEN"
"""The variable the executors set in a job's environment: its progress token."""

PREFIX = "jsjob1."
"""Every job token starts with this (a job token is told from a Jupyter or hub token by it alone)."""

_KEY_LABEL = b"jupyter_sched job progress token v1"
_MAC_CHARS = 43
_MAX_CHARS = 256
"""Longest text read as a job token (a job id is at most 128 characters)."""

ROUTE = "POST jobs/{job_id}/progress"
"""The one route a job token may call."""


def is_job_token(value: str) -> bool:
    """Whether ``value`` (a request's token) is meant as a job token (its prefix)."""
    return value.startswith(PREFIX)


class JobTokens:
    """Mints and reads job tokens under one server secret (module docstring), and reads those of retired
    secrets (a rotation's: :mod:`jupyter_sched.store.job_secrets`).

    Args:
        secret: the current secret (at least 16 bytes), tokens are minted with it.
        retired: ``(secret, retired_at)`` of retired secrets whose tokens may still verify (for runs
            admitted before ``retired_at``: :meth:`JobTokenCheck.caller` decides).

    Raises:
        ValueError: a secret shorter than 16 bytes.
    """

    def __init__(self, secret: bytes, retired: Sequence[tuple[bytes, datetime]] = ()) -> None:
        self._key = self._derive(secret)
        self._retired = [(self._derive(old), at) for old, at in retired]

    @staticmethod
    def _derive(secret: bytes) -> bytes:
        if len(secret) < 16:
            raise ValueError("a job token secret needs at least 16 bytes")
        return hmac.new(secret, _KEY_LABEL, hashlib.sha256).digest()

    @staticmethod
    def _mac(key: bytes, job_id: str, attempt: int) -> str:
        digest = hmac.new(key, f"{job_id}:{attempt}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def mint(self, job_id: str, attempt: int) -> str:
        """The token of run ``attempt`` (``Job.attempts``, 1 = first) of ``job_id``."""
        return f"{PREFIX}{job_id}.{attempt}.{self._mac(self._key, job_id, attempt)}"

    def read(self, token: str) -> tuple[str, int] | None:
        """``(job id, attempt)`` a genuine token of the current secret names; None for anything else (wrong
        shape, forged MAC). Constant-time in the MAC (``hmac.compare_digest``)."""
        claims = self.read_any(token)
        return (claims[0], claims[1]) if claims is not None and claims[2] is None else None

    def read_any(self, token: str) -> tuple[str, int, datetime | None] | None:
        """``(job id, attempt, retired_at)`` a genuine token names: ``retired_at`` None when it is of the
        current secret, else when the retired secret it is of was retired; None for anything else."""
        if not is_job_token(token) or len(token) > _MAX_CHARS:
            return None
        job_id, _, rest = token[len(PREFIX):].rpartition(".")
        job_id, _, attempt_text = job_id.rpartition(".")
        if not job_id or not attempt_text.isdigit() or len(rest) != _MAC_CHARS or len(attempt_text) > 9:
            return None
        attempt = int(attempt_text)
        if hmac.compare_digest(rest, self._mac(self._key, job_id, attempt)):
            return job_id, attempt, None
        for key, retired_at in self._retired:
            if hmac.compare_digest(rest, self._mac(key, job_id, attempt)):
                return job_id, attempt, retired_at
        return None


UNVERIFIED_ACTOR = "unverified job token"
"""The actor of the audit record of a job token refused after a revoke (its sender is unknown: the token
verifies under no secret in force)."""

_SAID_MAX = 10_000
"""Claimed runs whose unverified tokens' refusals a server remembers having logged (then it starts over)."""


def _claimed(token: str) -> tuple[str, int] | None:
    """``(job id, run)`` a job token's text names, unverified (for words only: a forgery may name any)."""
    if not is_job_token(token) or len(token) > _MAX_CHARS:
        return None
    head, _, _mac = token[len(PREFIX):].rpartition(".")
    job_id, _, attempt = head.rpartition(".")
    return (job_id, int(attempt)) if job_id and attempt.isdigit() and len(attempt) <= 9 else None


REREAD_S = 1.0
"""Least seconds between two reads of the store's secrets for a token that verifies under none known (a
rotation by another process; a flood of forged tokens costs at most one read a second)."""
REVOKED_SEEN_S = 5.0
"""Most seconds a token of the secret this server read as current is taken without reading the store's
secrets again: a ``rotate-job-secret --revoke-running`` in another process (which deletes that secret)
is in force everywhere within this (verify 25, V3: until the server's next job start, on a quiet
cluster for ever). Progress reports come minutes apart per job: at most one read in 5 s per server."""


class StoredJobTokens:
    """:class:`JobTokens` under the store's secrets (:mod:`jupyter_sched.store.job_secrets`), as every
    server sharing the store sees them: :meth:`mint` reads the current generation each time (a rotation by
    ``jupyter-sched doctor rotate-job-secret`` in another process applies to the next job started), a token
    of a retired secret is checked against the store's secrets of now (a revocation elsewhere), a token of
    the current one against secrets read at most :data:`REVOKED_SEEN_S` ago, and a token that verifies
    under none known makes it read them again (at most every :data:`REREAD_S`).

    Args:
        load: the store's secrets, newest first (:func:`~jupyter_sched.store.job_secrets.read_job_secrets`).
        clock: monotonic seconds.

    Raises:
        ValueError: the store holds no current secret.
    """

    def __init__(self, load: Callable[[], Sequence[JobSecret]], *, clock: Callable[[], float] = time.monotonic) -> None:
        self._load, self._clock = load, clock
        self._tokens = self._read()
        self._read_at = clock()

    def _read(self) -> JobTokens:
        current, retired = current_and_retired(self._load())
        if current is None:
            raise ValueError("the store holds no current job-token secret")
        return JobTokens(current.secret, [(s.secret, s.retired_at or s.created_at) for s in retired])

    def mint(self, job_id: str, attempt: int) -> str:
        """The token of run ``attempt`` of ``job_id`` under the store's current secret."""
        self._tokens, self._read_at = self._read(), self._clock()
        return self._tokens.mint(job_id, attempt)

    def read(self, token: str) -> tuple[str, int] | None:
        """As :meth:`JobTokens.read`."""
        claims = self.read_any(token)
        return (claims[0], claims[1]) if claims is not None and claims[2] is None else None

    def read_any(self, token: str) -> tuple[str, int, datetime | None] | None:
        """As :meth:`JobTokens.read_any`, reading the store again for a token none known verifies."""
        claims = self._tokens.read_any(token)
        age = self._clock() - self._read_at
        if (claims is not None and (claims[2] is not None or age >= REVOKED_SEEN_S)) or (
                claims is None and is_job_token(token) and age >= REREAD_S):
            # a retired secret's token is read against the store's secrets of now, a current one's against
            # secrets at most REVOKED_SEEN_S old (a rotation with --revoke-running in another process deleted
            # it: verify 25, V3); an unknown one after a rotation elsewhere
            self._tokens, self._read_at = self._read(), self._clock()
            claims = self._tokens.read_any(token)
        return claims


def read_secret_file(path: Path) -> bytes | None:
    """The job-token secret in the file ``path`` (None: there is none), where an older version kept it
    (``c.SchedApp.job_token_secret_file``); a start moves it into the store (:mod:`jupyter_sched.store.job_secrets`).

    Raises:
        PermissionError: the file is readable by its group or others, not this account's, or holds no secret.
        OSError: it cannot be read.
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise PermissionError(f"{path} is readable by other accounts or not this account's (mode "
                              f"{stat.S_IMODE(info.st_mode):o}, owner uid {info.st_uid}): whoever reads it can "
                              f"report any job's progress; chmod 600 {path} as its owner, or remove it (a new one is made)")
    text = path.read_text(encoding="ascii").strip()
    if len(text) < 32:
        raise PermissionError(f"{path} holds no secret (fewer than 32 characters); remove it (a new one is made)")
    return text.encode()


def token_caller(user: str) -> Caller:
    """The caller a valid job token stands for: the job's owner, no team, not an admin (it reports
    its own job's progress and nothing else)."""
    return Caller(user=user, teams=())


class JobTokenCheck:
    """Decides what a request made with a job token may do (module docstring).

    Args:
        ctx: the services' context (store, admission for the audit log).
        tokens: the server's :class:`JobTokens` or :class:`StoredJobTokens`.
    """

    def __init__(self, ctx: Context, tokens: JobTokens | StoredJobTokens) -> None:
        self.ctx = ctx
        self.tokens = tokens
        self._said: dict[tuple[str, int], int] = {}
        """Refusals of unverified tokens per claimed (job id, run) since the one logged (bounded)."""
        self._revoked_read: tuple[float, datetime | None] | None = None

    def _refuse_unverified(self, token: str, route: str) -> NoReturn:
        """Refuse a token that verifies under no secret in force (401). It names a job it may not be of: a
        forgery may name any job, so it is put on nobody's record (issue 16 item 4) — unless the store
        revoked its secrets (``rotate-job-secret --revoke-running``) after the run it names was admitted, the
        case an admin wants to see after a leak (hubadmin26 B4: every report of a revoked job was a WARNING
        calling it "forged", none audited): then an audited refusal under the running job's owner (the
        refusal log's own limit sums repeats). The WARNING is said once per claimed run, later ones counted.

        Raises:
            TokenRefusedError: always.
        """
        hint = ("a job's own JUPYTER_SCHED_JOB_TOKEN is valid at the servers of the store that started it, while "
                "its run runs (`jupyter-sched doctor rotate-job-secret --revoke-running` ends it sooner)")
        claimed = _claimed(token)
        revoked_job: Job | None = None
        if claimed is not None:
            try:
                job = self.ctx.store.get_job(claimed[0]).job
            except NotFoundError:
                job = None
            revoked_at = self._revoked_at()
            if (job is not None and job.attempts == claimed[1] and job.state.holds_gpus and revoked_at is not None
                    and job.admitted_at is not None and job.admitted_at <= revoked_at):
                revoked_job = job
        key = claimed or ("", 0)
        if key in self._said:
            self._said[key] += 1
        else:
            if len(self._said) >= _SAID_MAX:
                self._said.clear()
            self._said[key] = 0
            what = (f"a job token of running job {key[0][:80]} (run {key[1]}) whose secret was revoked "
                    "(rotate-job-secret --revoke-running) after it started, or a forgery naming it"
                    if revoked_job is not None else
                    "a job token that does not verify (forged, or from another store's secret)")
            log.warning("jupyter_sched: %s refused: %s; further refusals of it are counted, not logged", route, what)
        if revoked_job is None:
            refused = TokenRefusedError("this job token is not valid here", field="Authorization", hint=hint)
            refused.audited = True  # it names nobody: a forgery may name any job
            raise refused
        refused = TokenRefusedError(
            f"a job token of job {key[0][:80]!r} (run {key[1]}) was refused: the store's job-token secrets were "
            "revoked (rotate-job-secret --revoke-running) after this run started", field="Authorization", hint=hint)
        # the owner is the record's subject, never its actor: a forger naming a running job after a revoke
        # must not write rows that say the owner did it (verify26 V14)
        self.ctx.admission.record_refusal(token_caller(revoked_job.spec.user), refused, request=route, job_id=key[0],
                                          reported_by=UNVERIFIED_ACTOR)
        raise refused

    def _revoked_at(self) -> datetime | None:
        """When the store's secrets were last revoked (its newest ``job_secret_rotated`` with ``revoked``), read
        at most once per :data:`REREAD_S` (a flood of forged tokens costs one read a second)."""
        now = time.monotonic()
        if self._revoked_read is not None and now - self._revoked_read[0] < REREAD_S:
            return self._revoked_read[1]
        rows = self.ctx.store.list_events(action=ROTATED_ACTION, limit=50, newest_first=True)
        found = next((row.at for row in rows if (row.details or {}).get("revoked")), None)
        self._revoked_read = (now, found)
        return found

    def caller(self, token: str, *, route: str, job_id: str | None, allowed: bool) -> Caller:
        """The caller of a request made with ``token`` to ``route`` (``"GET jobs/{job_id}"``), whose
        path names ``job_id`` (None: none); ``allowed``: the route takes job tokens.

        Returns:
            :func:`token_caller` of the job's owner.

        Raises:
            TokenRefusedError: not a genuine token (401, not audited), or an expired one (401, audited).
            AuthorizationError: another route, or another job's progress (403, audited).
        """
        read = self.tokens.read_any(token)
        claims = (read[0], read[1]) if read is not None else None
        if read is not None and read[2] is not None:  # a retired secret's: only for a run admitted before it retired
            try:
                admitted = self.ctx.store.get_job(read[0]).job.admitted_at
            except NotFoundError:
                admitted = None
            if admitted is None or admitted >= read[2]:
                claims = None
        if claims is None:
            self._refuse_unverified(token, route)
        own_id, attempt = claims
        try:
            record = self.ctx.store.get_job(own_id)
        except NotFoundError:
            record = None
        if record is None:
            refused = TokenRefusedError(f"job {own_id[:80]!r} of this token no longer exists", field="Authorization",
                                          hint="a job token expires when its job ends")
            refused.audited = True  # the job is gone: no owner to put it under
            raise refused
        job = record.job
        caller = token_caller(job.spec.user)
        if job.attempts != attempt or not job.state.holds_gpus:
            now = f"started again (run {job.attempts})" if job.attempts != attempt else job.state.value
            self.ctx.admission.refuse(caller, TokenRefusedError(
                f"the job token of job {own_id[:80]!r} (run {attempt}) expired: the job is {now}", field="Authorization",
                hint="a job token is valid while its run of the job runs; report from inside the running job"),
                request=route, job_id=own_id)
        if not allowed:
            self.ctx.admission.refuse(caller, AuthorizationError(
                f"a job token may only report its own job's progress ({ROUTE.replace('{job_id}', own_id[:80])}), "
                f"not {route}", field="Authorization",
                hint="use your own token (JupyterLab's, or a hub token) for anything else"), request=route,
                job_id=own_id)
        if job_id != own_id:
            self.ctx.admission.refuse(caller, AuthorizationError(
                f"the job token of job {own_id[:80]!r} may not report the progress of job {str(job_id)[:80]!r}",
                field="job_id", hint="a job reports only its own progress (its JUPYTER_SCHED_JOB_ID)"),
                request=route, job_id=own_id)
        return caller
