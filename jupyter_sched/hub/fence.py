"""JupyterHub's local spawner with hub users' servers inside a GPU devices fence (red team 16, R1).

``LocalProcessSpawner`` starts each user's server as the user's OS account on the hub's host; on
the GPU host that used to mean a server, its kernels and terminals opened every ``/dev/nvidiaN``.
:class:`FencedLocalProcessSpawner` puts the server, before it drops root, into its account's
devices group (:mod:`jupyter_sched.executors.server_fence`: every GPU denied; the central service
allows the GPUs of the account's granted kernel leases while they are held). The user cannot leave
it: moving a process needs root. In ``jupyterhub_config.py``::

    c.JupyterHub.spawner_class = "jupyter_sched.hub.fence.FencedLocalProcessSpawner"
    # c.FencedLocalProcessSpawner.fence_gpus = False   # the one setting that turns the fence off

Run the hub as root on the GPU host where ``jupyter-sched serve`` runs, and let the service map
hub users to the same OS accounts as the spawner (``c.HubSchedApp.run_as_account_template``, default
the user name). Where the host has no writable cgroup v1 devices controller the spawner logs "user
servers are not fenced" with the reason at each spawn and starts the server anyway; where it has
one and the server cannot enter its group, the spawn fails (no server starts unfenced).

The server's process is root's until after ``start`` returned (s33-popen's finding): ``Popen``, which the hub calls
on its event loop, waits only for a root step (:data:`DROP_TO_SERVER`) that becomes the account and execs the server.
``LocalProcessSpawner.start`` made Popen's child the account's from its ``setuid`` to its ``execve``, so the user's
``kill(-1, SIGSTOP)`` loop held Popen, and with it every login, spawn and API call of the hub, for as long as they
liked. Now their SIGSTOP holds only their own server, which the hub ends at its ``http_timeout`` as any that does not
come up.
"""

from __future__ import annotations

import json
import os
import pwd
import shlex
import sys
from collections.abc import Callable, Mapping
from subprocess import Popen
from typing import Any

from jupyterhub.spawner import LocalProcessSpawner
from jupyterhub.utils import random_port
from traitlets import Bool, Int

from ..executors.server_fence import NOT_FENCED, ServerFence, server_fence_problem, server_tasks_enter_fn

__all__ = ["DROP_TO_SERVER", "FencedLocalProcessSpawner"]

DROP_TO_SERVER = (
    "import json,os,sys\n"
    "u,g=int(sys.argv[1]),int(sys.argv[2])\n"
    "with os.fdopen(int(sys.argv[4]),'rb') as f:\n"
    " e=json.loads(f.read())\n"
    "try:\n"
    " os.setgroups([int(x) for x in sys.argv[3].split(',') if x]);os.setresgid(g,g,g);os.setresuid(u,u,u)\n"
    "except OSError as x:\n"
    " sys.stderr.write(f'jupyter_sched: cannot become uid {u} to start its server: {x.strerror}\\n');os._exit(127)\n"
    "try:\n"
    " os.chdir(sys.argv[5])\n"
    "except OSError as x:\n"
    " sys.stderr.write(f\"jupyter_sched: cannot enter {sys.argv[5]} as uid {u} ({x.strerror}): the server starts in /\\n\")\n"
    " os.chdir('/')\n"
    "try:\n"
    " os.execvpe(sys.argv[6],sys.argv[6:],e)\n"
    "except OSError as x:\n"
    " sys.stderr.write(f'jupyter_sched: cannot start the server as uid {u}: {sys.argv[6]}: {x.strerror}\\n')\n"
    " os._exit(127)\n")
"""The program a user's server starts as (:meth:`FencedLocalProcessSpawner.start`), run as root by the hub's
interpreter with ``-I -S`` (no site, no ``PYTHON*`` variable read) and an EMPTY environment — no loader variable
(``LD_PRELOAD``, ``LD_LIBRARY_PATH``) of the spawner's environment ever reaches a root process. ``argv``: uid, gid,
groups (comma-separated), the descriptor of the server's environment (JSON ``{name: value}``, read and closed as
root), the account's home, then the server's command. It becomes the account (groups, gid, uid: real, effective and
saved), enters the home as the account (``/`` where it cannot, said on stderr) and execs the command with that
environment (searched on its ``PATH``), keeping its pid and session. A failure is one line on stderr (the hub's log)
and exit 127, which the hub reports as the server's exit."""

_AFTER_DROP_FOR_TESTS = ""
"""One line of Python :data:`DROP_TO_SERVER` runs once it is the account's, before its execve (tests only: the
user's SIGSTOP landing in that window, which a test cannot time)."""

_ROOT_STEP_KWARGS = frozenset({"env", "preexec_fn", "pass_fds", "user", "group", "extra_groups", "process_group",
                               "shell", "executable"})
"""``c.LocalProcessSpawner.popen_kwargs`` the root step sets itself (ignored, with a warning): ``user``/``group``
would make Popen's child the account's before its execve again (the hub's loop held), ``shell``/``executable`` would
replace the root step, ``env`` is never the admin's (as upstream)."""


