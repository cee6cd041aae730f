"""Schedulers on one host: each says it runs, and a second one warns (new user 20, N17).

A second OS user's own ``jupyter lab`` (or ``jupyter server``) on the same machine ran a second
scheduler on the same GPUs: each handed all of them out, blind to the other's jobs, and neither
user was told. Each scheduler that manages this host's GPUs (an NVML, static or simulated inventory;
not a forwarding hub user server, not a Kubernetes cluster's) now writes a small entry in the
host's temporary folder (``/tmp/.jupyter_sched-scheduler-<uid>-<pid>.json``: account, pid, URL, GPUs),
removed when it stops; at its start, and once a minute after (the first one learns of a later one),
it reads the others' and logs one WARNING per other scheduler running (INFO when either's GPUs are
simulated: none is handed out twice), each once, e.g. ``another jupyter_sched (jupyter lab of root,
pid 4242, http://127.0.0.1:18900/) schedules this host's 4 GPUs too: jobs of both will share them …``.

Another account's entry is believed only as far as the system vouches for it: a regular file (no link) owned by the
account its name gives, whose pid is alive and owned by that account; its text is bounded, read as untrusted JSON and
shown without control characters. A planted or stale entry is ignored; a folder that cannot be used never stops the server.

The folder is ``.jupyter_sched-schedulers`` in the host's temporary folder, made sticky and writable by
every account (mode 1777) by the first scheduler; ``$JUPYTER_SCHED_HOST_REGISTRY`` names another one
(:func:`registry_folder`: an admin may name a folder root made, which no account can pre-create) — the
test suite points it at its own temporary folder, so the servers of a test run never meet a real
scheduler of this host, nor show up in its warnings (session 21).

Any account can write there, so a look is bounded and never on the server's event loop (red team 21,
R3: 100,000 planted names in /tmp cost a look ~5 s, once a minute, on the IO loop of every server —
every request of every user waited): a folder that is a link, or writable by others without the sticky
bit, is not used; at most :data:`MAX_NAMES` names are read per look, a name with leading zeros is not an
entry, at most :data:`PER_UID` entries per account and :data:`MAX_ENTRIES` in all are checked (one
``lstat`` and one ``/proc`` look each); :meth:`Registration.watch` looks in a worker thread, one look at a
time. What a flood can still do is hide schedulers from the warning, which it says once.

Any account could also make the folder first, own it, delete the others' entries or lock them out
(verify 21, V6): a folder owned by an account other than root and the scheduler's own, or group/other
writable without the sticky bit, is not used (:func:`own_folder`): one WARNING names it, its owner and the
fix, and the scheduler registers in its own ``<folder>-<uid>`` instead (seen by no other account's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import pwd
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import untrusted_json
from ..safefd import open_fd
from ..textsafe import printable_line

__all__ = ["ENV_REGISTRY", "FOLDER", "MAX_ENTRIES", "MAX_NAMES", "PER_UID", "HostScheduler", "Registration", "announce",
           "others", "own_folder", "register", "registry_folder", "store_digest", "untrusted", "usable_folder",
           "warning_for"]

log = logging.getLogger("jupyter_sched")

PREFIX = ".jupyter_sched-scheduler-"
_NAME = re.compile(re.escape(PREFIX) + r"(0|[1-9]\d{0,9})-([1-9]\d{0,9})\.json")
"""An entry's name: uid and pid as the system writes them (``0001004`` is no uid: red team 21, R3)."""
FOLDER = ".jupyter_sched-schedulers"
"""The registry's folder in the host's temporary folder (:func:`registry_folder`)."""
MAX_NAMES = 4096
"""Names read from the folder per look at most (a flood of planted names costs a look no more)."""
MAX_ENTRIES = 64
"""Entry-shaped names checked (``lstat``, ``/proc``, read) per look at most."""
PER_UID = 8
"""Entry-shaped names of one account checked per look at most."""
_MAX_BYTES = 4096
_SAID = 5
"""Other schedulers named one by one per look; the rest are counted in one line."""
LOOK_INTERVAL_S = 60.0
"""How often a running scheduler looks for schedulers started after it."""
ENV_REGISTRY = "JUPYTER_SCHED_HOST_REGISTRY"
"""Environment variable naming the registry folder instead of the host's temporary folder."""


def registry_folder() -> Path:
    """The folder of the host-wide entries: ``$JUPYTER_SCHED_HOST_REGISTRY`` when set (not empty),
    else :data:`FOLDER` in the host's temporary folder (``tempfile.gettempdir()``, usually ``/tmp``)."""
    named = os.environ.get(ENV_REGISTRY, "").strip()
    return Path(named) if named else Path(tempfile.gettempdir()) / FOLDER


