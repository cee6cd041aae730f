"""hubadmin26 B1: a drained node (``nodes drain … --evict-after``) — the owner of work about to be evicted was not
told on the job's own line: ``jobs`` read "ends by 21:36 UTC (in 2h59m)" and ``status JOB`` "running on node-a"
a minute before the stop; the ``node_cordoned`` audit row named no job or user.

Now every answer of work on a drained node carries ``drain`` ({node, by, reason, evict_at, text}), its ``text``
the one sentence of every surface (CLI ``jobs``/``status JOB``, ``%schedule``, the panel), "ends by" not said when
the stop comes first; and the drain writes one ``node_cordoned`` row per piece of work on the node, with its job
id and owner, so ``audit --job J`` / ``--user U`` show the announced stop. Real store, real job process.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone

from jupyter_sched.model.resources import Cordon
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, ListJobsRequest, SubmitJobRequest
from jupyter_sched.services.models.nodes import CordonNodeRequest
from jupyter_sched.wording import job_detail, job_line
from jupyter_sched.wording.cordons import drain_dict
from jupyter_sched.wording.jobs import ends_by
from tests.services.test_s25_drain_nodes import _tick_until

SAID = "vm is being drained by boss (BIOS update): this job is stopped at 12:10 UTC and requeued — checkpoint before then"


def test_s26_hubadmin26_b1_the_owner_reads_the_drain_on_the_jobs_own_line_and_in_the_audit(services: Services) -> None:
    ann, boss = services.caller("ann", admin=False), services.caller("boss", admin=True)
    sleeper = [sys.executable, "-c", "import time; time.sleep(300)"]
    job = services.jobs.submit(ann, SubmitJobRequest(gpus=1, command=sleeper, name="v-train", time_limit="3h"))
    _tick_until(services, "the job to run", lambda: services.jobs.get(ann, job.id).state == "running")
    assert services.jobs.get(ann, job.id).drain is None  # not drained: nothing

    services.nodes.cordon(boss, "vm", CordonNodeRequest(reason="BIOS update.", evict_after_s=600))
    now = services.clock.now()
    got = services.jobs.get(ann, job.id).model_dump(mode="json", exclude_none=True)
    assert {k: v for k, v in got["drain"].items() if k != "evict_at"} == {
        "node": "vm", "by": "boss", "reason": "BIOS update", "text": SAID}, got["drain"]
    assert got["drain"]["evict_at"].endswith("T12:10:00+00:00"), got["drain"]
    # status JOB and the jobs line: the drain, and no "ends by 15:00 UTC (in 3h00m)" beside it
    assert SAID in job_line(got, now), job_line(got, now)
    assert SAID in job_detail(got, now) and ends_by(got, now) == "", ends_by(got, now)
    (row,) = [r for r in services.jobs.list(ann, ListJobsRequest()).jobs.root if r.id == job.id]
    assert row.drain is not None and row.drain.text == SAID
    (queued,) = [r for r in services.jobs.queue(ann).root if r.id == job.id]
    assert queued.drain is not None and queued.drain.text == SAID

    mine = services.audit.list(boss, GetAuditRequest(job_id=job.id, action="node_cordoned")).root
    assert len(mine) == 1 and mine[0].user == "ann" and mine[0].actor == "boss", mine
    assert mine[0].message.startswith(f"{job.id} (job of ann) on node vm: stopped at "), mine[0].message
    assert [e.job_id for e in services.audit.list(boss, GetAuditRequest(user="ann", action="node_cordoned")).root] == [job.id]
    node_row = [e for e in services.audit.list(boss, GetAuditRequest(action="node_cordoned")).root if e.job_id is None]
    assert node_row[0].details["jobs"] == [{"id": job.id, "user": "ann"}], node_row[0].details


def test_s26_hubadmin26_b1_one_wording_for_a_lease_a_later_drain_and_a_past_one() -> None:
    at = datetime(2026, 12, 5, 18, 37, tzinfo=timezone.utc)
    cordon = Cordon(reason="PSU swap", by="boss", at=at, evict_at=at)
    before = datetime(2026, 12, 5, 18, 36, tzinfo=timezone.utc)
    assert drain_dict("node-c", cordon, "lease", now=before)["text"] == (
        "node-c is being drained by boss (PSU swap): this lease ends at 18:37 UTC — save your work before then")
    assert drain_dict("node-c", cordon, "job", now=at)["text"] == (
        "node-c is being drained by boss (PSU swap): this job was stopped at 18:37 UTC and requeued — it starts "
        "again elsewhere")
    # a drain after the job's own limit: "ends by" is said, the drain beside it
    job = {"state": "running", "started_at": "2026-12-05T18:00:00Z", "time_limit_s": 600, "kind": "batch",
           "drain": drain_dict("node-c", cordon, "job", now=before)}
    assert ends_by(job, before).startswith("ends by 18:10 UTC"), ends_by(job, before)
