"""Who a job runs as: the run-as identity, the hub user → OS account mapping, the clean environment.

DESIGN, *Who runs it*: a job runs as its owner and sees only what its owner may see.

* **Embedded** (one user's server): the job runs as the server's own OS user, as before —
  :func:`embedded_run_as`, ``RunAs.account is None``.
* **Hub mode, local executor**: the job runs as the owner's OS account. The account comes from an
  :class:`AccountMapping` (default: the hub user name itself, which is what JupyterHub's
  ``LocalProcessSpawner`` does with ``pwd.getpwnam(user.name)``); the service (root) switches to
  it in a short root step run before the job's program (:func:`as_account`: ``setgroups``/
  ``setresgid``/``setresuid``, then ``exec``, the way Slurm's slurmd switches to the job's uid) —
  never ``Popen(user=)``, whose caller waits on a process of the account until its ``exec``
  (red32 R7). Accounts with a uid below ``min_uid`` (root and system accounts)
  are refused: a hub user called ``root`` never gets a root job.
* **Kubernetes**: the same mapping gives the pod's ``runAsUser``/``runAsGroup`` where an account
  or explicit ids are configured (:meth:`AccountMapping.pod_ids`).

The job's environment in hub mode is :func:`clean_environment`: only the variables named in
:data:`ENV_ALLOWLIST` are copied from the service's environment (locale and time zone), then
``HOME``/``USER``/``LOGNAME``/``SHELL`` of the account and a fixed ``PATH``; the job's own
variables are added on top by the executor. Nothing else of the service's environment — its hub
token, database URL, cloud or Kubernetes credentials — ever reaches a job.
"""

from __future__ import annotations

import errno
import os
import pwd
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import ExecutorError, OverloadedError, ValidationError
from ..model import Job

__all__ = [
    "DROP_TO_ACCOUNT",
    "JOB_NAMESPACES",
    "as_account",
    "job_namespaces_refused",
    "job_shm_options",
    "DEFAULT_JOB_PATH",
    "DENIED_ACCOUNTS",
    "SHARED_UIDS",
    "runs_for_others",
    "why_others_cannot_run",
    "ENV_ALLOWLIST",
    "AccountMapping",
    "RunAs",
    "can_switch_users",
    "clean_environment",
    "embedded_run_as",
    "fds_short",
    "job_path",
]

ENV_ALLOWLIST: tuple[str, ...] = (
    "LANG", "LANGUAGE", "LC_ALL", "LC_ADDRESS", "LC_COLLATE", "LC_CTYPE", "LC_IDENTIFICATION",
    "LC_MEASUREMENT", "LC_MESSAGES", "LC_MONETARY", "LC_NAME", "LC_NUMERIC", "LC_PAPER",
    "LC_TELEPHONE", "LC_TIME", "TZ",
)
"""Variables a hub-mode job inherits from the service's environment when set (locale and time
zone only: harmless, and jobs print dates and text with them). Everything else is dropped."""

DEFAULT_JOB_PATH = "/usr/local/bin:/usr/bin:/bin"
"""``PATH`` of a hub-mode job after its interpreter's directory (see :func:`clean_environment`)."""

DENIED_ACCOUNTS: frozenset[str] = frozenset({"nobody", "nfsnobody"})
"""Accounts no job runs as by default: shared by system daemons (and NFS root squashing)."""

SHARED_UIDS: frozenset[int] = frozenset({65534, 65535, 2**32 - 2, 2**32 - 1})
"""The overflow ids ("nobody" on Linux, NFS and user namespaces): never a person's own uid."""

_ACCOUNT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,63}$")


@dataclass(frozen=True, slots=True)
class RunAs:
    """The identity an executor must run a job as (decided with the job's start).

    Attributes:
        user: the scheduler user who owns the job (hub user name embedded or in hub mode).
        account: the OS account to switch to; None = the service's own account (embedded).
        uid: numeric user id of ``account`` (None when not switching, or unknown on Kubernetes).
        gid: primary group id of ``account``.
        groups: supplementary group ids of ``account`` (``os.getgrouplist``), primary included.
        home: the account's home directory (default working directory of its jobs), if known.
    """

    user: str
    account: str | None = None
    uid: int | None = None
    gid: int | None = None
    groups: tuple[int, ...] = ()
    home: str | None = None

    @property
    def switches(self) -> bool:
        """True when the job runs as an account other than the service's own."""
        return self.account is not None

    def to_dict(self) -> dict[str, object]:
        """JSON shape kept in the executor handle (re-adoption checks the processes' uid)."""
        return {"user": self.user, "account": self.account, "uid": self.uid, "gid": self.gid,
                "groups": list(self.groups), "home": self.home}


