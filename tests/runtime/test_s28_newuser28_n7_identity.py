"""New user 28, N7: a job had no ``USER`` or ``LOGNAME`` (nor ``SHELL``) when the server that ran it had
none — a launcher's ``/scratch/$USER/run1`` became ``/scratch//run1``, every user's runs in one folder.
Embedded jobs now get the service account's, as login(1), sshd and Slurm set them (a hub's get the
owner's: :func:`jupyter_sched.executors.runas.clean_environment`); a Kubernetes pod gets its owner's."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.kubernetes import KubernetesConfig
from jupyter_sched.executors.kubernetes.manifests import make_job_manifest
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.runas import RunAs
from jupyter_sched.model import Allocation
from tests.kube.kube_builders import allocation as kube_allocation
from tests.kube.kube_builders import make_job as kube_job
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import wait_event

ME = pwd.getpwuid(os.geteuid())


def test_newuser28_n7_an_embedded_job_gets_user_logname_and_shell_of_its_account(tmp_path: Path) -> None:
    script = tmp_path / "userdir.sh"
    script.write_text('#!/bin/sh\necho "out=/scratch/$USER/run1 USER=$USER LOGNAME=$LOGNAME SHELL=$SHELL HOME=$HOME"\n',
                      encoding="utf-8")
    script.chmod(0o755)
    bare = {k: v for k, v in os.environ.items() if k not in ("USER", "LOGNAME", "SHELL", "HOME")}
    ex = LocalExecutor(tmp_path / "jobs", base_env=bare)  # a server started with none of them (a container's)
    job = make_job("j-n7", command=(str(script),), working_dir=str(tmp_path))
    ex.start(job, Allocation("local", ()))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0
    log = ex.logs(job.id)[0]
    shell = ME.pw_shell or "/bin/sh"
    assert (f"out=/scratch/{ME.pw_name}/run1 USER={ME.pw_name} LOGNAME={ME.pw_name} SHELL={shell} "
            f"HOME={ME.pw_dir or '/'}") in log, log


def test_newuser28_n7_a_server_shell_and_home_are_kept_user_is_the_account(tmp_path: Path) -> None:
    """A SHELL and HOME the server has are the user's own choice and stay; USER always names the
    account that runs the job (a stale ``USER`` after ``su`` would name someone else)."""
    script = tmp_path / "who.sh"
    script.write_text('#!/bin/sh\necho "USER=$USER LOGNAME=$LOGNAME SHELL=$SHELL HOME=$HOME"\n', encoding="utf-8")
    script.chmod(0o755)
    env = {**os.environ, "USER": "someone-else", "LOGNAME": "someone-else", "SHELL": "/bin/zsh-of-mine",
           "HOME": str(tmp_path)}
    ex = LocalExecutor(tmp_path / "jobs", base_env=env)
    job = make_job("j-n7b", command=(str(script),), working_dir=str(tmp_path))
    ex.start(job, Allocation("local", ()))
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0
    assert f"USER={ME.pw_name} LOGNAME={ME.pw_name} SHELL=/bin/zsh-of-mine HOME={tmp_path}" in ex.logs(job.id)[0]


def test_newuser28_n7_a_kubernetes_pod_names_its_owner_in_user_and_logname() -> None:
    config = KubernetesConfig(namespace="team-ml", allowed_images=("pytorch:2.3",))
    job = kube_job("j1", user="ana")
    env = make_job_manifest(job, kube_allocation(), config)["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "USER", "value": "ana"} in env and {"name": "LOGNAME", "value": "ana"} in env, env
    mapped = make_job_manifest(job, kube_allocation(), config, run_as=RunAs(user="ana", account="ana.k", uid=1234))
    env = mapped["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "USER", "value": "ana.k"} in env and {"name": "LOGNAME", "value": "ana.k"} in env, env
