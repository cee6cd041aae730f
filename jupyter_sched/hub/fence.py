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
"""

from __future__ import annotations

import pwd
from collections.abc import Callable

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Bool, Int

from ..executors.server_fence import NOT_FENCED, ServerFence, server_fence_problem, server_tasks_enter_fn

__all__ = ["FencedLocalProcessSpawner"]


class FencedLocalProcessSpawner(LocalProcessSpawner):  # type: ignore[misc]
    """``LocalProcessSpawner`` whose servers start inside their account's GPU devices group."""

    fence_gpus = Bool(True, config=True, help=(
        "Start each user's server in its account's devices group that denies every GPU but those of the "
        "user's granted kernel leases (red team 16, R1). False: servers open any GPU of this host."))

    pids_max = Int(4096, config=True, help=(
        "The most tasks (processes and threads) one account's notebook server, kernels and terminals hold together "
        "(cgroup v1 pids group jupyter_sched/servers/u<uid>; red32 R4: a fork loop in a cell could take every pid of "
        "the host, and then no job, kernel or database connection could start for anyone). Jobs are capped apart "
        "(c.SchedApp.job_pids_max, job_user_pids_max). 0: no cap."))

    def make_preexec_fn(self, name: str) -> Callable[[], None]:
        setuid = self._tasks_capped(name, super().make_preexec_fn(name))
        if not self.fence_gpus:
            self.log.warning("jupyter_sched: %s: c.FencedLocalProcessSpawner.fence_gpus is False; %s's server "
                             "can open any GPU of this host", NOT_FENCED, name)
            return setuid
        problem = server_fence_problem()
        if problem is not None:
            self.log.warning("jupyter_sched: %s: %s; %s's server can open any GPU of this host", NOT_FENCED,
                             problem, name)
            return setuid
        enter = ServerFence().enter_fn(pwd.getpwnam(name).pw_uid)

        def preexec() -> None:
            enter()  # as root, before the account's first instruction
            setuid()

        return preexec

    def _tasks_capped(self, name: str, then: Callable[[], None]) -> Callable[[], None]:
        """``then`` preceded, in the child as root, by entering the account's servers' pids group (where the host has
        a writable cgroup v1 pids controller; else said once per spawn and ``then`` as it is)."""
        if self.pids_max <= 0:
            return then
        try:
            enter = server_tasks_enter_fn(pwd.getpwnam(name).pw_uid, int(self.pids_max))
        except OSError as exc:
            enter = None
            self.log.warning("jupyter_sched: %s's server is not capped in tasks (%s)", name, exc)
        if enter is None:
            self.log.warning("jupyter_sched: %s's server is not capped in tasks: this host has no writable cgroup v1 "
                             "pids controller (c.FencedLocalProcessSpawner.pids_max)", name)
            return then
        entered: Callable[[], None] = enter

        def preexec() -> None:
            entered()
            then()

        return preexec
