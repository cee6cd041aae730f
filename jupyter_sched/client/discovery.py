"""Find the jupyter_sched server a kernel (or script) should talk to.

Discovery order (the first that yields a URL wins; documented in :func:`discover`):

1. **Explicit** — ``connect(url, token)`` / ``discover(url=..., token=...)``.
2. **Kernel environment** — the server extension injects ``JUPYTER_SCHED_URL`` (the Jupyter
   server's base URL), ``JUPYTER_SCHED_TOKEN`` and ``JUPYTER_SCHED_KERNEL_ID`` into every kernel
   it starts. A ``JUPYTER_SCHED_URL`` set without a token uses the token of this account's running
   server at that URL (its runtime file), as the CLI's ``--url`` does.
3. **JupyterHub** — ``JUPYTER_SCHED_HUB_URL`` (the central service, e.g.
   ``http://hub:8081/services/jupyter-sched/``) with ``JUPYTER_SCHED_TOKEN``, else ``JUPYTERHUB_API_TOKEN``; otherwise the
   user's own single-user server at ``JUPYTERHUB_SERVICE_URL`` + ``JUPYTERHUB_SERVICE_PREFIX``.
4. **Running-server files** — ``jpserver-*.json`` in the Jupyter runtime dir
   (read as ``jupyter_server.serverapp.list_running_servers`` does, :func:`running_servers`), so ``jupyter execute`` or papermill on
   the same machine finds the server. Of the servers that answer ``GET api/sched/config``, the one
   whose root dir holds the current directory (the deepest) is taken, else the one started last;
   the others are kept in :attr:`Connection.others` so a caller can say which one it uses (new
   user 4: with two Jupyter servers a job went silently to the other one, ranked by pid as text).

When nothing is found, :class:`NoServerError` says exactly that and how to fix it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import SchedError
from ..wording.tokens import token_page_for, token_source, unset_token

if TYPE_CHECKING:
    from ._http import HttpReply, StdlibHttp

__all__ = [
    "ENV_HUB_URL", "ENV_KERNEL_ID", "ENV_TOKEN", "ENV_URL", "TOKEN_HINT", "Connection", "NoServerError", "discover",
    "another_running_server", "renewed", "running_servers", "runtime_server", "token_hint",
]

ENV_URL = "JUPYTER_SCHED_URL"
ENV_TOKEN = "JUPYTER_SCHED_TOKEN"
ENV_KERNEL_ID = "JUPYTER_SCHED_KERNEL_ID"
ENV_HUB_URL = "JUPYTER_SCHED_HUB_URL"
ENV_SERVICE_TOKEN = "JUPYTER_SCHED_SERVICE_TOKEN"
"""A user server's token that may only call the scheduler, minted by the hub at spawn
(:mod:`jupyter_sched.hub.spawn_token`, verify26 V3): what a terminal of that server sends the service."""

NO_SERVER_HINT = (
    "start JupyterLab / `jupyter server` with the jupyter_sched extension enabled on this machine, "
    "or call jupyter_sched.client.connect(url, token), or set JUPYTER_SCHED_URL and JUPYTER_SCHED_TOKEN "
    "(on a JupyterHub: JUPYTER_SCHED_HUB_URL=HUB/services/jupyter-sched/ and JUPYTERHUB_API_TOKEN)"
)


SLOW_SERVER_HINT = "the server is running but busy: try again, or give it longer (jupyter-sched --timeout 60 …)"
"""What a client is told when the servers it found were only slow (new user 23, N14)."""


HUB_SERVICE_HINT = ("talk to it through the hub: export JUPYTER_SCHED_HUB_URL=HUB{prefix} (HUB: the hub's address, "
                    "e.g. https://hub.example.org) and JUPYTER_SCHED_TOKEN=a token from HUB/hub/token")
"""What a client that found only a JupyterHub service's runtime file is told (newuser33 n5: "answered HTTP 403 (no
jupyter_sched extension there) … start JupyterLab"): ``{prefix}`` is the service's base URL (``/services/jupyter-sched/``)."""

