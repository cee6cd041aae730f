"""Session 21's note: if giving a job's token Secret its owner reference failed (the merge patch refused:
RBAC without ``patch``, an admission webhook), the Secret outlived a job that ended on its own — only
``stop`` deleted it, and the garbage collector never would (it has no owner). Now every end deletes it,
owned or not, idempotently (a Secret already gone is fine): a job that succeeded or failed, one stopped
(cancelled or preempted), one whose Job was deleted outside jupyter_sched, and one a restarted executor
finds ended (its Job finished unwatched, or gone).

Through ``fake_apiserver.FakeKubernetes``, the Kubernetes API double of tests/kube (real REST JSON to the
official client; see test_s21_job_token_secret.py), with the owner-reference PATCH of every Secret
refused 403 as the API server refuses a verb RBAC does not grant.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from kubernetes import client

from jupyter_sched.executors.base import ExecutorEvent, ExecutorHandle, Exited, Lost, Started
from jupyter_sched.executors.kubernetes import KubernetesExecutor
from jupyter_sched.executors.kubernetes.job_secret import secret_name
from jupyter_sched.model import Job, JobState

from .fake_apiserver import FakeKubernetes, status_obj
from .kube_builders import allocation, make_job
from .test_integration import NS, _executor, of, poll_until
from .test_s21_job_token_secret import URL, _token


def _with_tokens(ex: KubernetesExecutor) -> KubernetesExecutor:
    ex.job_env = lambda job: {"JUPYTER_SCHED_URL": URL, "JUPYTER_SCHED_JOB_TOKEN": _token(job)}
    return ex


@pytest.fixture
def executor(api_client: client.ApiClient) -> Iterator[KubernetesExecutor]:
    ex = _with_tokens(_executor(api_client))
    yield ex
    ex.detach()


def refuse_secret_patches(fake: FakeKubernetes) -> None:
    """Every PATCH of a Secret is refused as RBAC without ``patch`` on secrets refuses it."""
    def refuse(plural: str, name: str, patch: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        if plural != "secrets":
            return None
        return 403, status_obj(403, "Forbidden", f'secrets "{name}" is forbidden: User "system:serviceaccount:hub:'
                                                 f'jupyter-sched" cannot patch resource "secrets" in API group "" in '
                                                 f'the namespace "{NS}"')

    fake.patch_hooks.append(refuse)


@dataclass(frozen=True)
class World:
    """What an end path may use: the fake cluster, the executor that started the job, and a new one."""

    fake: FakeKubernetes
    executor: KubernetesExecutor
    restarted: Callable[[], KubernetesExecutor]


def _succeeds(w: World, job: Job, handle: ExecutorHandle) -> list[ExecutorEvent]:
    w.fake.finish_job(NS, f"js-{job.id}")
    return poll_until(w.executor, lambda evs: bool(of(Exited, evs)))


def _fails(w: World, job: Job, handle: ExecutorHandle) -> list[ExecutorEvent]:
    w.fake.finish_job(NS, f"js-{job.id}", exit_code=3)
    return poll_until(w.executor, lambda evs: bool(of(Exited, evs)))


def _preempted(w: World, job: Job, handle: ExecutorHandle) -> list[ExecutorEvent]:
    w.executor.stop(job.id, grace_s=30, reason="preempted by bob's high job")  # as the engine stops a victim
    return poll_until(w.executor, lambda evs: bool(of(Exited, evs)))


def _deleted_outside(w: World, job: Job, handle: ExecutorHandle) -> list[ExecutorEvent]:
    w.fake.handle_delete("jobs", NS, f"js-{job.id}", "Background")  # kubectl delete job: its pods go too
    return poll_until(w.executor, lambda evs: bool(of(Lost, evs)))


def _ended_while_down(w: World, job: Job, handle: ExecutorHandle) -> list[ExecutorEvent]:
    w.executor.detach()  # the server stops; the job finishes unwatched
    w.fake.finish_job(NS, f"js-{job.id}")
    ended = w.restarted().adopt(job.transition(JobState.RUNNING), handle)
    return [ended] if ended is not None else []


def _gone_while_down(w: World, job: Job, handle: ExecutorHandle) -> list[ExecutorEvent]:
    w.executor.detach()  # the server stops; its finished Job is removed (ttlSecondsAfterFinished) meanwhile
    w.fake.finish_job(NS, f"js-{job.id}")
    w.fake.handle_delete("jobs", NS, f"js-{job.id}", "Background")
    ended = w.restarted().adopt(job.transition(JobState.RUNNING), handle)
    return [ended] if ended is not None else []


ENDS: list[tuple[str, Callable[[World, Job, ExecutorHandle], list[ExecutorEvent]], type]] = [
    ("a job that succeeds deletes its Secret", _succeeds, Exited),
    ("a job that fails deletes its Secret", _fails, Exited),
    ("a preempted (stopped) job deletes its Secret", _preempted, Exited),
    ("a job whose Job is deleted outside jupyter_sched deletes its Secret", _deleted_outside, Lost),
    ("a job found finished after a restart deletes its Secret", _ended_while_down, Exited),
    ("a job found gone after a restart deletes its Secret", _gone_while_down, Lost),
]


@pytest.mark.parametrize(("end", "want"), [c[1:] for c in ENDS], ids=[c[0] for c in ENDS])
def test_s22_k8s_every_end_deletes_the_job_secret_when_its_owner_patch_was_refused(
        fake: FakeKubernetes, api_client: client.ApiClient, executor: KubernetesExecutor,
        caplog: pytest.LogCaptureFixture, end: Callable[[World, Job, ExecutorHandle], list[ExecutorEvent]],
        want: type) -> None:
    refuse_secret_patches(fake)
    job = make_job("j-end", gpus=1)
    name = secret_name(job.id)
    restarted: list[KubernetesExecutor] = []

    def restart() -> KubernetesExecutor:
        restarted.append(_with_tokens(_executor(api_client)))
        return restarted[-1]

    with caplog.at_level(logging.WARNING, logger="jupyter_sched.executors.kubernetes.executor"):
        handle = executor.start(job, allocation("g1"))
    secret = fake.get("secrets", NS, name)
    assert secret is not None and not secret["metadata"].get("ownerReferences"), "the patch was refused: no owner"
    assert any("has no owner" in r.getMessage() and "when the job ends" in r.getMessage() for r in caplog.records)
    fake.run_job(NS, f"js-{job.id}")
    poll_until(executor, lambda evs: bool(of(Started, evs)))
    try:
        events = end(World(fake, executor, restart), job, handle)
        assert of(want, events), events
        assert fake.get("secrets", NS, name) is None, "the token's Secret went with its job (failed before)"
        assert [d for d in fake.deletions if d[0] == "secrets"] == [("secrets", NS, name, "Background")]
        for ex in (executor, *restarted):  # idempotent: later polls and a second end find nothing to do
            ex.poll()
        assert (restarted[0] if restarted else executor).adopt(job.transition(JobState.RUNNING), handle) is not None
        assert len([d for d in fake.deletions if d[0] == "secrets"]) == 1
    finally:
        for ex in restarted:
            ex.detach()


def test_s22_k8s_the_end_deletes_an_owned_secret_too_and_a_new_run_gets_its_own(
        fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    """With the patch granted the Secret is owned (the garbage collector would delete it with the finished
    Job, after its TTL); the job's end deletes it at once all the same, and a requeued run starts with a
    new one."""
    job = make_job("j-owned", gpus=1)
    executor.start(job, allocation("g1"))
    owned = fake.get("secrets", NS, secret_name(job.id))
    assert owned is not None and owned["metadata"]["ownerReferences"]
    fake.run_job(NS, "js-j-owned")
    poll_until(executor, lambda evs: bool(of(Started, evs)))
    fake.handle_delete("jobs", NS, "js-j-owned", "Orphan")  # deleted outside, leaving its dependents
    poll_until(executor, lambda evs: bool(of(Lost, evs)))
    assert fake.get("secrets", NS, secret_name(job.id)) is None
    again = replace(job, attempts=2)
    executor.start(again, allocation("g1"))
    assert fake.get("secrets", NS, secret_name(job.id)) is not None, "the next run's Secret"
