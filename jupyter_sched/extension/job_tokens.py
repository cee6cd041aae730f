"""A job's own progress token at the web edge (issue 16 item 4; the token itself: :mod:`jupyter_sched.services.job_tokens`).

Every job the scheduler starts finds ``JUPYTER_SCHED_URL`` (where this server is reached:
``c.SchedApp.job_api_url``, else :func:`job_url`'s default) and ``JUPYTER_SCHED_JOB_TOKEN`` in its
environment (:func:`install_job_tokens` gives the executor its ``job_env``), so
``jupyter_sched.report_progress`` works in a real job with nothing wired by its user — embedded, and in
hub mode, where jobs start from a clean environment that has no other way to the service (session 21).

A request that carries a job token (``Authorization: token jsjob1.…``) never reaches the server's
identity provider — neither jupyter_server's token check nor the hub's API, which would be sent the
token — :class:`JobTokenHandler` answers the provider's question itself, then decides in ``prepare``,
before any handler runs: a route whose handler lists the method in ``job_token_methods`` (only
``POST jobs/{job_id}/progress``) gets the job owner's caller when the token is that job's and still
valid; every other route, and another job, is refused (401/403) and audited
(:meth:`~jupyter_sched.services.job_tokens.JobTokenCheck.caller`). A job token in ``?token=`` (which
request logs may keep) is refused, never read.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from pathlib import Path
from typing import Any, ClassVar, cast
from urllib.parse import urlparse

from jupyter_server.auth.identity import User
from traitlets import TraitError, Unicode, validate
from traitlets.config import Configurable

from ..errors import TokenRefusedError
from ..hub.front_door import note_caller
from ..model import Job
from ..services.job_tokens import (
    ENV_JOB_TOKEN,
    JobTokenCheck,
    StoredJobTokens,
    is_job_token,
    read_secret_file,
)
from ..store import Store
from ..store.job_secrets import JobSecret, ensure_job_secret, read_job_secrets

__all__ = ["JOB_TOKEN_USER", "JobTokenConfig", "JobTokenHandler", "install_job_tokens", "job_url", "loopback_host",
           "unreachable_from_pods"]

log = logging.getLogger(__name__)

JOB_TOKEN_USER = "job-token"
"""The jupyter_server user name of a request made with a job token until ``prepare`` decides (never a
scheduler identity: the caller is the job's owner, or the request is refused)."""

_AUTH_HEADER = re.compile(r"(token|bearer)\s+(.+)", re.IGNORECASE)  # jupyter_server's IdentityProvider.auth_header_pat


class JobTokenConfig(Configurable):
    """Where jobs reach this server, and the secret their progress tokens are derived from."""

    job_api_url = Unicode(
        "", config=True,
        help="""Base URL a job reaches this server at, given to every job as JUPYTER_SCHED_URL with its
        progress token JUPYTER_SCHED_JOB_TOKEN (jupyter_sched.report_progress uses both). Default "": the
        server's own connection URL, as its kernels get it; for `jupyter-sched serve`, the address
        JupyterHub reaches the service at ($JUPYTERHUB_SERVICE_URL + the service prefix, when the service
        listens on its port), else its connection URL — right for local jobs and for pods that reach the
        service as the hub does. Set it when jobs run elsewhere (Kubernetes pods, when the service is
        at a loopback address: e.g. "http://jupyter-sched.hub.svc:10101/services/jupyter-sched/"; the
        start says so).""",
    )
    job_token_secret_file = Unicode(
        "", config=True,
        help="""Where an older version kept the secret jobs' progress tokens are derived from. The secret is
        now in the store (every server sharing it, and its backups, have it; `jupyter-sched doctor
        rotate-job-secret` makes a new one): at the first start on a store without one, this file's secret
        is moved in (so running jobs' tokens keep working) and the file is not read again (remove it).
        Refused when other accounts can read it. Default "": job_token_secret in the jupyter_sched data
        folder.""",
    )

    @validate("job_api_url")
    def _check_job_api_url(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"]).strip()
        if not value:
            return ""
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise TraitError(f"c.SchedApp.job_api_url: {value[:200]!r} is not an http(s) URL. Fix: give the base "
                             "URL jobs reach this server at, e.g. http://10.0.0.5:8888/")
        return value if value.endswith("/") else value + "/"


def install_job_tokens(app: Any, services: Any) -> Any:
    """Give the executor of ``app``'s ``services`` its ``job_env(job)`` (``JUPYTER_SCHED_URL`` + the job's
    token) and the services the :class:`~jupyter_sched.services.job_tokens.JobTokenCheck`; nothing on a hub
    user's server, which forwards every request and starts no job. Returns ``services``.

    The secret is the store's (:mod:`jupyter_sched.store.job_secrets`; hubadmin23/24 A19): every server
    sharing the store, and a restored backup, has the same. At the first start on a store without one, the
    old secret file (``c.SchedApp.job_token_secret_file``, default ``job_token_secret`` in the data folder)
    is moved in when there is one — the tokens of the jobs running under it keep working — and is not read
    again; else a new secret is made (said when jobs are running: their tokens were another secret's).

    Raises:
        traitlets.TraitError: the old secret file is readable by others or cannot be read (names the setting).
    """
    executor = getattr(services, "executor", None)
    if executor is None or not hasattr(services, "ctx"):
        return services
    path = Path(app.job_token_secret_file or app.sched_data_dir / "job_token_secret")
    try:
        tokens = _stored_tokens(services.store, path)
    except OSError as exc:
        raise TraitError(f"c.SchedApp.job_token_secret_file: {exc}. Fix: point it at a file only this "
                         "account can read, or remove it (the store holds the secret)") from None
    services.job_tokens = JobTokenCheck(services.ctx, tokens)

    def job_env(job: Job) -> dict[str, str]:
        return {"JUPYTER_SCHED_URL": job_url(app), ENV_JOB_TOKEN: tokens.mint(job.id, job.attempts)}

    executor.job_env = job_env
    if getattr(executor, "name", "") == "kubernetes" and not app.job_api_url:
        try:
            url = job_url(app)
        except Exception:  # no server address yet: said at the first job instead (the URL it gets)
            url = ""
        if unreachable_from_pods(url):
            log.warning("jupyter_sched: jobs run in Kubernetes pods, which cannot reach this server at %s to report "
                        "their progress; set c.SchedApp.job_api_url to an address pods reach (e.g. the "
                        "service's cluster DNS name)", url)
    return services


def _stored_tokens(store: Store, path: Path) -> StoredJobTokens:
    """The store's job tokens, its secret made or moved in from the old file ``path`` first (A19)."""
    found, done = ensure_job_secret(store, from_file=read_secret_file(path), file_name=str(path))
    if done == "moved":
        log.warning("jupyter_sched: moved the job-token secret from %s into the store (every server sharing it, and "
                    "its backups, use it from now on; running jobs' tokens keep working); the file is no longer read: "
                    "remove it", path)
    elif done == "made":
        say_new_secret(store)
    elif path.exists():  # moved in at an earlier start (or never this store's): not read, only said
        current = next((s for s in found if s.retired_at is None), None)
        same = current is not None and read_secret_file(path) == current.secret
        log.warning("jupyter_sched: %s is no longer read (the job-token secret is in the store)%s: remove it", path,
                    "" if same else "; it holds another secret than the store's current one")

    def load() -> list[JobSecret]:
        with store.transaction(write=False) as tx:
            return read_job_secrets(tx.conn)

    return StoredJobTokens(load)


def say_new_secret(store: Store) -> None:
    """At a start that made the store's job-token secret anew: one WARNING when ``store`` holds running jobs
    (not leases), whose tokens were derived from another secret and are refused from now on (hubadmin23 A19:
    a redeploy onto a fresh data folder said nothing, and every running job's progress reports answered 401)."""
    from ..model import JobKind, JobState

    running = store.list_jobs(states=[JobState.RUNNING], kinds=[JobKind.TRAINING, JobKind.INFERENCE])
    if running:
        log.warning("jupyter_sched: made a new job-token secret in the store: the %d running job(s) (started with "
                    "another secret) cannot report progress until they end; if you moved or redeployed the service, "
                    "stop it and put the old secret file back at c.SchedApp.job_token_secret_file (a start moves it "
                    "into a store without one), or restore the store's backup", len(running))


def job_url(app: Any) -> str:
    """The ``JUPYTER_SCHED_URL`` jobs get: ``c.SchedApp.job_api_url`` when set, else the app's
    ``job_url_default()`` when it has one (the hub's central service:
    :meth:`~jupyter_sched.hub.central.HubSchedApp.job_url_default`), else the server's ``connection_url``
    (as its kernels get it). Ends in ``/``."""
    if app.job_api_url:
        return str(app.job_api_url)
    default = getattr(app, "job_url_default", None)
    url = str(default() if callable(default) else app.serverapp.connection_url)
    return url if url.endswith("/") else url + "/"


def unreachable_from_pods(url: str) -> bool:
    """Whether ``url``'s host is a loopback address or name (``localhost``, 127.0.0.0/8, ``::1``): a pod's own
    loopback, never this server."""
    return loopback_host(urlparse(url).hostname or "")


def loopback_host(host: str) -> bool:
    """Whether a URL's ``host`` (no brackets) is a loopback address (127.0.0.0/8, ``::1``) or name
    (``localhost``, ``*.localhost``)."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _JobTokenIdentity:
    """The identity provider of a request made with a job token: it says "a job token" and that it
    was a token (no XSRF cookie applies); everything else is the server's provider's."""

    def __init__(self, provider: Any) -> None:
        self._provider = provider

    def __getattr__(self, name: str) -> Any:
        return getattr(self._provider, name)

    async def get_user(self, handler: Any) -> User:
        # a token from the Authorization header: no XSRF check applies (a browser never sends one by itself).
        # Marked on the handler too: JupyterHub's HubAuth replaces JupyterHandler.check_xsrf_cookie for the
        # whole class with a check that reads only this attribute, so on the hub's central service every
        # job's POST was refused "'_xsrf' argument missing" (session 21, the first hub run of a job's report)
        handler._token_authenticated = True
        return User(username=JOB_TOKEN_USER, name=JOB_TOKEN_USER)

    def is_token_authenticated(self, handler: Any) -> bool:
        return True


class JobTokenHandler:
    """Handler mixin, first in :class:`~.web.SchedHandler`'s bases (module docstring).

    Attributes:
        job_token_methods: the HTTP methods of this route a job token may call (empty: none).
    """

    job_token_methods: ClassVar[frozenset[str]] = frozenset()
    _job_token: tuple[str, str] | bool | None = False

    @property
    def job_token(self) -> tuple[str, str] | None:
        """``(token, where)`` of a job token this request carries (``where``: ``header`` or ``query``)."""
        if self._job_token is False:
            handler = cast(Any, self)
            found: tuple[str, str] | None = None
            match = _AUTH_HEADER.match(handler.request.headers.get("Authorization", ""))
            if match and is_job_token(match.group(2).strip()):
                found = (match.group(2).strip(), "header")
            elif any(is_job_token(v.decode("utf-8", "replace")) for v in handler.request.query_arguments.get("token", [])):
                found = ("", "query")
            self._job_token = found
        return cast("tuple[str, str] | None", self._job_token)

    @property
    def identity_provider(self) -> Any:
        provider = cast(Any, super()).identity_provider
        return provider if self.job_token is None else _JobTokenIdentity(provider)

    async def prepare(self) -> None:
        """The server's own steps (host, origin, authenticated), then, for a job token, the token's
        check (:meth:`~jupyter_sched.services.job_tokens.JobTokenCheck.caller`) before anything else."""
        await cast(Any, super()).prepare()
        found = self.job_token
        handler = cast(Any, self)
        if found is None or handler.current_user is None or getattr(handler, "_finished", False):
            return
        token, where = found
        if where == "query":
            refused = TokenRefusedError("a job token is taken from the Authorization header only, never from the URL",
                                          field="token", hint="send Authorization: token $JUPYTER_SCHED_JOB_TOKEN "
                                                              "(jupyter_sched.report_progress does)")
            refused.audited = True
            raise refused
        check: JobTokenCheck | None = getattr(handler.services, "job_tokens", None)
        if check is None:
            refused = TokenRefusedError("this server gives no job tokens", field="Authorization",
                                          hint="send your own Jupyter or hub token")
            refused.audited = True  # names nobody
            raise refused
        kwargs = handler.path_kwargs or {}
        route = f"{handler.request.method} {handler._template}"
        handler._sched_caller = await handler.call(check.caller, token, route=route, job_id=kwargs.get("job_id"),
                                                   allowed=handler.request.method in self.job_token_methods)
        # the hub service's front door counts this token as its job's owner from now on (verify 24 V1, 25 V2)
        note_caller(handler.request, handler._sched_caller.user)