_HUB_SERVICE = re.compile(r"/services/[^/]+/")
"""The base URL of a JupyterHub service (``JUPYTERHUB_SERVICE_PREFIX``): ``jupyter-sched serve`` runs under one."""


def _hub_service(info: Mapping[str, Any], why: str) -> str:
    """``why`` of a runtime file's server that refused the probe, said as what it is when its base URL is a JupyterHub
    service's (``jupyter-sched serve``: it answers only a hub's tokens) — "" when it is not one."""
    base = str(info.get("base_url") or "")
    if not _HUB_SERVICE.fullmatch(base) or not why.startswith(("answered HTTP 401", "answered HTTP 403")):
        return ""
    pid = info.get("pid")
    return f"is this host's JupyterHub service {base}{f' (pid {pid})' if isinstance(pid, int) else ''}, " \
           "which answers a hub's tokens only"


TOKEN_HINT = f"set JUPYTER_SCHED_TOKEN=TOKEN ({token_source()}) or call connect(url, token)"
"""What the Python API says about a refused token where nothing tells where it came from (:func:`token_hint` says it
for a connection, a hub's token page on a hub: newuser42 n12); the CLI says it in its own options."""


def token_hint(connection: Connection) -> str:
    """The hint of a refused request, said for where ``connection`` came from: whether a token was sent at all
    (and which variable is missing: new user 18, N2) or the one sent was refused, and where the right one is —
    on a JupyterHub its token page, not "the token JupyterLab printed" (newuser42 n12) — in the CLI's words
    (:mod:`jupyter_sched.wording.tokens`, one source)."""
    fix = f"set {ENV_TOKEN}=TOKEN ({token_source(token_page_for(connection.url, connection.source))}) or call " \
          "connect(url, token)"
    if connection.token:
        given = "of its runtime file" if connection.token_from else {
            "explicit": "given to connect()", "runtime-file": "of its runtime file", "job-token": "of this job",
            "kernel-env": f"in {ENV_TOKEN}", "hub-user": "in JUPYTERHUB_API_TOKEN"}.get(connection.source, "sent")
        return f"the token {given} was refused — {fix}"
    if connection.source == "kernel-env":
        return (f"no token was sent: {unset_token(ENV_URL)}, and this account runs no server at {connection.url} "
                f"whose token it could read — {fix}")
    if connection.source == "hub-service":
        return f"no token was sent: {unset_token(ENV_HUB_URL)} — {fix}"
    return f"no token was sent — {fix}"


class NoServerError(SchedError):
    """No jupyter_sched server could be found (nothing explicit, in the environment or the runtime dir)."""

    code = "no_server"


class Connection(NamedTuple):
    """Where the API lives and how to authenticate (a NamedTuple: see :class:`._wire.Req`).

    Attributes:
        url: base URL of the Jupyter server (or hub service), ending in ``/``; the API is
            ``{url}api/sched/``.
        token: Jupyter / JupyterHub API token sent as ``Authorization: token ...`` ("" = none).
        kernel_id: this kernel's id as the server knows it (leases bind to it), when known.
        source: how it was found: ``explicit``, ``kernel-env``, ``job-token`` (a job's progress token),
            ``hub-service``, ``hub-user`` or ``runtime-file``.
        root: a runtime-file server's root dir ("" otherwise).
        others: the base URLs of the other running servers that answered too (runtime files only):
            more than one was there to choose from.
        token_from: the runtime dir whose server file the token was read from ("" when the caller,
            the kernel's or the hub's environment gave it): such a token is read there again when the
            server refuses it (:func:`renewed`: a restarted ``jupyter lab`` has a new one).
        hub_token: the caller's own hub token when ``token`` is one the hub minted from it, scoped to the
            hub's scheduler service only (:mod:`.hub_token`, verify25 V7); kept to mint another when the
            hub drops that one. "" when ``token`` is the caller's own.
    """

    url: str
    token: str = ""
    kernel_id: str | None = None
    source: str = "explicit"
    root: str = ""
    others: tuple[str, ...] = ()
    token_from: str = ""
    hub_token: str = ""

    @property
    def api_url(self) -> str:
        """``{url}api/sched/``."""
        return f"{self.url}api/sched/"

    @property
    def described(self) -> str:
        """Which server this is and how it was found, one line (hubadmin25 B13: with no variable set an
        admin notebook ran on another Jupyter server of the same account and said only "admin: True")::

            http://127.0.0.1:8888/ — a Jupyter server of this account found through its runtime file (root /srv)
        """
        how = {
            "explicit": "given to connect()",
            "kernel-env": f"from {ENV_URL}",
            "job-token": "this job's own scheduler",
            "hub-service": f"a JupyterHub's scheduler, from {ENV_HUB_URL}",
            "hub-user": "this hub user's own server (JUPYTERHUB_SERVICE_URL)",
            "runtime-file": "a Jupyter server of this account found through its runtime file"
                            + (f" (root {self.root})" if self.root else "")
                            + f" — for a hub's scheduler set {ENV_HUB_URL} and {ENV_TOKEN}",
        }.get(self.source, self.source)
        return f"{self.url} — {how}"