_FD_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE})


def fds_short() -> bool:
    """Whether this process cannot open one more file right now (EMFILE/ENFILE): a lookup that
    failed meanwhile ("no such user" from glibc, a hub call) is the service's overload, never the
    caller's fault (red team 17, R6)."""
    try:
        fd = os.open(os.devnull, os.O_RDONLY)
    except OSError as exc:
        return exc.errno in _FD_ERRNOS
    os.close(fd)
    return False


def embedded_run_as(job: Job) -> RunAs:
    """Embedded mode: the job runs as the server's own OS user (no switch)."""
    return RunAs(user=job.spec.user)


def runs_for_others(path: str) -> bool:
    """True when accounts other than this one can execute ``path`` (:func:`why_others_cannot_run`)."""
    return why_others_cannot_run(path) is None


def why_others_cannot_run(path: str) -> str | None:
    """Why accounts other than this one cannot execute ``path``, naming what to fix, or None when they can: the
    file (symlinks resolved) must be readable and executable by others and every folder above IT searchable
    (``/root`` is 0700, so an interpreter under it — pyenv's there, the target of a venv's ``python`` link —
    cannot run jobs of other accounts; newuser35 n5: "a folder above it is private" when every folder above the
    venv's link was 0755 and the private one was behind the link), e.g. ``its interpreter
    /root/.pyenv/versions/3.11.7/bin/python3.11 (where /opt/venv/bin/python links) is under /root, mode 0700``."""
    real = os.path.realpath(path)
    shown = real if real == path else f"its interpreter {real} (where {path} links)"
    try:
        mode = os.stat(real).st_mode
        if not (mode & 0o005) == 0o005:
            return f"{shown} is not readable and executable by others (mode {stat.S_IMODE(mode):04o})"
        folder = os.path.dirname(real)
        while True:
            mode = os.stat(folder).st_mode
            if not mode & 0o001:
                return f"{shown} is under {folder}, mode {stat.S_IMODE(mode):04o}: other accounts cannot enter it"
            parent = os.path.dirname(folder)
            if parent == folder:
                return None
            folder = parent
    except OSError as exc:
        return f"{shown} cannot be looked at ({exc.strerror or exc})"


def can_switch_users() -> bool:
    """True when this process may start processes as other accounts (effective uid 0).

    Linux capabilities (CAP_SETUID + CAP_SETGID without root) are not counted: the executor also
    needs to create per-user directories and read every job's processes, which is root's.
    """
    return hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass(frozen=True, slots=True)
