"""``jupyter-sched serve``: the central scheduler as a JupyterHub service.

It runs a jupyter_server ``ServerApp`` that serves only the jupyter_sched REST API (the same
engine and routes as the embedded extension: :class:`~.central.HubSchedApp`), authenticated by
JupyterHub (:class:`~.identity.HubIdentityProvider`), on a shared database (PostgreSQL through
``postgresql+psycopg://``; SQLite works for a single host). The server offers no contents,
kernels or terminals: its authorizer allows only the scheduler's routes.

Where it listens comes from JupyterHub's service environment:
``JUPYTERHUB_SERVICE_URL`` (e.g. ``http://127.0.0.1:10101``) gives ip and port, and
``JUPYTERHUB_SERVICE_PREFIX`` (e.g. ``/services/jupyter-sched/``) the base URL; ``--ip``,
``--port`` and ``--base-url`` override them. ``JUPYTERHUB_API_URL`` / ``JUPYTERHUB_API_TOKEN``
(set by the hub for a managed service, or by hand for an external one) are required.

Usage::

    JUPYTER_SCHED_DB_URL=postgresql+psycopg://sched:PASSWORD@db/sched jupyter-sched serve [--allow-root] \\
        [--SchedApp.simulated_gpus=8 ...any ServerApp/SchedApp/HubSchedApp option]

Secrets come from the environment or files, never the command line (which every local user can
read with ``ps``): the store URL from ``--db-url-file`` / ``$JUPYTER_SCHED_DB_URL_FILE`` (a file
holding the URL), else ``$JUPYTER_SCHED_DB_URL``, else ``--db-url`` — which, like any
``--SchedApp.db_url=`` option, is refused when it carries a password. The store URL variables are
removed from the environment once read, so nothing the service starts inherits them (jobs start
from a clean environment anyway, :mod:`jupyter_sched.executors.runas`).

Running as root (``--allow-root``) is what hub mode with the local executor needs: the service
then starts each job as its owner's OS account and never as root (``c.HubSchedApp.run_as_*``).

Before it starts it asks the hub who its token is (``GET {JUPYTERHUB_API_URL}/user``): a hub that refuses
the token (403) stops it with one line naming ``JUPYTERHUB_API_TOKEN`` and the service's ``api_token`` in
``jupyterhub_config.py``; a hub that does not answer is said and checked again while it runs
(:mod:`.service_token`).

Exit codes: 0 clean stop; 2 bad command line, a secret on the command line, missing hub
environment, a hub token the hub refuses, or root without ``--allow-root``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any, TextIO
from urllib.parse import urlparse

from jupyter_server.auth.authorizer import Authorizer
from traitlets import TraitError

from ..store.url import has_password, password_on_command_line, safe_url, store_url_problem
from .serve_args import ENV_DB_URL, ENV_DB_URL_FILE
from .serve_args import parser as _parser

__all__ = ["ENV_DB_URL", "ENV_DB_URL_FILE", "ROOT_REFUSAL", "SchedOnlyAuthorizer", "build_config", "has_password", "listen_address",
           "main", "store_url"]


_ALLOWED_RESOURCES = frozenset({"sched"})

ROOT_REFUSAL = ("jupyter-sched serve: running as root needs --allow-root — the local executor needs root to start each "
                "job as its owner's OS account (never as root); add --allow-root, or run the service as another user "
                "with the Kubernetes executor")
"""The one line of ``serve`` started as root without ``--allow-root`` (the README: "It refuses to start
otherwise, with one line saying what to set"), instead of jupyter_server's "Running as root is not
recommended", which said the opposite of what hub mode with the local executor needs."""


def _is_root() -> bool:
    """Whether this process runs as root (False where there are no uids)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def listen_address(env: dict[str, str] | os._Environ[str], *, ip: str | None = None,
                   port: int | None = None) -> tuple[str, int, str]:
    """``(ip, port, base_url)`` from JupyterHub's service environment; ``ip``/``port``: the options
    given (one alone is named in the refusal: new user 19, N6).

    Raises:
        ValueError: ``JUPYTERHUB_SERVICE_URL`` is missing or has no port.
    """
    url = env.get("JUPYTERHUB_SERVICE_URL", "")
    if not url and (ip is None) != (port is None):
        given, missing, example = ("--port", "--ip", "127.0.0.1") if ip is None else ("--ip", "--port", "8010")
        raise ValueError(f"{given} is given but {missing} is not: pass {missing} as well, e.g. {missing} {example} "
                         "(or run as a JupyterHub service, which sets JUPYTERHUB_SERVICE_URL)")
    if not url:
        raise ValueError("JUPYTERHUB_SERVICE_URL is not set (run as a JupyterHub service, or pass --ip and --port)")
    parsed = urlparse(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80 if parsed.scheme == "http" else None)
    if not parsed.hostname or port is None:
        raise ValueError(f"JUPYTERHUB_SERVICE_URL {url!r} has no host or port")
    prefix = env.get("JUPYTERHUB_SERVICE_PREFIX", "/") or "/"
    prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
    return parsed.hostname, port, prefix


def store_url(args: argparse.Namespace, rest: Sequence[str], env: dict[str, str] | os._Environ[str]) -> str:
    """The store URL from a file, the environment or the command line (in that order).

    Raises:
        ValueError: the URL file cannot be read, or a password is on the command line (the
            message says where to put it instead).
    """
    given = _sched_app_db_url(rest)
    if given and has_password(given):
        raise ValueError("a database password on the command line is visible to every local user (ps); put the "
                         f"URL in ${ENV_DB_URL} or a file named by --db-url-file")
    if given and args.db_url and given != args.db_url:
        raise ValueError(f"--db-url and --SchedApp.db_url name two stores ({safe_url(args.db_url)!r}, "
                         f"{safe_url(given)!r}); give one")
    if args.db_url and has_password(args.db_url):  # the same rule as doctor --db (store.url)
        raise ValueError(password_on_command_line("--db-url", file_option="--db-url-file"))
    path = args.db_url_file or env.get(ENV_DB_URL_FILE, "")
    if path:
        try:
            return open(path, encoding="utf-8").read().strip()
        except OSError as exc:
            raise ValueError(f"cannot read the store URL file {path}: {exc.strerror}") from None
    return str(env.get(ENV_DB_URL, "") or args.db_url or given or "")


def _sched_app_db_url(rest: Sequence[str]) -> str:
    """The value of ``--SchedApp.db_url=URL`` (or ``--SchedApp.db_url URL``) among the options passed on to
    the ServerApp, "" when none: ``serve --help`` says any setting may be given so, and it was checked for a
    password but not read — "no store" (newuser31 N2). The last one given wins, as traitlets takes it."""
    found = ""
    for at, option in enumerate(rest):
        if option.startswith("--SchedApp.db_url="):
            found = option.split("=", 1)[1]
        elif option == "--SchedApp.db_url" and at + 1 < len(rest):
            found = rest[at + 1]
    return found.strip()


def _without_db_url(rest: Sequence[str]) -> list[str]:
    """``rest`` less its ``--SchedApp.db_url`` options (:func:`_sched_app_db_url` took them): traitlets
    would otherwise open that store over the one :func:`store_url` chose by its order and checked."""
    kept: list[str] = []
    skip = False
    for option in rest:
        if skip:
            skip = False
        elif option == "--SchedApp.db_url":
            skip = True
        elif not option.startswith("--SchedApp.db_url="):
            kept.append(option)
    return kept


def _other_extensions() -> list[str]:
    """Server extensions enabled in the Jupyter config paths (the service disables them all)."""
    from jupyter_core.paths import jupyter_config_path
    from jupyter_server.extension.config import ExtensionConfigManager

    manager = ExtensionConfigManager(read_config_path=jupyter_config_path())
    return sorted(manager.get_jpserver_extensions())  # type: ignore[no-untyped-call]


def build_config(*, ip: str, port: int, base_url: str, db_url: str, allow_root: bool) -> Any:
    """The traitlets ``Config`` of the service's ServerApp (see module docstring)."""
    from traitlets.config import Config

    from .identity import HubIdentityProvider

    c = Config()
    c.ServerApp.ip = ip
    c.ServerApp.port = port
    c.ServerApp.port_retries = 0
    c.ServerApp.base_url = base_url
    c.ServerApp.open_browser = False
    c.ServerApp.allow_root = allow_root
    c.ServerApp.identity_provider_class = HubIdentityProvider
    c.ServerApp.authorizer_class = SchedOnlyAuthorizer
    extensions: dict[str, bool] = dict.fromkeys(_other_extensions(), False)
    extensions["jupyter_sched.hub.central"] = True
    c.ServerApp.jpserver_extensions = extensions
    c.ServerApp.reraise_server_extension_failures = True  # the scheduler is the service: no start without it
    c.SchedApp.db_url = db_url
    c.SchedApp.identity_source = "jupyter_user"
    c.SchedApp.inject_kernel_env = False
    return c


class SchedOnlyAuthorizer(Authorizer):
    """Allow authenticated hub users the scheduler's routes (resource ``sched``) and nothing else
    (no contents, kernels or terminals on the central service)."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return resource in _ALLOWED_RESOURCES


def _check_hub_token(env: dict[str, str] | os._Environ[str], stderr: TextIO) -> bool:
    """Ask the hub whether it takes ``$JUPYTERHUB_API_TOKEN`` (:mod:`.service_token`; hub admin 22: a wrong
    token served 45 s without a word); print the refusal or the warnings; whether to stop (exit 2)."""
    from .service_token import check_token_blocking, start_up_lines

    api_url = env["JUPYTERHUB_API_URL"]
    check = check_token_blocking(api_url, env["JUPYTERHUB_API_TOKEN"], timeout_s=_TOKEN_CHECK_S)
    refusal, warnings = start_up_lines(check, api_url=api_url, service=env["JUPYTERHUB_SERVICE_NAME"])
    if refusal is not None:
        print(f"jupyter-sched serve: {refusal}; not starting", file=stderr)
        return True
    for line in warnings:
        print(f"jupyter-sched serve: warning: {line}", file=stderr)
    return False


_TOKEN_CHECK_S = 5.0
"""Seconds the start-up token check waits for the hub (no answer: the service starts, and says so)."""




def main(argv: Sequence[str] | None = None, *, err: TextIO | None = None) -> int:
    """Entry point of ``jupyter-sched serve``; unknown ``--Class.trait=value`` options go to the
    ServerApp (e.g. ``--SchedApp.simulated_gpus=8``, ``--HubSchedApp.hub_poll_interval_s=30``)."""
    stderr = err or sys.stderr
    args, rest = _parser().parse_known_args(list(sys.argv[1:] if argv is None else argv))
    env = os.environ
    try:
        db_url = store_url(args, rest, env)
    except ValueError as exc:
        print(f"jupyter-sched serve: {exc}", file=stderr)
        return 2
    if not db_url:
        print(f"jupyter-sched serve: no store; set {ENV_DB_URL} (or --db-url-file, or --db-url / --SchedApp.db_url "
              "without a password), "
              "e.g. postgresql+psycopg://sched@127.0.0.1/sched", file=stderr)
        return 2
    if (problem := store_url_problem(db_url)) is not None:  # THE store-URL check, as doctor and the server say it
        print(f"jupyter-sched serve: the store URL {safe_url(db_url)!r}: {problem[0]} — {problem[1]}", file=stderr)
        return 2
    for name in (ENV_DB_URL, ENV_DB_URL_FILE):  # nothing this service starts inherits them
        env.pop(name, None)
    if not env.get("JUPYTERHUB_API_TOKEN") or not env.get("JUPYTERHUB_API_URL"):
        print("jupyter-sched serve: JUPYTERHUB_API_URL and JUPYTERHUB_API_TOKEN must be set "
              "(the hub sets them for a managed service; set them for an external one)", file=stderr)
        return 2
    try:
        ip, port, base_url = listen_address(env, ip=args.ip, port=args.port) if args.ip is None or args.port is None \
            else ("", 0, "/")
    except ValueError as exc:
        print(f"jupyter-sched serve: {exc}", file=stderr)
        return 2
    if _is_root() and not args.allow_root:  # jupyter_server's own line said root was "not recommended" (new user 14, N9)
        print(ROOT_REFUSAL, file=stderr)
        return 2
    ip = args.ip or ip
    port = args.port or port
    base_url = args.base_url or (base_url if base_url != "/" else env.get("JUPYTERHUB_SERVICE_PREFIX", "/"))
    env.setdefault("JUPYTERHUB_SERVICE_NAME", "jupyter-sched")
    refusal = _check_hub_token(env, stderr)
    if refusal:
        return 2
    config = build_config(ip=ip, port=port, base_url=base_url, db_url=db_url, allow_root=args.allow_root)

    from jupyter_server.serverapp import ServerApp

    from .front_door import FrontDoor

    class SchedServerApp(ServerApp):
        """A ServerApp serving only the API root, auth and the scheduler's routes."""

        name = "jupyter-sched-serve"
        default_services = ("api", "auth")  # type: ignore[assignment]  # a subset, as ServerApp allows
        classes = [*ServerApp.classes, FrontDoor]  # noqa: RUF012  # ServerApp declares it a plain list

        def init_httpserver(self) -> None:
            """ServerApp's, with the front door's timeouts and connection ceiling (red team 17, R6), which asks the
            hub who a credential not seen before names before counting its request (verify 26, V11)."""
            from .first_check import credential_check, front_door_keys_file

            self._http_server = FrontDoor(parent=self).http_server(
                self.web_app, ssl_options=self.ssl_options, xheaders=self.trust_xheaders,
                on_too_large=self._audit_too_large, on_chunking=self._audit_chunking, on_over_share=self._audit_over_share,
                on_body_cut=self._audit_body_cut, check_credential=credential_check(self),
                keys_file=front_door_keys_file())
            if not self.sock:
                self._find_http_port()
            self.io_loop.add_callback(self._bind_http_server)

        def _audit_too_large(self, headers: Any, target: str, length: int | None, limit: int) -> None:
            """A body refused 413 at the front door is audited as the hub user its token names (red team 19, R5)."""
            from .oversize import audit_too_large

            self.io_loop.add_callback(audit_too_large, self, headers, target, length, limit)

        def _audit_chunking(self, headers: Any, target: str, pieces: int, size: int, least: int) -> None:
            """A chunked body refused 400 for its chunks' size is audited the same way (red team 21, R4)."""
            from .oversize import audit_chunking

            self.io_loop.add_callback(audit_chunking, self, headers, target, pieces, size, least)

        def _audit_over_share(self, user: str, target: str, message: str, refused: int) -> None:
            """A user refused 429 over their share of a pressed ceiling, once a minute (verify 23, V5)."""
            from .oversize import audit_over_share

            audit_over_share(self, user, target, message, refused)

        def _audit_body_cut(self, user: str, target: str, code: str, message: str, cut: int) -> None:
            """A user whose unfinished bodies were cut (too slow, or holding most of the budget), once a minute
            (red team 39, R6)."""
            from .oversize import audit_body_cut

            audit_body_cut(self, user, target, code, message, cut)

        def init_signal(self) -> None:
            """SIGINT stops cleanly too (JupyterHub stops managed services with SIGINT first;
            without a terminal jupyter_server would turn it into a KeyboardInterrupt that skips
            the engine's shutdown and leader resignation)."""
            super().init_signal()
            signal.signal(signal.SIGINT, self._signal_stop)

    if args.allow_unprivileged_port:
        config.HubSchedApp.allow_unprivileged_port = True
    app = SchedServerApp.instance(config=config)
    try:  # the service is this extension: a setting it cannot read stops it (jupyter_server only warned and
        # started on defaults: verify 20, V2 — a flag given twice dropped every command-line setting)
        app.initialize(argv=_without_db_url(rest))  # the store store_url chose and checked, not a later word
    except (ValueError, TraitError) as exc:
        print(f"jupyter-sched serve: bad configuration, not starting: {exc}", file=stderr)
        return 2
    app.start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