def _slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def _join(base: str, prefix: str) -> str:
    base = base.rstrip("/")
    prefix = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
    if base.endswith(prefix.rstrip("/")) and prefix != "/":
        return base + "/"
    return base + prefix


def _from_env(env: Mapping[str, str], runtime_dir: str | None) -> Connection | None:
    """The server ``JUPYTER_SCHED_URL`` names, with ``JUPYTER_SCHED_TOKEN``; without one, the token of
    this account's running server at that URL, as ``--url`` finds it (:func:`_runtime_server`: sent
    to the address the server wrote only). New user 18, N2: ``JUPYTER_SCHED_URL=… jupyter nbconvert``
    worked in the CLI and was refused in the notebook's kernel."""
    url = env.get(ENV_URL, "").strip()
    if not url:
        return None
    url, token, token_from = _slash(url), env.get(ENV_TOKEN, ""), ""
    if not token and (listed := _runtime_server(url, runtime_dir)) is not None:
        (url, token), token_from = listed, runtime_dir or jupyter_runtime_dir()
    return Connection(url=url, token=token, kernel_id=env.get(ENV_KERNEL_ID) or None, source="kernel-env",
                      token_from=token_from)


def _from_hub(env: Mapping[str, str]) -> Connection | None:
    """``JUPYTER_SCHED_HUB_URL`` with ``JUPYTER_SCHED_TOKEN`` (the README's "From any other shell", which
    the CLI, the client and the magics all read here: hubadmin25 B13, the client read only
    ``JUPYTERHUB_API_TOKEN`` with it), else the server's scheduler-only ``JUPYTER_SCHED_SERVICE_TOKEN``, else
    ``JUPYTERHUB_API_TOKEN``; else the hub user's own server."""
    token = env.get("JUPYTERHUB_API_TOKEN", "")
    hub_url = env.get(ENV_HUB_URL, "").strip()
    if hub_url:
        given = env.get(ENV_TOKEN, "").strip() or env.get(ENV_SERVICE_TOKEN, "").strip()
        return Connection(url=_slash(hub_url), token=given or token,
                          kernel_id=env.get(ENV_KERNEL_ID) or None, source="hub-service")
    service_url = env.get("JUPYTERHUB_SERVICE_URL", "").strip()
    prefix = env.get("JUPYTERHUB_SERVICE_PREFIX", "").strip()
    if token and service_url:
        return Connection(url=_join(service_url, prefix), token=token, source="hub-user")
    return None


class Probe(NamedTuple):
    """A runtime-file server's ``GET config`` answer (200) and the kept-alive connection it came
    on: :func:`~jupyter_sched.client.connect` hands both to the client, so a CLI call neither
    connects twice nor asks for ``config`` twice (``status`` did; each CLI call is a new process)."""

    http: StdlibHttp
    config: HttpReply


