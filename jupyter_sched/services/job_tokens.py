"""Per-job progress tokens (issue 16 item 4): a job reports its progress with no token wired by its user.

Every job the scheduler starts gets ``JUPYTER_SCHED_JOB_TOKEN`` (and ``JUPYTER_SCHED_URL``) in its
environment. The token is **derived, never stored**: ``jsjob1.<job id>.<attempt>.<mac>``, where
``mac`` is HMAC-SHA256 (base64url, 43 characters) of ``"<job id>:<attempt>"`` under a key derived from
the server's secret (:func:`load_secret`: a 0600 file kept as jupyter_server keeps its cookie secret;
servers sharing one store share the file). Nothing to store, nothing to leak from the store, and the
same token after a server restart re-adopts the job.

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
import secrets
import stat
from pathlib import Path

from ..admission import Caller
from ..errors import AuthorizationError, NotFoundError, TokenRefusedError
from .context import Context

__all__ = ["ENV_JOB_TOKEN", "PREFIX", "JobTokenCheck", "JobTokens", "is_job_token", "load_secret", "token_caller"]

log = logging.getLogger(__name__)

ENV_JOB_TOKEN = "JUPYTER_SCHED_JOB_TOKEN"
"""The variable the executors set in a job's environment: its progress token."""

PREFIX = "jsjob1."
"""Every job token starts with this (a job token is told from a Jupyter or hub token by it alone)."""

_KEY_LABEL = b"jupyter_sched job progress token v1"
_MAC_CHARS = 43
_SECRET_BYTES = 32
_MAX_CHARS = 256
"""Longest text read as a job token (a job id is at most 128 characters)."""

ROUTE = "POST jobs/{job_id}/progress"
"""The one route a job token may call."""


def is_job_token(value: str) -> bool:
    """Whether ``value`` (a request's token) is meant as a job token (its prefix)."""
    return value.startswith(PREFIX)


class JobTokens:
    """Mints and reads job tokens under one server secret (module docstring).

    Args:
        secret: the server's secret (at least 16 bytes; :func:`load_secret`).

    Raises:
        ValueError: a secret shorter than 16 bytes.
    """

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("a job token secret needs at least 16 bytes")
        self._key = hmac.new(secret, _KEY_LABEL, hashlib.sha256).digest()

    def _mac(self, job_id: str, attempt: int) -> str:
        digest = hmac.new(self._key, f"{job_id}:{attempt}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def mint(self, job_id: str, attempt: int) -> str:
        """The token of run ``attempt`` (``Job.attempts``, 1 = first) of ``job_id``."""
        return f"{PREFIX}{job_id}.{attempt}.{self._mac(job_id, attempt)}"

    def read(self, token: str) -> tuple[str, int] | None:
        """``(job id, attempt)`` a genuine token names; None for anything else (wrong shape, forged MAC).
        Constant-time in the MAC (``hmac.compare_digest``)."""
        if not is_job_token(token) or len(token) > _MAX_CHARS:
            return None
        job_id, _, rest = token[len(PREFIX):].rpartition(".")
        job_id, _, attempt_text = job_id.rpartition(".")
        if not job_id or not attempt_text.isdigit() or len(rest) != _MAC_CHARS or len(attempt_text) > 9:
            return None
        attempt = int(attempt_text)
        if not hmac.compare_digest(rest, self._mac(job_id, attempt)):
            return None
        return job_id, attempt


def load_secret(path: Path) -> bytes:
    """The server's job-token secret from ``path``, made there (32 random bytes, hex, mode 0600) when
    missing — as jupyter_server keeps its cookie secret (``cookie_secret_file``).

    Raises:
        PermissionError: the file is readable by its group or others, or not this account's (a secret
            another account could read lets it mint every job's token); the message says the fix.
        OSError: it cannot be read or made.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(_SECRET_BYTES))
    info = path.stat()
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
        tokens: the server's :class:`JobTokens`.
    """

    def __init__(self, ctx: Context, tokens: JobTokens) -> None:
        self.ctx = ctx
        self.tokens = tokens

    def caller(self, token: str, *, route: str, job_id: str | None, allowed: bool) -> Caller:
        """The caller of a request made with ``token`` to ``route`` (``"GET jobs/{job_id}"``), whose
        path names ``job_id`` (None: none); ``allowed``: the route takes job tokens.

        Returns:
            :func:`token_caller` of the job's owner.

        Raises:
            TokenRefusedError: not a genuine token (401, not audited), or an expired one (401, audited).
            AuthorizationError: another route, or another job's progress (403, audited).
        """
        claims = self.tokens.read(token)
        if claims is None:
            log.warning("jupyter_sched: %s refused: a job token that does not verify (forged or from another "
                        "server's secret)", route)
            refused = TokenRefusedError(
                "this job token is not valid here", field="Authorization",
                hint="a job's own JUPYTER_SCHED_JOB_TOKEN is valid only at the server that started it "
                     "(servers sharing a store must share c.SchedApp.job_token_secret_file)")
            refused.audited = True  # it names nobody: a forgery may name any job
            raise refused
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