class AccountMapping:
    """Hub user → OS account (and pod uid/gid), configured by the admin.

    Attributes:
        template: account name from the hub user name; ``{username}`` is substituted. Default
            ``"{username}"``: the account JupyterHub's local spawners run the user's server as.
        accounts: explicit ``{hub user: account name}`` entries that win over the template.
        ids: explicit ``{hub user: (uid, gid)}`` for Kubernetes pods when the service's host has
            no such accounts (no passwd entry needed).
        default_ids: ``(uid, gid)`` for pods of users with neither an account nor ``ids``
            (e.g. ``(1000, 100)``, the Jupyter docker stacks' ``jovyan``); None: the image's user.
        min_uid: accounts with a smaller uid are refused (root, daemons). Default 1000.
        denied_accounts: account names never run as whatever their uid (default ``nobody`` and
            ``nfsnobody``: shared by daemons and NFS root squashing); the overflow ids 65534,
            65535, 4294967294 and 4294967295 are refused too, whatever their name.
    """

    template: str = "{username}"
    accounts: Mapping[str, str] = field(default_factory=dict)
    ids: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    default_ids: tuple[int, int] | None = None
    min_uid: int = 1000
    denied_accounts: frozenset[str] = DENIED_ACCOUNTS

    def __post_init__(self) -> None:
        if "{username}" not in self.template and not _ACCOUNT_NAME.match(self.template):
            raise ValidationError(f"run-as account template {self.template!r} is not an account name and has no "
                                  "{username}", field="run_as_account_template",
                                  hint='use "{username}" (the hub user name) or e.g. "jh-{username}"')
        for user, (uid, gid) in {**self.ids, **({"(default)": self.default_ids} if self.default_ids else {})}.items():
            if uid < self.min_uid or gid < 0 or uid in SHARED_UIDS:
                raise ValidationError(f"run-as ids of {user!r} are uid {uid}, gid {gid}; jobs never run with a uid "
                                      f"below {self.min_uid}", field="run_as_ids",
                                      hint="give the user's real uid/gid (>= min_uid)")

    @classmethod
    def from_config(cls, *, template: str = "{username}", accounts: Mapping[str, object] | None = None,
                    ids: Mapping[str, object] | None = None, default_ids: Iterable[int] | None = None,
                    min_uid: int = 1000, denied_accounts: Iterable[str] = DENIED_ACCOUNTS) -> AccountMapping:
        """Build from plain config values (traitlets ``Unicode``/``Dict``/``List``).

        Raises:
            ValidationError: a non-string account, ids that are not two integers, a uid below
                ``min_uid`` (field ``run_as_accounts`` / ``run_as_ids``).
        """
        named: dict[str, str] = {}
        for user, account in (accounts or {}).items():
            if not isinstance(account, str) or not _ACCOUNT_NAME.match(account):
                raise ValidationError(f"run-as account of {user!r} must be an account name (got {account!r})",
                                      field=f"run_as_accounts.{user}", hint='e.g. {"alice": "alice"}')
            named[str(user)] = account
        numeric = {str(user): _two_ids(value, f"run_as_ids.{user}") for user, value in (ids or {}).items()}
        default = _two_ids(list(default_ids), "run_as_default_ids") if default_ids else None
        return cls(template=template, accounts=named, ids=numeric, default_ids=default, min_uid=min_uid,
                   denied_accounts=frozenset(str(name) for name in denied_accounts))

    def account_for(self, user: str) -> str:
        """The OS account name of hub user ``user`` (explicit entry, else the template)."""
        return self.accounts.get(user) or self.template.replace("{username}", user)

    def resolve(self, user: str, *, lookup: Callable[[str], pwd.struct_passwd] = pwd.getpwnam,
                grouplist: Callable[[str, int], list[int]] = os.getgrouplist) -> RunAs:
        """The run-as identity of ``user`` on this host (local executor in hub mode).

        Raises:
            ExecutorError: no such account, its uid is below ``min_uid``, or it is a denied or
                shared one (field ``user``; the hint says what to configure).
        """
        account = self.account_for(user)
        if not _ACCOUNT_NAME.match(account):
            raise ExecutorError(f"hub user {user!r} maps to {account!r}, which is not a valid account name",
                                field="user", hint=f"ask an admin to map {user} to an account in "
                                                   "c.HubSchedApp.run_as_accounts")
        try:
            entry = lookup(account)
        except KeyError:
            if fds_short():  # glibc says "not found" when it could not open the account database (R6)
                raise OverloadedError(f"could not read the account database for {user!r}: this service is out of "
                                      "file descriptors", field="user", hint="retry in a moment") from None
            raise ExecutorError(f"hub user {user!r} has no OS account {account!r} on this host to run their jobs as",
                                field="user",
                                # the user reads it (status, the refusal): the fix is an admin's (newuser38 n16)
                                hint=f"ask an admin to create the account {account!r} (useradd), or to map "
                                     f"{user} to their account in c.HubSchedApp.run_as_accounts") from None
        if entry.pw_uid < self.min_uid:
            raise ExecutorError(f"hub user {user!r} maps to account {account!r} with uid {entry.pw_uid}; jobs never "
                                f"run with a uid below {self.min_uid}", field="user",
                                hint=f"ask an admin to map {user} to their own account in "
                                     "c.HubSchedApp.run_as_accounts")
        if account in self.denied_accounts or entry.pw_uid in SHARED_UIDS:
            raise ExecutorError(f"hub user {user!r} maps to account {account!r} (uid {entry.pw_uid}), which system "
                                "services share; jobs never run as it", field="user",
                                hint=f"ask an admin to map {user} to their own account in "
                                     "c.HubSchedApp.run_as_accounts")
        try:
            groups = tuple(sorted(set(grouplist(account, entry.pw_gid))))
        except OSError:
            groups = (entry.pw_gid,)
        return RunAs(user=user, account=account, uid=entry.pw_uid, gid=entry.pw_gid, groups=groups,
                     home=entry.pw_dir or None)

    def pod_ids(self, user: str, *, lookup: Callable[[str], pwd.struct_passwd] = pwd.getpwnam) -> tuple[int, int] | None:
        """``(uid, gid)`` for a Kubernetes pod of ``user``: explicit ids, else the mapped account's
        ids when this host knows it, else ``default_ids`` (None: leave the image's user)."""
        if user in self.ids:
            return self.ids[user]
        if user in self.accounts or self.template != "{username}":
            try:
                entry = lookup(self.account_for(user))
            except KeyError:
                return self.default_ids
            if entry.pw_uid >= self.min_uid and entry.pw_uid not in SHARED_UIDS \
                    and self.account_for(user) not in self.denied_accounts:
                return entry.pw_uid, entry.pw_gid
        return self.default_ids