def probe_headers(token: str) -> dict[str, str]:
    """The headers every request of the client sends (``SchedClient`` uses these too)."""
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"token {token}"
    return headers


SLOW = "did not answer within"
"""How :func:`_answers` begins its word for a server that was too slow (tried again with the request timeout)."""


def _answers(conn: Connection, timeout_s: float) -> Probe | str:
    """``conn``'s probe (``GET api/sched/config`` answered 200), else why not, in words: too slow
    (``"did not answer within 2 s"``), unreachable, or an answer that is not jupyter_sched's."""
    from ._http import HttpUnreachable, StdlibHttp

    http = StdlibHttp(conn.api_url, probe_headers(conn.token), timeout_s)
    try:
        reply = http.request("GET", "config")
    except HttpUnreachable as exc:
        http.close()
        if isinstance(exc.cause, TimeoutError):  # socket.timeout is TimeoutError since Python 3.10
            return f"{SLOW} {timeout_s:g} s"
        return "could not be reached"
    except ValueError:
        http.close()
        return "answered something other than jupyter_sched"
    if reply.status != 200:
        http.close()
        return f"answered HTTP {reply.status} (no jupyter_sched extension there)"
    return Probe(http, reply)


_FALSE_WORDS = ("no", "n", "false", "off", "0", "0.0")
"""Values that leave a jupyter_core boolean variable unset (``jupyter_core.paths.envset``)."""


def jupyter_runtime_dir() -> str:
    """Jupyter's runtime directory, as ``jupyter_core.paths.jupyter_runtime_dir`` says it, without
    importing jupyter_core where the answer is plain: ``$JUPYTER_RUNTIME_DIR``, else on Linux and
    other Unixes (not macOS) ``$JUPYTER_DATA_DIR/runtime`` or ``$XDG_DATA_HOME`` (default
    ``~/.local/share``, home resolved) ``/jupyter/runtime``. jupyter_core (with platformdirs and
    typing) costs the CLI, a new process per command, ~40 ms of CPU before it says anything; its
    other cases (macOS, Windows, ``JUPYTER_PLATFORM_DIRS``) still ask it. A test keeps the two equal."""
    environ = os.environ
    if environ.get("JUPYTER_RUNTIME_DIR"):
        return environ["JUPYTER_RUNTIME_DIR"]
    platform_dirs = environ.get("JUPYTER_PLATFORM_DIRS", "0").lower() not in _FALSE_WORDS
    if sys.platform in ("darwin", "win32") or (platform_dirs and not environ.get("JUPYTER_DATA_DIR")):
        from jupyter_core.paths import jupyter_runtime_dir as slow

        return slow()
    data = environ.get("JUPYTER_DATA_DIR") or os.path.join(
        environ.get("XDG_DATA_HOME") or os.path.join(os.path.realpath(os.path.expanduser("~")), ".local", "share"),
        "jupyter")
    return os.path.join(data, "runtime")


def running_servers(runtime_dir: str | None = None) -> Iterator[dict[str, Any]]:
    """The ``jpserver-*.json`` files of running Jupyter servers in ``runtime_dir`` (default: Jupyter's).

    What ``jupyter_server.serverapp.list_running_servers`` yields, read without importing
    jupyter_server (seconds on a busy machine, for a CLI that only needs these files); files of
    servers whose process is gone are skipped, not deleted (that is the server's business).
    """
    if runtime_dir is None:
        runtime_dir = jupyter_runtime_dir()
    for info, _ in _server_files(runtime_dir):
        yield info