def usable_folder(folder: Path, *, create: bool = False) -> str:
    """Why ``folder`` is not used as the registry ("" when it is): it must be a directory, not a
    link, and — when accounts other than its owner may write in it — sticky (no account removes or
    renames another's entry). ``create``: a missing folder is made, mode 1777."""
    try:
        if create and not folder.exists() and not folder.is_symlink():
            with contextlib.suppress(FileExistsError):
                folder.mkdir(mode=0o1777)
                os.chmod(folder, 0o1777)  # whatever the umask: every account's scheduler registers
        info = folder.lstat()
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return "is a link or not a folder"
    if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        return "is writable by other accounts without the sticky bit"
    return ""


def untrusted(folder: Path, *, uid: int | None = None) -> str:
    """Why another account could have taken ``folder`` ("" when it could not; verify 21, V6): it is owned by
    an account other than root and ``uid`` (default: this process's), or — beyond a sticky folder
    writable by all (1777) — group- or other-writable. Checked with ``lstat`` (a link is
    :func:`usable_folder`'s refusal); a folder that cannot be read is "" here (:func:`usable_folder` says it)."""
    try:
        info = folder.lstat()
    except OSError:
        return ""
    owner = os.getuid() if uid is None else uid
    if info.st_uid not in (0, owner):
        return f"is owned by {_account(info.st_uid)}, not by root or this scheduler's account ({_account(owner)})"
    if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        return "is writable by other accounts without the sticky bit"
    return ""


def _account(uid: int) -> str:
    """``name (uid N)``, or ``uid N`` when the account has no name."""
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


_WARNED: set[tuple[Path, Path]] = set()
"""Squatted registry folders already said by this process (each said once)."""


def own_folder(folder: Path, *, uid: int | None = None,
               say: logging.Logger | logging.LoggerAdapter[logging.Logger] = log) -> Path | None:
    """The folder this scheduler registers and looks in: ``folder`` (made 1777 when missing) unless another
    account could have taken it (:func:`untrusted`: it could delete others' entries or lock them out), then
    this account's own ``<folder>-<uid>`` (made 0755) — with one WARNING naming the folder, its owner and the
    fix. None when the own folder is taken too (said at WARNING): nothing is registered. Verify 21, V6."""
    owner = os.getuid() if uid is None else uid
    usable_folder(folder, create=True)
    why = untrusted(folder, uid=owner)
    if not why:
        return folder
    fallback = folder.with_name(f"{folder.name}-{owner}")
    with contextlib.suppress(OSError):
        if not fallback.exists() and not fallback.is_symlink():
            fallback.mkdir(mode=0o755)
    taken = untrusted(fallback, uid=owner) or usable_folder(fallback)
    key = (folder, fallback)
    if key not in _WARNED:
        _WARNED.add(key)
        fix = (f"remove {folder} (a new one is made by the next scheduler), or set ${ENV_REGISTRY} to a sticky "
               f"folder root made (e.g. mkdir -m 1777 /run/jupyter_sched)")
        if taken:
            say.warning("jupyter_sched: the host's scheduler registry %s %s, so it is not used; this account's own "
                        "folder %s %s too, so this scheduler is not registered and other schedulers on this host "
                        "go unnoticed; %s", folder, why, fallback, taken, fix)
        else:
            say.warning("jupyter_sched: the host's scheduler registry %s %s, so it is not used (that account could "
                        "delete other schedulers' entries); this scheduler registers in its own %s instead, where "
                        "other accounts' schedulers do not see it; %s", folder, why, fallback, fix)
    return None if taken else fallback


def _names(folder: Path, *, uid: int | None = None) -> tuple[list[tuple[Path, int, int]], bool]:
    """Entries in ``folder`` as ``(path, uid, pid)`` (of ``uid`` only when given): regular files,
    not links, owned by the account their name gives; bounded (:data:`MAX_NAMES` names read,
    :data:`MAX_ENTRIES` entry-shaped names checked, :data:`PER_UID` entries per account), and whether
    the bound cut the look short. Raises OSError: the folder cannot be read."""
    found: list[tuple[Path, int, int]] = []
    per_uid: dict[int, int] = {}
    read = checked = 0
    with os.scandir(folder) as entries:
        for entry in entries:
            read += 1
            if read > MAX_NAMES:
                return found, True
            name = entry.name
            if not name.startswith(PREFIX):
                continue
            match = _NAME.fullmatch(name)
            if match is None:
                continue
            owner, pid = int(match.group(1)), int(match.group(2))
            if uid is not None and owner != uid:
                continue
            if per_uid.get(owner, 0) >= PER_UID:
                continue
            checked += 1
            if checked > MAX_ENTRIES:
                return found, True
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_uid != owner:
                continue  # planted by another account: it may not speak for this one
            per_uid[owner] = per_uid.get(owner, 0) + 1
            found.append((folder / name, owner, pid))
    return found, False