def _two_ids(value: object, where: str) -> tuple[int, int]:
    if (isinstance(value, (list, tuple)) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        return int(value[0]), int(value[1])
    raise ValidationError(f"{where} must be [uid, gid] (got {value!r})", field=where, hint="e.g. [1001, 1001]")


def clean_environment(run_as: RunAs, *, service_env: Mapping[str, str], python: str,
                      shell: str | None = None) -> dict[str, str]:
    """The environment a hub-mode job starts from (the executor adds the job's own variables and
    the GPU pins on top).

    Args:
        run_as: the account the job runs as.
        service_env: the service's own environment; only :data:`ENV_ALLOWLIST` names are read.
        python: the job interpreter; its directory leads ``PATH`` so ``python`` and the tools of
            that environment resolve first.
        shell: the account's login shell (``SHELL``), if known.

    Returns:
        ``{name: value}`` with the allow-listed names present in ``service_env``, ``HOME``,
        ``USER``, ``LOGNAME``, ``SHELL`` and ``PATH``.
    """
    env = {name: service_env[name] for name in ENV_ALLOWLIST if name in service_env}
    account = run_as.account or run_as.user
    env["HOME"] = run_as.home or "/"
    env["USER"] = env["LOGNAME"] = account
    env["SHELL"] = shell or "/bin/sh"
    env["PATH"] = job_path(python)
    return env


def job_path(python: str) -> str:
    """``PATH`` of a hub-mode job that sets none itself: its interpreter's directory, then
    :data:`DEFAULT_JOB_PATH` (:func:`clean_environment`; what the owner check of a command's program
    searches, :func:`.owner_paths.missing_as_owner`)."""
    return f"{os.path.dirname(python)}:{DEFAULT_JOB_PATH}" if os.path.dirname(python) else DEFAULT_JOB_PATH


DROP_TO_ACCOUNT = (
    "import os,sys,warnings\n"
    "u,g=int(sys.argv[1]),int(sys.argv[2])\n"
    "try:\n"
    " os.setgroups([int(x) for x in sys.argv[3].split(',') if x]);os.setresgid(g,g,g);os.setresuid(u,u,u)\n"
    " os.execvp(sys.argv[4],sys.argv[4:])\n"
    "except OSError as e:\n"
    " sys.stderr.write(f'cannot start the job as uid {u}: {sys.argv[4]}: {e.strerror}\\n');sys.stderr.flush()\n"
    " os._exit(127)\n")
"""The first program of anything the service runs as another account (:func:`as_account`): run as root by the
service's interpreter (``-I -S``: no site, none of Python's environment variables read), it becomes the account
(groups, gid, uid: real, effective and saved) and execs ``argv[4:]`` (searched on its ``PATH``), keeping its pid,
session, descriptors and environment (the caller's: an allow-list). A failure is one line on its stderr and exit 127.
``warnings`` is imported while still root: ``execvp`` of a bare name (``head``) imports it lazily, after the drop, and
the service's standard library may not be readable by the account (a Python under ``/root/.pyenv``): "No module
named 'warnings'", a traceback, and the owner's content check (:func:`.owner_paths.read_as_owner`) read nothing."""

JOB_NAMESPACES = (
    "import ctypes\n"
    "c=ctypes.CDLL(None,use_errno=True)\n"
    "o=sys.argv.pop(4).encode()\n"
    "if c.unshare(0x08020000)==0 and c.mount(b'none',b'/',None,0x84000,None)==0:\n"
    " c.mount(b'tmpfs',b'/dev/shm',b'tmpfs',6,o)\n")
"""What the root step of a job's start does before it becomes the account (:func:`as_account` with ``shm``): a new
IPC namespace and mount namespace (``unshare(CLONE_NEWIPC | CLONE_NEWNS)``), every mount made a slave of the host's
(``MS_REC | MS_SLAVE``: mounts the host makes later, an automounted home, still reach the job; nothing the job's
namespace mounts reaches the host) and a tmpfs of the job's own on ``/dev/shm`` (``MS_NOSUID | MS_NODEV``, options
``argv[4]``). The job's SysV shared memory, semaphores and message queues and its ``/dev/shm`` files then end with
its last process, and its ``/dev/shm`` holds at most its memory cap (red33 R2: 200 MiB segments and /dev/shm files
outlived their job, a memory cap's worth of the host's RAM each, and 4,096 one-byte segments would fill the
host-wide SysV table, so the store's PostgreSQL could no longer start). Where the kernel refuses (no
``CAP_SYS_ADMIN``: a restricted container), the job starts without them (:func:`job_namespaces_refused` says so
once at the service's start)."""

_AFTER_DROP_FOR_TESTS = ""
"""One line of Python :data:`DROP_TO_ACCOUNT` runs once it is the account's, before its execve (tests only: the
owner's SIGSTOP landing in that window, which a test cannot time)."""


def as_account(run_as: RunAs, argv: Sequence[str], *, shm: str | None = None) -> list[str]:
    """``argv`` run as ``run_as``'s account by way of :data:`DROP_TO_ACCOUNT`: Popen's child, which ``Popen`` waits for
    on the calling thread until its ``execve``, is root's (the account cannot signal it); the account's process exists
    only after ``Popen`` returned. ``Popen(user=)`` made its child the account's from its ``setuid`` to its ``execve``,
    so the account's SIGSTOP there held the caller — the engine's thread at a job's start, a request thread at a
    submit's path checks — for as long as the account liked (red32 R7). Costs one start of the service's
    interpreter (~15 ms) in the child, none on the calling thread.

    ``shm``: a job's start — the tmpfs options of its own ``/dev/shm`` (``"size=4096m,mode=1777"``), with its own
    IPC and mount namespaces (:data:`JOB_NAMESPACES`); None: neither (a path check as the account).

    Raises:
        ExecutorError: ``run_as`` lacks a numeric uid or gid (the process would run as root).
    """
    if run_as.uid is None or run_as.gid is None:
        raise ExecutorError(f"cannot run as {run_as.account or run_as.user}: its uid or gid is unknown", field="user",
                            hint="map the user to an OS account that exists on this host")
    code = DROP_TO_ACCOUNT.replace(" os.execvp", f" {_AFTER_DROP_FOR_TESTS}\n os.execvp") if _AFTER_DROP_FOR_TESTS \
        else DROP_TO_ACCOUNT
    if shm is not None:
        code = code.replace("try:\n", JOB_NAMESPACES + "try:\n", 1)
    return [sys.executable, "-I", "-S", "-c", code, str(run_as.uid), str(run_as.gid),
            ",".join(str(g) for g in run_as.groups), *([shm] if shm is not None else []), *argv]


def job_shm_options(memory_mib: int) -> str:
    """The tmpfs options of a job's own ``/dev/shm``: mode 1777 and, with a memory cap (MiB, 0: none), that size —
    its pages count in the job's memory group anyway; the size makes the end of room a clean ENOSPC."""
    return f"size={memory_mib}m,mode=1777" if memory_mib > 0 else "mode=1777"


_PROBE = ("import ctypes,os,sys\n"
          "c=ctypes.CDLL(None,use_errno=True)\n"
          "if c.unshare(0x08020000)!=0 or c.mount(b'none',b'/',None,0x84000,None)!=0 or "
          "c.mount(b'tmpfs',b'/dev/shm',b'tmpfs',6,b'size=1m')!=0:\n"
          " sys.stdout.write(os.strerror(ctypes.get_errno()));sys.exit(1)\n")


def job_namespaces_refused() -> str | None:
    """Why jobs cannot have their own IPC namespace and ``/dev/shm`` here (:data:`JOB_NAMESPACES`, tried in a
    short child of the service's interpreter, ~20 ms); None where they can."""
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", _PROBE], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    return None if done.returncode == 0 else (done.stdout.strip() or done.stderr.strip()[-200:] or "refused")