def _server_files(runtime_dir: str, *, alive: bool = True) -> Iterator[tuple[dict[str, Any], float]]:
    """:func:`running_servers`' files with when each was written (seconds since the epoch); with ``alive``
    False, the files whose server process is gone instead (a ``kill -9`` leaves its file behind)."""
    if not os.path.isdir(runtime_dir):
        return
    for name in sorted(os.listdir(runtime_dir)):
        if not re.fullmatch(r"jpserver-(.+)\.json", name):
            continue
        path = os.path.join(runtime_dir, name)
        try:
            with open(path, encoding="utf-8") as f:
                info = json.load(f)
            written = os.stat(path).st_mtime
        except (OSError, ValueError):
            continue  # being written, or not ours to read
        if isinstance(info, dict) and isinstance(info.get("pid"), int) and _alive(info["pid"]) == alive:
            yield info, written


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, another user's
    return True


def _dead_server_files(runtime_dir: str) -> list[dict[str, Any]]:
    """The ``jpserver-*.json`` files in ``runtime_dir`` whose server process is gone, newest first — for saying
    which server stopped, never for connecting to."""
    gone = sorted(_server_files(runtime_dir, alive=False), key=lambda pair: -pair[1])
    return [info for info, _ in gone]


def another_running_server(url: str, runtime_dir: str | None = None) -> str | None:
    """The base URL of a running Jupyter server of this account (its runtime file; newest written first)
    that is not the one at ``url``, None when there is none — what a stale ``$JUPYTER_SCHED_URL`` should
    have named (newuser30 N3: a restarted ``jupyter lab`` on another port)."""
    files = sorted(_server_files(runtime_dir or jupyter_runtime_dir()), key=lambda pair: -pair[1])
    return next((_server_url(info) for info, _ in files if not _same_server(_server_url(info), url)), None)


def _server_url(info: Mapping[str, Any]) -> str:
    url = str(info.get("url") or "")
    if not url:
        url = f"http://127.0.0.1:{info.get('port', 8888)}/"
    base = str(info.get("base_url") or "/")
    return _join(url, base)


def _root(info: Mapping[str, Any]) -> str:
    return os.path.abspath(str(info.get("root_dir") or info.get("notebook_dir") or "/"))


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def _same_server(a: str, b: str) -> bool:
    """Whether two base URLs name one server: scheme, port and path equal, and the same host (any
    loopback name for another: JupyterLab prints localhost, its runtime file may say 127.0.0.1)."""
    from urllib.parse import urlsplit

    x, y = urlsplit(a), urlsplit(b)
    hosts = {(x.hostname or "").lower(), (y.hostname or "").lower()}
    return (x.scheme, x.port, x.path.rstrip("/")) == (y.scheme, y.port, y.path.rstrip("/")) \
        and (len(hosts) == 1 or hosts <= _LOOPBACK)


def _runtime_server(url: str, runtime_dir: str | None) -> tuple[str, str] | None:
    """``(its URL, its token)`` from this account's runtime file of the running server at ``url``,
    if there is one (a ``--url`` without ``--token`` for a server the CLI itself listed as "pass
    --url to use another"). The URL is the runtime file's: the token goes only to the address the
    server itself wrote, never to ``url`` as typed — ``localhost`` may resolve to ::1 where another
    account listens on the port the server holds on 127.0.0.1 only (red-team 5 finding 5)."""
    if runtime_dir is None:
        runtime_dir = jupyter_runtime_dir()
    for info, _ in _server_files(runtime_dir):
        if _same_server(_server_url(info), url) and info.get("token"):
            return _server_url(info), str(info["token"])
    return None


def runtime_server(url: str) -> tuple[str, str] | None:
    """``(its URL, its token)`` of this account's running server at ``url`` from the Jupyter runtime dir
    (:func:`_runtime_server`: the token goes only to the address the server itself wrote); None when this
    account runs none there."""
    return _runtime_server(url, None)


