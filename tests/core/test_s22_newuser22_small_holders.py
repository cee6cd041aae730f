"""New user 22 (small items): a capacity wait said ``it can start when cv's jobs free 1 GPU`` when
what cv held was a kernel's ``%gpu`` lease. The holders are now said by what they are: ``cv's
kernel leases``, ``cv's jobs or kernel leases`` when both hold GPUs, ``cv's jobs`` as before."""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.model.job import JobKind
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason


def _lease(job_id: str, **kw: object) -> object:
    job = make_job(job_id, **kw)  # type: ignore[arg-type]
    return replace(job, spec=replace(job.spec, kind=JobKind.LEASE))


@pytest.mark.parametrize(("kinds", "want"), [
    (("lease", "lease"), "cv's kernel leases free 1 GPU"),
    (("lease", "job"), "cv's jobs or kernel leases free 1 GPU"),
    (("job", "job"), "cv's jobs free 1 GPU"),
], ids=["kernel leases only: said as such", "both: both said", "jobs only: as before"])
def test_s22_newuser22_small_capacity_wait_names_the_holders_that_are_there(kinds: tuple[str, str], want: str) -> None:
    q = quotas(Quota(team="cv", guaranteed=2, borrowing_limit=0), Quota(team="ml", guaranteed=1, borrowing_limit=1))
    holders = [running((_lease if kind == "lease" else make_job)(f"cv{i}", gpus=1, team="cv", user="root"),  # type: ignore[operator]
                       "n1", [i]) for i, kind in enumerate(kinds)]
    jobs = [*holders, running(make_job("ml1", gpus=1, team="ml", user="ana"), "n1", [2]),
            make_job("ml2", gpus=1, team="ml", user="ana", submitted=5)]
    result = run_cycle(snapshot([make_node("n1", gpus=3)], jobs, quota=q))
    reason = next(p.reason for p in result.pending if p.job_id == "ml2")
    text = render_reason(reason_to_dict(reason)).summary  # type: ignore[arg-type]
    assert f"it can start when {want}" in text, text
