"""A page kept by the services while its jobs are unchanged is serialised once for every poller
(issue 17: fifty panels' identical pages were each written to JSON on the event loop)."""

from __future__ import annotations

from typing import Any

from jupyter_sched.extension import web
from jupyter_sched.services import models

from .conftest import wait_for


async def test_each_page_object_is_written_once_however_many_pollers_get_it(sched_app: Any, api: Any,
                                                                           monkeypatch: Any) -> None:
    written: list[int] = []
    pages: list[Any] = []
    real_serialised, real_page = web._serialised, sched_app.services.jobs.queue_page

    def counting(answer: Any) -> bytes:
        if isinstance(answer, models.GetQueueResponse):
            written.append(id(answer))
        return real_serialised(answer)

    def page(*args: Any, **kwargs: Any) -> Any:
        pages.append(real_page(*args, **kwargs))
        return pages[-1]

    monkeypatch.setattr(web, "_serialised", counting)
    monkeypatch.setattr(sched_app.services.jobs, "queue_page", page)
    for i in range(6):
        if i == 3:
            status, _ = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": "changes-it"})
            assert status == 201
        status, _ = await api("GET", "queue", params={"limit": "5"})
        assert status == 200
    distinct = {id(p.entries) for p in pages}
    assert 2 <= len(distinct) < 6, "kept pages are the same object; the submit made a new one"
    assert sorted(written) == sorted(distinct), "each distinct page written once, the same page never twice"


def test_a_kept_page_stays_written_while_many_other_answers_are_written_between(monkeypatch: Any) -> None:
    """Under load every poller's ``GET me`` and every submit answer is a new object written once;
    they must not push a page the services keep out of the table (a 16-slot list did: a 50-job
    page was serialised again for nearly every poller)."""
    written: list[str] = []
    real_wire = models.wire_json

    def counting(answer: Any) -> bytes:
        written.append(answer.text)
        return real_wire(answer)

    monkeypatch.setattr(web, "wire_json", counting)
    kept = models.GetJobLogsResponse(text="kept page", offset=0, next_offset=9, finished=True)
    body = web._written(kept)
    for i in range(100):  # more one-off answers than any fixed number of slots would hold
        web._written(models.GetJobLogsResponse(text=f"one-off {i}", offset=0, next_offset=9, finished=True))
    assert web._written(kept) is body
    assert written.count("kept page") == 1 and len(written) == 101


def test_a_written_answer_leaves_the_table_when_it_is_freed() -> None:
    """The table holds the JSON of live answers only: an answer nobody keeps takes its entry with
    it, so a later object that reuses its id is never given its body."""
    answer = models.GetJobLogsResponse(text="ivan's output", offset=0, next_offset=13, finished=True)
    body = web._written(answer)
    assert web._written(answer) is body
    key = id(answer)
    del answer
    assert key not in web._WRITTEN
    other = models.GetJobLogsResponse(text="judy's output", offset=0, next_offset=13, finished=True)
    assert b"judy" in web._written(other).data and b"ivan" not in web._written(other).data


async def test_a_new_queue_page_writes_only_its_new_lines_and_the_same_bytes_as_pydantic(
        sched_app: Any, api: Any, monkeypatch: Any) -> None:
    """Queue lines are kept by the service while their job is unchanged and shared by every page
    that shows them: a page is their kept JSON joined — byte for byte what pydantic writes for
    the whole page — so a page after one submit serialises its new lines only (by identity: a
    cycle in between may re-word every line, and then every line is new)."""
    for i in range(3):
        status, _ = await api("POST", "jobs", {"gpus": 4, "command": ["sleep", "30"], "name": f"q{i} · ünïcode"})
        assert status == 201
    jobs = sched_app.services.jobs
    caller = sched_app.services.caller("ivan", admin=False)
    first = jobs.queue_page(caller, models.GetQueueRequest()).entries
    assert web._written(first).data == first.model_dump_json(exclude_unset=True).encode()
    status, _ = await api("POST", "jobs", {"gpus": 4, "command": ["sleep", "30"], "name": "the-new-one"})
    assert status == 201
    written: list[str] = []
    real_wire = models.wire_json

    def counting(answer: Any) -> bytes:
        written.append(answer.name if isinstance(answer, models.QueueEntry) else type(answer).__name__)
        return real_wire(answer)

    monkeypatch.setattr(web, "wire_json", counting)
    second = jobs.queue_page(caller, models.GetQueueRequest()).entries
    assert second is not first and "the-new-one" in [e.name for e in second.root]
    new_lines = [e.name for e in second.root if not any(e is old for old in first.root)]
    assert web._written(second).data == second.model_dump_json(exclude_unset=True).encode()
    assert sorted(written) == sorted(new_lines), "only the lines the first page did not show are serialised"


async def test_a_jobs_page_reuses_unchanged_rows_and_never_another_viewers(sched_app: Any, api: Any) -> None:
    """``GET jobs`` rows are kept per job and per view, as queue lines are: a page after a submit
    reuses the rows of jobs that did not change (same objects, so their JSON is written once),
    while an admin's view of ivan's jobs is its own rows — ``mine`` false — never the rows ivan
    was given. (Ended jobs: their rows can no longer change, so reuse is certain.)"""
    ids = []
    for i in range(3):
        status, job = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": f"r{i}"})
        assert status == 201
        ids.append(job["id"])
    for job_id in ids:
        status, _ = await api("DELETE", f"jobs/{job_id}")
        assert status == 200

    async def ended() -> bool:
        _, rows = await api("GET", "jobs", params={"state": "cancelled"})
        return len(rows) == 3

    await wait_for(ended)
    jobs = sched_app.services.jobs
    ivan = sched_app.services.caller("ivan", admin=False)
    boss = sched_app.services.caller("boss", admin=True)
    first = jobs.list(ivan, models.ListJobsRequest(limit=10)).jobs
    status, _ = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": "r-new"})
    assert status == 201
    second = jobs.list(ivan, models.ListJobsRequest(limit=10)).jobs
    assert second is not first and [j.name for j in second.root] == ["r-new", "r2", "r1", "r0"]
    assert all(new is old for new, old in zip(second.root[1:], first.root, strict=True)), "unchanged rows reused"
    assert web._written(second).data == second.model_dump_json(exclude_unset=True).encode()
    everyone = jobs.list(boss, models.ListJobsRequest(limit=10, all=True)).jobs
    own = {j.id: j for j in second.root}
    seen = [row for row in everyone.root if row.id in own]
    assert len(seen) == 4 and all(row is not own[row.id] and not row.mine and own[row.id].mine for row in seen)
    assert b'"mine":true' not in web._written(everyone).data