def renewed(connection: Connection) -> Connection | None:
    """``connection`` with the token its server's runtime file holds now, when its token was read
    from a runtime file (``token_from``) and that file now holds another — for the caller to send the
    refused request again with it. A plain ``jupyter lab`` makes a new token at every start: after a
    restart the old one is refused, and a wait that rode the restart out ended "refused the token of
    its runtime file" (newuser25 N5). A token the hub minted for the scheduler (``hub_token``) that the
    hub no longer takes is minted again (:func:`.hub_token.renewed_scoped`). None: the token was the
    caller's (a refusal of it is said), or no running server at that URL holds another."""
    if connection.hub_token:
        from .hub_token import renewed_scoped

        return renewed_scoped(connection, os.environ)
    if not connection.token_from:
        return None
    listed = _runtime_server(connection.url, connection.token_from)
    if listed is None or listed[1] == connection.token:
        return None
    url, token = listed
    return connection._replace(url=url, token=token)


def _from_runtime_files(servers: Iterable[tuple[Mapping[str, Any], float]], cwd: str, timeout_s: float,
                        retry_timeout_s: float | None = None, runtime_dir: str = ""
                        ) -> tuple[tuple[Connection, Probe] | None, list[str], list[str]]:
    """The server to use among ``(runtime file, written at)`` (of ``runtime_dir``): of those that answer, the deepest
    whose root dir holds ``cwd``, else the one started last; the others in ``others``. With it,
    its :class:`Probe` (the others' connections are closed). When none answers within ``timeout_s``
    but some were only slow, those are asked once more with ``retry_timeout_s`` (the CLI's
    ``--timeout``): on a loaded machine a 2 s probe missed a running server and the user was told to
    start JupyterLab (new user 23, N14). Second: each unanswering server's URL and why, in words; third: the base
    URLs of the JupyterHub services among them (:func:`_hub_service`)."""
    def rank(entry: tuple[Mapping[str, Any], float]) -> tuple[int, int, float]:
        info, written = entry
        root = _root(info)
        inside = cwd == root or cwd.startswith(root.rstrip(os.sep) + os.sep)
        return (0 if inside else 1, -len(root) if inside else 0, -written)

    answering: list[Connection] = []
    chosen: Probe | None = None
    silent: dict[str, tuple[Connection, str]] = {}
    hubs: list[str] = []  # the base URLs of the JupyterHub services among them (newuser33 n5)
    for info, _ in sorted(servers, key=rank):
        conn = Connection(url=_server_url(info), token=str(info.get("token") or ""), source="runtime-file",
                          root=_root(info), token_from=runtime_dir)
        if conn.url in {c.url for c in answering} or conn.url in silent:
            continue
        probe = _answers(conn, timeout_s)
        if isinstance(probe, str):
            hub = _hub_service(info, probe)
            silent[conn.url] = (conn, hub or probe)
            hubs += [str(info.get("base_url"))] if hub else []
            continue
        answering.append(conn)
        if chosen is None:
            chosen = probe
        else:
            probe.http.close()
    if chosen is None and retry_timeout_s is not None and retry_timeout_s > timeout_s:
        for url, (conn, why) in list(silent.items()):
            if chosen is None and why.startswith(SLOW):
                probe = _answers(conn, retry_timeout_s)
                if isinstance(probe, str):
                    silent[url] = (conn, probe)
                else:
                    answering.append(conn)
                    chosen = probe
                    del silent[url]
    whys = [f"{url} {why}" for url, (_, why) in silent.items()]
    if not answering or chosen is None:
        return None, whys, hubs
    return (answering[0]._replace(others=tuple(c.url for c in answering[1:])), chosen), whys, hubs


def discover(
    url: str | None = None,
    token: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    runtime_dir: str | None = None,
    cwd: str | None = None,
    probe_timeout_s: float = 2.0,
    retry_timeout_s: float | None = None,
) -> Connection:
    """Return the :class:`Connection` to use, trying the sources in the documented order.

    Args:
        url: explicit server base URL (``http://127.0.0.1:8888/``); wins over everything.
        token: explicit token; with ``url`` or without: a token given here is the one sent, to
            whichever server is found (the CLI passes ``--token`` or ``JUPYTER_SCHED_TOKEN``);
            default: the found server's own (runtime file, kernel or hub environment).
        env: environment to read (default ``os.environ``).
        runtime_dir: Jupyter runtime dir to scan (default ``jupyter_runtime_dir()``).
        cwd: directory used to prefer the server serving it (default ``os.getcwd()``).
        probe_timeout_s: seconds to wait for each runtime-file server to answer.
        retry_timeout_s: when none answered but some were only slow, seconds to wait for those once
            more (the client's request timeout); None: not asked again.

    Raises:
        NoServerError: nothing found; the message names each server found and why it did not
            answer, the hint how to fix it.
    """
    connection, probe = discover_probed(url, token, env=env, runtime_dir=runtime_dir, cwd=cwd,
                                        probe_timeout_s=probe_timeout_s, retry_timeout_s=retry_timeout_s)
    if probe is not None:
        probe.http.close()
    return connection