@dataclass(frozen=True)
class HostScheduler:
    """One scheduler's entry: its account (``user``/``uid``), ``pid``, ``url`` (no token), ``gpus``
    (how many it hands out) and whether they are ``simulated``, and ``kind`` (``jupyter lab`` or
    ``jupyter-sched serve``), ``store`` (the store's digest, hubadmin23 A16)."""

    user: str
    uid: int
    pid: int
    url: str
    gpus: int
    simulated: bool
    kind: str
    store: str = ""
    """:func:`store_digest` of the store it schedules ("" when not known): two on one store share it."""


@dataclass
class Registration:
    """This process's entry (:func:`register`; ``path`` None when it could not be written) and what
    it said of the others: :meth:`look` says each other scheduler once, :meth:`watch` looks again
    every ``LOOK_INTERVAL_S`` (the scheduler that started first learns of a later one too),
    :meth:`withdraw` removes the entry and stops looking."""

    path: Path | None
    me: HostScheduler | None = None
    folder: Path | None = None
    told: set[tuple[int, int]] = field(default_factory=set)
    """(uid, pid) of the other schedulers already said (those still running)."""
    log: logging.Logger | logging.LoggerAdapter[logging.Logger] = log
    """Where it says them: the extension app's logger (:func:`announce`), so they carry the server log's
    ``[W … SchedApp]`` prefix and the INFO form is shown (verify 20, V5: the module's own logger had no
    handler — Python's last resort printed the warning bare and dropped the INFO)."""
    _timer: asyncio.TimerHandle | None = None
    _looking: bool = False
    _said_short: str = ""
    """The last "the look was cut short / the folder is not used" line said (each said once)."""

    def look(self) -> list[HostScheduler]:
        """Say each other scheduler running now that was not said before (at most :data:`_SAID`
        by name, the rest counted; WARNING when both hand out real GPUs, INFO when either's are
        simulated: none is handed out twice); the newly seen ones. Bounded (module doc); once, that
        the folder is not used or that a look was cut short by too many names."""
        if self.me is None:
            return []
        folder = self.folder or registry_folder()
        now, short = _others(self.me.pid, folder)
        if short and short != self._said_short:
            self.log.info("jupyter_sched: %s; another scheduler on this host may go unnoticed", short)
        self._said_short = short
        fresh = [other for other in now if (other.uid, other.pid) not in self.told]
        for other in fresh[:_SAID]:
            same = bool(other.store) and other.store == self.me.store  # nothing is handed out twice
            self.log.log(logging.INFO if other.simulated or self.me.simulated or same else logging.WARNING,
                         "jupyter_sched: %s", warning_for(other, self.me))
        if len(fresh) > _SAID:
            self.log.warning("jupyter_sched: and %d more schedulers on this host (%s/%s*.json)", len(fresh) - _SAID,
                        self.folder or registry_folder(), PREFIX)
        self.told = {(other.uid, other.pid) for other in now}  # one that stopped and comes back is said again
        return fresh

    def watch(self, interval_s: float = 0.0) -> None:
        """Look again every ``interval_s`` (default :data:`LOOK_INTERVAL_S`) on the running event loop
        (none running: nothing)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        every = interval_s or LOOK_INTERVAL_S

        def tick() -> None:
            self.look_off_loop(loop)
            self._timer = loop.call_later(every, tick)

        self._timer = loop.call_later(every, tick)

    def look_off_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """:meth:`look` in a worker thread of ``loop`` (the folder is shared with every account:
        red team 21, R3), unless the last one is still looking."""
        if self._looking:
            return
        self._looking = True

        def work() -> None:
            try:
                self.look()
            except Exception:  # never in the server's way
                log.debug("jupyter_sched: could not look for other schedulers on this host", exc_info=True)
            finally:
                self._looking = False

        try:
            loop.run_in_executor(None, work)
        except RuntimeError:  # the loop is closing
            self._looking = False

    def withdraw(self) -> None:
        """Stop looking; remove the entry (if it is still this process's)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.path is not None:
            with contextlib.suppress(OSError):
                if self.path.lstat().st_uid == os.getuid():
                    self.path.unlink()
            self.path = None


def _alive(pid: int, uid: int) -> bool:
    """Whether process ``pid`` runs as ``uid`` (Linux: its /proc entry's owner)."""
    try:
        return os.stat(f"/proc/{pid}").st_uid == uid
    except OSError:
        return False


def register(me: HostScheduler, *, folder: Path | None = None) -> Registration:
    """Write ``me``'s entry (mode 0644, never through a link); stale entries of this account
    (a process that is gone) are removed. A failure is logged at INFO and registers nothing."""
    folder = folder or registry_folder()
    unusable = usable_folder(folder, create=True)
    if unusable:
        log.info("jupyter_sched: %s %s, so this scheduler does not say there that it runs; another scheduler on "
                 "this host will not warn of it", folder, unusable)
        return Registration(None)
    path = folder / f"{PREFIX}{me.uid}-{me.pid}.json"
    with contextlib.suppress(OSError):
        for old, _uid, pid in _names(folder, uid=me.uid)[0]:
            if not _alive(pid, me.uid):
                old.unlink()
    try:
        with contextlib.suppress(FileNotFoundError):
            if path.lstat().st_uid == me.uid:
                path.unlink()  # this pid's leftover (a reused pid)
        fd = open_fd(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w") as fh:
            json.dump({"user": me.user, "url": me.url, "gpus": me.gpus, "simulated": me.simulated, "kind": me.kind,
                       "store": me.store}, fh)
        os.chmod(path, 0o644)  # whatever the umask: the other accounts read it
    except OSError as exc:
        planter = _planted_by(path, me.uid)
        if planter is not None:  # another account made this process's entry before it started: refused, said
            log.warning("jupyter_sched: %s, this scheduler's entry in the host's registry, was made by uid %d, not "
                        "by this account: it is not believed by any scheduler and this one is not registered; "
                        "remove it, or name a folder only root writes in $%s", path, planter, ENV_REGISTRY)
        else:
            log.info("jupyter_sched: could not say in %s that this scheduler runs (%s); another scheduler on this "
                     "host will not warn of it", folder, exc)
        return Registration(None)
    return Registration(path)


def _planted_by(path: Path, uid: int) -> int | None:
    """The owner of ``path`` when another account than ``uid`` made it (None: none there, or ours)."""
    try:
        owner = path.lstat().st_uid
    except OSError:
        return None
    return owner if owner != uid else None


def others(*, me_pid: int, folder: Path | None = None) -> list[HostScheduler]:
    """The entries of the other schedulers running on this host (module docstring: only what the
    system vouches for, bounded), oldest pid first."""
    return _others(me_pid, folder or registry_folder())[0]


def _others(me_pid: int, folder: Path) -> tuple[list[HostScheduler], str]:
    """:func:`others` and why the look was short ("" when it was not): the folder is not used, or it
    holds more names than a look reads."""
    unusable = usable_folder(folder)
    if unusable:
        return [], f"the host's scheduler registry {folder} {unusable}, so it is not read"
    found: list[HostScheduler] = []
    try:
        names, cut = _names(folder)
    except OSError:
        return [], ""
    for path, uid, pid in names:
        if pid == me_pid or not _alive(pid, uid):
            continue
        try:
            fd = open_fd(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as fh:
                info = os.fstat(fh.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_uid != uid:
                    continue  # planted by another account: it may not speak for this one
                entry = untrusted_json.loads(fh.read(_MAX_BYTES + 1)[:_MAX_BYTES])
        except (OSError, ValueError):
            continue
        if not isinstance(entry, dict):
            continue
        try:
            user = pwd.getpwuid(uid).pw_name
        except KeyError:
            user = str(uid)
        gpus = entry.get("gpus")
        found.append(HostScheduler(
            user=user, uid=uid, pid=pid, url=printable_line(str(entry.get("url") or "?"), limit=200),
            gpus=gpus if isinstance(gpus, int) and not isinstance(gpus, bool) and 0 <= gpus < 100_000 else 0,
            simulated=entry.get("simulated") is True, kind=printable_line(str(entry.get("kind") or "?"), limit=40),
            store=str(entry.get("store") or "")[:64]))
    short = (f"the host's scheduler registry {folder} holds more names than a look reads ({MAX_NAMES} names, "
             f"{MAX_ENTRIES} entries, {PER_UID} per account): only those were looked at") if cut else ""
    return sorted(found, key=lambda s: s.pid), short


def store_digest(url: str) -> str:
    """16 hex characters of SHA-256 of the store URL without its password ("" for ""): written in the
    host's registry, which every account reads, so never the URL itself."""
    if not url:
        return ""
    import hashlib

    from sqlalchemy.engine import make_url

    with contextlib.suppress(Exception):
        url = make_url(url).render_as_string(hide_password=True)  # any password: "***"
    return hashlib.sha256(url.encode()).hexdigest()[:16]


SERVE = "jupyter-sched serve"
"""``HostScheduler.kind`` of a hub service (else ``jupyter lab``: a personal server's scheduler)."""


def warning_for(other: HostScheduler, me: HostScheduler) -> str:
    """The start-up WARNING about ``other`` (seen by ``me``), with the fix for the one reading it
    (hub admin 22, H13): the hub service's admin is told to stop the other scheduler or have its
    owner use the hub (not to "run jupyter-sched serve", which they do); a personal server beside
    a hub service is told to use that service; two personal servers, to set one up."""
    who = f"another jupyter_sched ({other.kind} of {other.user}, pid {other.pid}, {other.url})"
    if other.store and other.store == me.store:  # an upgrade overlap: one engine leads, the other follows
        return (f"{who} serves the same store: one of the two leads it (schedules; the log's \"leads the store\" "
                "line and the audit's leader_acquired row say which), the other follows — they share the queue, "
                f"quotas and GPUs; stop the old one (pid {other.pid} if it is the one being replaced) once this "
                "one answers")
    if me.kind == SERVE and other.kind == SERVE:
        fix = (f"two hub services schedule the same GPUs: stop one of them (pid {other.pid} if it is the one being "
               "replaced), so that one service schedules this host")
    elif me.kind == SERVE:
        fix = (f"stop it (pid {other.pid}), or have {other.user} use the hub: on the hub a user's server forwards to "
               "this service (c.SchedApp.hub_service_url), so their jobs join the same queue and quotas")
    elif other.kind == SERVE:
        fix = (f"a hub service (pid {other.pid}) already schedules this host: use it through the hub "
               "(c.SchedApp.hub_service_url set to its URL) instead of this server's own scheduler")
    else:
        fix = ("one scheduler per machine: for several people, run `jupyter-sched serve` under JupyterHub "
               "(docs/admin.md: One GPU machine, several people)")
    if other.simulated or me.simulated:
        return (f"{who} runs on this host too; its GPUs or these are simulated, so no GPU is handed out twice "
                f"now — on real GPUs both would hand out the same ones; {fix}")
    gpus = f"schedules this host's {other.gpus} GPUs too" if me.kind != SERVE else "also schedules GPUs on this host"
    return (f"{who} {gpus}: jobs of both will share them, each scheduler "
            f"blind to the other's (quotas, queues and \"why does my job wait\" cover only its own); {fix}")


def announce(app: Any, serverapp: Any, *, folder: Path | None = None) -> Registration:
    """At a scheduler's start: register it, say every other one on this host (:meth:`Registration.look`)
    and keep looking for later ones (:meth:`Registration.watch`). Nothing for a hub user server that forwards to the hub's scheduler, or a
    Kubernetes inventory (those GPUs are not this host's). ``folder``: the registry (default
    :func:`registry_folder`)."""
    if getattr(app, "hub_service_url", ""):
        return Registration(None)
    try:
        inventory = app.services.ctx.inventory()
    except Exception:  # an inventory that cannot be read now: nothing to say of its GPUs
        return Registration(None)
    if inventory.source == "kubernetes":
        return Registration(None)
    gpus, simulated = sum(1 for _ in inventory.gpus()), bool(inventory.simulated)
    kind = SERVE if type(app).__name__ == "HubSchedApp" else "jupyter lab"
    try:
        user = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        user = str(os.getuid())
    me = HostScheduler(user=user, uid=os.getuid(), pid=os.getpid(), url=str(getattr(serverapp, "connection_url", "")),
                       gpus=gpus, simulated=simulated, kind=kind,
                       store=store_digest(str(getattr(getattr(app.services, "store", None), "url", "") or "")))
    say = getattr(app, "log", None) or log
    chosen = own_folder(folder or registry_folder(), uid=me.uid, say=say)
    if chosen is None:
        return Registration(None)
    folder = chosen
    registration = register(me, folder=folder)
    registration.me, registration.folder = me, folder
    registration.log = say
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        registration.look()  # bounded (module doc)
    else:
        registration.look_off_loop(loop)
    registration.watch()
    return registration
