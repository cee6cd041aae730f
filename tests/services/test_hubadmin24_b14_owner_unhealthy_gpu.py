"""Hubadmin24 B14, the owner's half: a GPU an admin marks unhealthy (``healthy: false``, "ECC errors, RMA")
under a running job was said to admins only (session 24: a WARNING and admins' ``GET inventory``
warnings); the job's owner, whose work may now fail or slow down, was told nothing. Now the job's answer
carries ``unhealthy_gpus`` (typed: uuid, index, node, reason, since, text) for its owner and admins —
``GET jobs/{id}``, ``GET jobs`` and their own queue lines — and the CLI's ``status JOB``, ``jupyter-sched
status`` and the magics' job views say its one sentence; another user's view of the job does not.
"""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.services.models import GetQueueRequest, ListJobsRequest
from jupyter_sched.wording.jobs import job_line, unhealthy_text
from jupyter_sched.wording.status import status_lines
from tests.services.test_s24_hubadmin24_b14_unhealthy_under_work import MARKED, two_jobs_on_n2

SENTENCE = ("GPU 0 (GPU-n2-0) on n2 is unhealthy (ECC errors, RMA): the work runs on there, but may fail or slow "
            "down; if it does, cancel and resubmit it (nothing new is placed on that GPU)")


def test_hubadmin24_b14_owner_sees_the_gpu_that_turned_unhealthy_under_their_job(tmp_path: Path) -> None:
    services, nodes = two_jobs_on_n2(tmp_path)
    try:
        owner, other = services.caller("ha24s", admin=False), services.caller("ha24t", admin=False)
        boss = services.caller("boss", admin=True)
        before = services.jobs.get(owner, "j-s").to_wire()
        assert before.get("unhealthy_gpus") is None  # healthy: nothing said

        nodes.write_text(MARKED)  # the admin marks it out of service for an RMA
        services.ctx.inventory_source.invalidate()
        mine = services.jobs.get(owner, "j-s").to_wire()
        page = services.jobs.list(owner, ListJobsRequest()).to_wire()
        queue = services.jobs.queue_page(owner, GetQueueRequest()).to_wire()
        theirs = services.jobs.queue_page(other, GetQueueRequest()).to_wire()
        admin = services.jobs.get(boss, "j-s").to_wire()
    finally:
        services.store.close()

    want = [{"uuid": "GPU-n2-0", "index": 0, "node": "n2", "reason": "ECC errors, RMA", "since": None,
             "text": SENTENCE}]
    assert mine["unhealthy_gpus"] == want
    assert admin["unhealthy_gpus"] == want
    rows = {row["id"]: row for row in page["jobs"]}
    assert rows["j-s"]["unhealthy_gpus"] == want
    lines = {row["id"]: row for row in queue["entries"]}
    assert lines["j-s"]["unhealthy_gpus"] == want
    # the other user's own job is on the healthy GPU; the owner's line, as they see it, says nothing of it
    others = {row["id"]: row for row in theirs["entries"]}
    assert others["j-s"].get("unhealthy_gpus") is None and others["j-t"].get("unhealthy_gpus") is None
    # the words: `status JOB` (job_line), `jupyter-sched status` (my work), the magics' job views (unhealthy_text)
    assert unhealthy_text(mine) == SENTENCE
    assert job_line(mine, None).endswith(f"· {SENTENCE}"), job_line(mine, None)
    summary = status_lines("http://x/", {"mode": "embedded"}, {"user": "ha24s"}, {"gpus": [], "nodes": []},
                           running=[mine], gone=[mine])
    assert f"{'':<11}j-s: {SENTENCE}" in summary, summary