def discover_probed(
    url: str | None = None,
    token: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    runtime_dir: str | None = None,
    cwd: str | None = None,
    probe_timeout_s: float = 2.0,
    retry_timeout_s: float | None = None,
) -> tuple[Connection, Probe | None]:
    """:func:`discover`, with the :class:`Probe` of a server found through its runtime file (None
    otherwise, and when ``token`` replaces the server's own: the probe spoke with that one).
    The caller owns the probe's connection (:func:`~jupyter_sched.client.connect` hands it to the
    client).

    Raises:
        NoServerError: as :func:`discover`.
    """
    environ = os.environ if env is None else env
    if url:
        token_from = ""
        if not token:  # a server of this account's runtime dir named by --url: its own token (new user 5),
            listed = _runtime_server(_slash(url), runtime_dir)  # sent to its own address only
            if listed is not None:
                (url, token), token_from = listed, runtime_dir or jupyter_runtime_dir()
        return Connection(url=_slash(url), token=token or "", kernel_id=environ.get(ENV_KERNEL_ID) or None,
                          token_from=token_from), None
    found = _from_env(environ, runtime_dir) or _from_hub(environ)
    probe: Probe | None = None
    if found is None:
        if runtime_dir is None:
            runtime_dir = jupyter_runtime_dir()
        servers = list(_server_files(runtime_dir))
        probed, whys, hubs = _from_runtime_files(servers, os.path.abspath(cwd or os.getcwd()), probe_timeout_s,
                                           retry_timeout_s, runtime_dir)
        if probed is not None:
            found, probe = probed
    if found is not None:
        # a token the caller gave is used, never silently swapped for the discovered one (a wrong
        # one is refused by the server, and the caller is told so), nor renewed from a runtime file
        if token and token != found.token:
            if probe is not None:
                probe.http.close()
            return found._replace(token=token, token_from=""), None
        return (found._replace(token_from="") if token else found), probe
    where = f"{len(servers)} running Jupyter server(s) found, none with jupyter_sched answering" if servers else \
        "no running Jupyter server found"
    if not servers and (gone := _dead_server_files(runtime_dir or jupyter_runtime_dir())):
        # newuser30 N3: after a kill -9 its file stays; which server stopped, not only "none found"
        where += (f" (the Jupyter server at {_server_url(gone[0])}, pid {gone[0]['pid']}, is no longer running: "
                  "start it again)")
    if servers and whys:
        where += f" ({'; '.join(whys)})"
    if any(SLOW in why for why in whys):  # a server runs but was slow: starting one is the wrong advice
        raise NoServerError(
            f"No jupyter_sched server answered: {where} in the runtime dir {runtime_dir} (JUPYTER_RUNTIME_DIR).",
            hint=SLOW_SERVER_HINT)
    raise NoServerError(
        f"No jupyter_sched server found: {ENV_URL} is not set, nor {ENV_HUB_URL} (a JupyterHub's scheduler), "
        f"and {where} in the runtime dir {runtime_dir} (JUPYTER_RUNTIME_DIR).",
        # only a hub's service found (its own host's admin, say): through the hub, not "start JupyterLab"
        hint=HUB_SERVICE_HINT.format(prefix=hubs[0]) if hubs and len(hubs) == len(whys) else NO_SERVER_HINT,
    )