class FencedLocalProcessSpawner(LocalProcessSpawner):  # type: ignore[misc]
    """``LocalProcessSpawner`` whose servers start inside their account's GPU devices group."""

    port: int  # Spawner's traitlet (jupyterhub has no types)

    fence_gpus = Bool(True, config=True, help=(
        "Start each user's server in its account's devices group that denies every GPU but those of the "
        "user's granted kernel leases (red team 16, R1). False: servers open any GPU of this host."))

    pids_max = Int(4096, config=True, help=(
        "The most tasks (processes and threads) one account's notebook server, kernels and terminals hold together "
        "(cgroup v1 pids group jupyter_sched/servers/u<uid>; red32 R4: a fork loop in a cell could take every pid of "
        "the host, and then no job, kernel or database connection could start for anyone). Jobs are capped apart "
        "(c.SchedApp.job_pids_max, job_user_pids_max). 0: no cap."))

    async def start(self) -> tuple[str, int]:
        """Start the user's server as ``LocalProcessSpawner.start`` does — its command and args (``shell_cmd``
        around them), ``get_env()``, a new session, the account's home as working directory, ``popen_kwargs`` but
        those of :data:`_ROOT_STEP_KWARGS` — except that Popen's child stays root's until its execve of
        :data:`DROP_TO_SERVER`, after the fences' groups were entered (:meth:`root_preexec_fn`).

        Returns:
            ``(ip, port)`` the server listens on (``127.0.0.1`` where ``c.Spawner.ip`` is empty).

        Raises:
            KeyError: the user has no OS account on this host.
            subprocess.SubprocessError: a fence could not be entered (no server starts unfenced).
        """
        port = int(self.port) or random_port()  # as upstream: 0 = a free one
        self.port = port
        cmd = [*self.cmd, *self.get_args()]
        if self.shell_cmd:  # as upstream: our command as the last (single) argument of e.g. bash -c
            cmd = [*self.shell_cmd, " ".join(shlex.quote(s) for s in cmd)]
        self.log.info("Spawning %s", " ".join(shlex.quote(s) for s in cmd))
        name = self.user.name
        entry = pwd.getpwnam(name)
        groups = os.getgrouplist(name, entry.pw_gid)
        ignored = sorted(set(self.popen_kwargs) & _ROOT_STEP_KWARGS)
        if ignored:
            self.log.warning("jupyter_sched: c.LocalProcessSpawner.popen_kwargs %s ignored: the fenced spawner sets "
                             "them itself (%s's server starts as root and becomes the account after Popen returned)",
                             ", ".join(ignored), name)
        kwargs: dict[str, Any] = {"start_new_session": True}  # as upstream: the hub's signals are not the server's
        kwargs.update({k: v for k, v in self.popen_kwargs.items() if k not in _ROOT_STEP_KWARGS})
        env_fd = _environment_fd(self.get_env())
        try:
            self.proc = Popen(server_argv(entry.pw_uid, entry.pw_gid, groups, env_fd, entry.pw_dir or "/", cmd),
                              preexec_fn=self.root_preexec_fn(name), pass_fds=(env_fd,), env={}, **kwargs)
        finally:
            os.close(env_fd)
        self.pid = self.proc.pid
        return (self.ip or "127.0.0.1", port)

    def root_preexec_fn(self, name: str) -> Callable[[], None] | None:
        """What Popen's child runs as root before its execve of the root step: enter ``name``'s account's devices
        group (unless ``fence_gpus`` is False or the host has none: said) and pids group (``pids_max``). Nothing of
        the account runs in it. None: nothing to enter."""
        steps = [step for step in (self._tasks_enter(name), self._devices_enter(name)) if step is not None]
        if not steps:
            return None

        def preexec() -> None:
            for step in steps:
                step()

        return preexec

    def _devices_enter(self, name: str) -> Callable[[], None] | None:
        if not self.fence_gpus:
            self.log.warning("jupyter_sched: %s: c.FencedLocalProcessSpawner.fence_gpus is False; %s's server "
                             "can open any GPU of this host", NOT_FENCED, name)
            return None
        problem = server_fence_problem()
        if problem is not None:
            self.log.warning("jupyter_sched: %s: %s; %s's server can open any GPU of this host", NOT_FENCED,
                             problem, name)
            return None
        return ServerFence().enter_fn(pwd.getpwnam(name).pw_uid)

    def _tasks_enter(self, name: str) -> Callable[[], None] | None:
        """Entering the account's servers' pids group (where the host has a writable cgroup v1 pids controller;
        else said once per spawn and None)."""
        if self.pids_max <= 0:
            return None
        try:
            enter = server_tasks_enter_fn(pwd.getpwnam(name).pw_uid, int(self.pids_max))
        except OSError as exc:
            self.log.warning("jupyter_sched: %s's server is not capped in tasks (%s)", name, exc)
            return None
        if enter is None:
            self.log.warning("jupyter_sched: %s's server is not capped in tasks: this host has no writable cgroup v1 "
                             "pids controller (c.FencedLocalProcessSpawner.pids_max)", name)
        return enter


def server_argv(uid: int, gid: int, groups: list[int], env_fd: int, home: str, cmd: list[str]) -> list[str]:
    """The root step's command line (:data:`DROP_TO_SERVER`): the hub's interpreter, isolated, then the account's ids,
    the environment's descriptor, its home and the server's ``cmd``."""
    code = DROP_TO_SERVER.replace(" os.execvpe", f" {_AFTER_DROP_FOR_TESTS}\n os.execvpe") if _AFTER_DROP_FOR_TESTS \
        else DROP_TO_SERVER
    return [sys.executable, "-I", "-S", "-c", code, str(uid), str(gid), ",".join(str(g) for g in groups),
            str(env_fd), home, *cmd]


def _environment_fd(env: Mapping[str, str]) -> int:
    """A memory file (close-on-exec; Popen's ``pass_fds`` hands it to the root step alone) holding ``env`` as JSON,
    read from its start. Out of band so no variable of it is in the root step's own environment."""
    fd = os.memfd_create("jupyter-sched-server-env")
    try:
        data = memoryview(json.dumps(dict(env)).encode())  # lone surrogates (undecodable bytes) go as \\udcXX: kept
        while data:
            data = data[os.write(fd, data):]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
