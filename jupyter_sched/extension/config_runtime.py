"""Traitlets of where utilization samples come from and how work runs (see :mod:`.config`)."""

from __future__ import annotations

import os
from typing import Any

from traitlets import Dict, Enum, Float, Int, List, Unicode, validate
from traitlets.config import Configurable

from .config import config_error, positive

__all__ = ["ExecutorConfig", "TelemetryConfig"]


class TelemetryConfig(Configurable):
    """Where GPU utilization samples come from (idle reclamation and the panel's live charts)."""

    telemetry_source = Enum(
        ["auto", "simulated", "nvml", "dcgm", "prometheus", "off"],
        default_value="auto",
        config=True,
        help="""Telemetry collector. Default: "auto" = "simulated" for a simulated inventory
        (utilization derived from the jobs' real CPU activity), "nvml" for NVML GPUs, "dcgm" when
        telemetry_url is set, else "off". "dcgm" reads a dcgm-exporter /metrics URL (preferred on
        clusters: GR_ENGINE_ACTIVE works with MIG); "prometheus" queries a Prometheus
        server holding dcgm-exporter series.""",
    )

    telemetry_url = Unicode(
        "",
        config=True,
        help="""URL of the dcgm-exporter /metrics endpoint (telemetry_source "dcgm", e.g.
        http://127.0.0.1:9400/metrics, or file:///path/metrics.prom to read exposition text a
        node-exporter textfile collector or a capture writes) or of a Prometheus server
        ("prometheus", e.g. http://127.0.0.1:9090). Default: "" (none).""",
    )

    telemetry_uids = List(
        Int(),
        config=True,
        help="""A telemetry_url on a loopback address (127.0.0.1, ::1, localhost): uids besides root, this
        server's own account and the exporters' accounts (prometheus, nvidia-dcgm, dcgm-exporter, where
        they exist) that may hold it. Each connection is checked once made, before anything is sent, and
        one another account took (an unprivileged port, free while the exporter restarts) is refused:
        what it would report — Xid errors, 0 % or 100 % utilisation — is never believed (red team 31,
        R2). Default: [] (the exporter runs as root or one of those accounts).""",
    )

    telemetry_interval_s = Float(
        1.0,
        config=True,
        help="""Seconds between telemetry samples. Default: 1 s (NVML and dcgm-exporter update
        about once a second; faster only repeats values).""",
    )

    telemetry_push_interval_s = Float(
        1.0,
        config=True,
        help="""Seconds between "telemetry" events pushed to the event stream (panel charts).
        Default: 1 s.""",
    )

    @validate("telemetry_url")
    def _check_telemetry_url(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"])
        if value and not value.startswith(("http://", "https://", "file:///")):
            raise config_error("telemetry_url", value, "is not an http(s) or file:/// URL",
                               "use e.g. http://127.0.0.1:9400/metrics, file:///var/lib/node_exporter/dcgm.prom "
                               "(dcgm-exporter text read at each sample), or leave it empty")
        return value

    @validate("telemetry_interval_s")
    def _check_telemetry_interval(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0.1 <= value <= 3600:
            raise config_error("telemetry_interval_s", value, "must be 0.1..3600 seconds", "set e.g. 1")
        return value

    @validate("telemetry_push_interval_s")
    def _check_push_interval(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0.1 <= value <= 3600:
            raise config_error("telemetry_push_interval_s", value, "must be 0.1..3600 seconds", "set e.g. 1")
        return value


class ExecutorConfig(Configurable):
    """How admitted work is started, observed and stopped."""

    executor = Enum(
        ["local", "kubernetes"],
        default_value="local",
        config=True,
        help="""Executor for batch jobs. Default: "local" = subprocesses of this server in their
        own process group with CUDA_VISIBLE_DEVICES set to the allocated GPU UUIDs.
        "kubernetes" = each job becomes a batch/v1 Job requesting nvidia.com/gpu and pinned to
        the node the scheduler chose; the inventory then comes from the cluster's Node objects
        (see kubernetes and kubeconfig), so one server schedules a whole GPU cluster.""",
    )

    kubernetes = Dict(
        default_value={},
        config=True,
        help="""Kubernetes executor settings (executor "kubernetes" only), e.g.
        {"namespace": "jupyter-sched-work", "default_image": "python:3.12",
        "queue_manager": "none", "preemption_grace_s": 60}. Keys are the fields of
        jupyter_sched.executors.kubernetes.KubernetesConfig: namespace, namespace_per_user,
        user_namespace_prefix, queue_manager (none | kueue | volcano), kueue_queue, volcano_queue,
        default_image, image_pull_policy, service_account, ttl_seconds_after_finished (seconds),
        preemption_grace_s (seconds), gpu_taint_keys, priority_class_prefix, rendezvous_port,
        extra_labels, count_foreign_pods. Default: {} = every field's default (namespace
        "jupyter-sched-work", no default image: jobs must name one). Checked when the config
        loads, so a typo stops the server with the key and the fix.""",
    )

    kubeconfig = Unicode(
        "",
        config=True,
        help="""Path of the kubeconfig file the Kubernetes executor connects with (its current
        context). Default: "" = the in-cluster service account when the server runs in a pod
        (KUBERNETES_SERVICE_HOST set), else the official client's default, $KUBECONFIG or
        ~/.kube/config. Only read when executor is "kubernetes".""",
    )

    stop_grace_s = Float(
        10.0,
        config=True,
        help="""Seconds between SIGTERM and SIGKILL when a user cancels a job. Default: 10 s:
        long enough for a clean exit, short enough that cancel feels immediate.""",
    )

    service_listen_s = Float(
        600.0,
        config=True,
        help="""Local executor: seconds an inference service declaring a port may take to listen on it
        after its start; one that has not is stopped ("never listened on port P within 600 s"): a
        declared port is held on its node, and one never served is a squat (red team 16, R8). Applies
        until its first listen. Default: 600. 0 = never stopped for this.""",
    )

    service_relisten_s = Float(
        300.0,
        config=True,
        help="""Local executor: seconds a service that did listen on its port may go without listening
        again (a hot reload, a re-bind, a restart) before it is stopped, told when it stopped listening
        (red team 17, R12). Listening again for less than this does not renew the port: the time
        counts from the earlier stop (red team 18, R7). Default: 300. 0 = never stopped for this.""",
    )

    max_log_mib = Int(
        1024,
        config=True,
        help="""Local executor: the most of a job's output (stdout and stderr, output.log) kept, in MiB.
        Default: 1024. Past it the log keeps its first max_log_mib MiB and one last line "log truncated
        at … MiB (c.SchedApp.max_log_mib)"; the job keeps running, its further output is not kept. The service
        itself looks at each running job's log every tick and cuts it too, and ends a job that stops its own
        wrapper (which keeps the cap between looks); a running job's folder may hold as much beside its log
        (at least 64 MiB) and 10,000 files, or the job is ended (red30 R3). Why: job logs sit under log_dir,
        often on the disk of the store itself, and one job printing in a loop writes hundreds of MiB a second
        (red-team 15, R12). 0 = no cap.""",
    )

    retention_finished_jobs_per_user = Int(
        10_000,
        min=0,
        config=True,
        help="""Default: 10000. Finished jobs kept in the store per user at most: past it, that user's oldest
        finished jobs are pruned first, before retention_finished_jobs_days is up (one audit record
        "pruned" per run names the users and counts). Their GPU usage intervals are kept, so usage
        reports, budgets and fair share do not change. One user's loop of instant jobs can no longer
        grow the store without bound (red team 30, R4): it holds at most the users times this many finished
        jobs. 0 = no bound.""",
    )

    max_user_log_mib = Int(
        4096,
        config=True,
        help="""Local executor: the most of all of one user's job logs (output.log of every job kept under
        log_dir) kept, in MiB. Default: 4096. Before a job of that user is launched, their oldest finished
        jobs' logs are cut to their last 64 KiB (then to a first line only) until their logs, their running
        jobs' caps and max_log_mib for the new job fit; a job launched while the user's running jobs hold
        it all keeps 1 MiB of output. Each cut log's first line, and a capped job's last line, names this
        setting. Other users' logs are never cut. Why: each job keeps up to max_log_mib for
        retention_finished_jobs_days, and one user's small jobs filled the log disk in about a minute
        (verify27 V3). 0 = no total. Size log_dir's disk for users x this (20 users at the default: up
        to 80 GiB); `jupyter-sched doctor` says whether the disk holds it.""",
    )

    min_log_free_mib = Int(
        16,
        config=True,
        help="""Local executor: the least free space, in MiB, on the disk of a job's log folder (under
        log_dir) for the job to be launched. Default: 16. Below it the job is not started: it waits in
        the queue with the reason "the disk of the log folder … is full (… free)" and starts once space
        is freed; the service log says it once per folder. Why: on a full disk every job of that user
        failed at once with "exit code 120" (it could not write its output) and nobody was told
        (hubadmin25 B15); a run that fails on a full disk says so as its end. While the disk has less free, a
        running job is ended, one a tick, its end saying what it wrote, only when its own writes on that disk
        (log, folder, files it holds open there) are at least half of how far the disk's free space fell while
        the jobs there ran and it still writes there (1 MiB or more since the previous tick; red30 R3, red31
        R1); when none explain the fall, none is ended and the service log names the biggest writers once. Size it above what a job writes in its first minutes; max_log_mib bounds one
        job's log. 0 = no check.""",
    )

    job_pids_max = Int(
        4096,
        config=True,
        help="""Local executor: the most processes and threads one job may have at once (pids.max of its
        cgroup), its wrapper included. Default: 4096 — far above what a training job with data-loader
        workers uses, far below what takes a host down. Why: one job's fork bomb otherwise exhausts
        the host's process table, and every user's servers, kernels and jobs and this service with
        it (red-team 15, R9). Needs a pids cgroup controller (root, cgroup v1 or v2); `jupyter-sched
        doctor` says whether jobs get it. 0 = no limit.""",
    )

    job_user_pids_max = Int(
        8192,
        config=True,
        help="""Local executor: the most processes and threads all running jobs of one account may have
        at once (pids.max of a per-account cgroup above the jobs' own, job_pids_max). Default: 8192.
        Why: job_pids_max bounds one job, but one user's 8 CPU-only jobs of 4096 each are 32768 tasks,
        a whole kernel.pid_max, and fork() then fails host-wide (red team 16, R3). Needs a pids cgroup
        controller (root, cgroup v1). 0 = no per-account limit.""",
    )

    job_memory_mib = Int(
        0,
        config=True,
        help="""Local executor: the memory limit, in MiB, of a job that asks for no memory (memory_mib);
        a job that asks is limited to memory_mib times its workers. Default: 0 = no limit for those jobs:
        the scheduler does not place work by host memory, so a default would kill jobs that ran
        before; set it on a shared host (e.g. the host's memory divided by the jobs it runs at
        once). Past the limit the kernel's out-of-memory killer ends the job's largest process, and
        the job's reason says so. Needs a memory cgroup controller (root); `jupyter-sched doctor`
        says whether jobs get it.""",
    )

    @validate("job_pids_max")
    def _check_job_pids_max(self, proposal: dict[str, Any]) -> int:
        value = int(positive("job_pids_max", int(proposal["value"]), allow_zero=True, unit="processes"))
        if 0 < value < 16:  # the wrapper, a shell and the command already take a few
            raise config_error("job_pids_max", value, "must be 0 (no limit) or at least 16 processes",
                               "set 0 or a number >= 16 (default 4096)")
        return value

    @validate("job_user_pids_max")
    def _check_job_user_pids_max(self, proposal: dict[str, Any]) -> int:
        value = int(positive("job_user_pids_max", int(proposal["value"]), allow_zero=True, unit="processes"))
        if 0 < value < 16:
            raise config_error("job_user_pids_max", value, "must be 0 (no limit) or at least 16 processes",
                               "set 0 or a number >= 16 (default 8192)")
        return value

    @validate("job_memory_mib")
    def _check_job_memory_mib(self, proposal: dict[str, Any]) -> int:
        value = int(positive("job_memory_mib", int(proposal["value"]), allow_zero=True, unit="MiB"))
        if 0 < value < 64:  # the wrapper alone (a Python process) takes ~15 MiB
            raise config_error("job_memory_mib", value, "must be 0 (no limit) or at least 64 MiB",
                               "set 0 or a number >= 64 (MiB)")
        return value

    @validate("service_listen_s", "service_relisten_s")
    def _check_listen(self, proposal: dict[str, Any]) -> float:
        return positive(str(proposal["trait"].name), float(proposal["value"]), allow_zero=True)

    @validate("min_log_free_mib")
    def _check_min_log_free_mib(self, proposal: dict[str, Any]) -> int:
        return int(positive("min_log_free_mib", int(proposal["value"]), allow_zero=True, unit="MiB"))

    @validate("max_user_log_mib")
    def _check_max_user_log_mib(self, proposal: dict[str, Any]) -> int:
        return int(positive("max_user_log_mib", int(proposal["value"]), allow_zero=True, unit="MiB"))

    @validate("max_log_mib")
    def _check_max_log_mib(self, proposal: dict[str, Any]) -> int:
        return int(positive("max_log_mib", int(proposal["value"]), allow_zero=True, unit="MiB"))

    @validate("stop_grace_s")
    def _check_stop_grace(self, proposal: dict[str, Any]) -> float:
        return positive("stop_grace_s", float(proposal["value"]), allow_zero=True)

    @validate("kubernetes")
    def _check_kubernetes(self, proposal: dict[str, Any]) -> dict[str, Any]:
        from ..errors import ValidationError
        from ..executors.kubernetes.config import KubernetesConfig

        value = dict(proposal["value"])
        try:
            KubernetesConfig.from_dict(value)
        except ValidationError as err:
            key = err.field or "kubernetes"
            raise config_error(key, value.get(key.split(".", 1)[1]) if "." in key else value,
                               err.message, err.hint or "see the help of c.SchedApp.kubernetes") from None
        return value

    @validate("kubeconfig")
    def _check_kubeconfig(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"])
        if value and not os.path.isfile(os.path.expanduser(value)):
            raise config_error("kubeconfig", value, "no such file",
                               "give the path of an existing kubeconfig file, or leave it empty for "
                               "the in-cluster service account / ~/.kube/config")
        return value
