"""New user 8 (session 8) findings on the REST service: inputs sibling fields refuse (N10), ..."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from .conftest import BOSS_TOKEN, JUDY_TOKEN, wait_for


async def test_newuser8_n10_team_names_in_put_quotas_follow_the_job_team_rules(sched_app: Any, api: Any) -> None:
    """``PUT quotas`` stored a team with U+202E and a 5,000-character team; a job's team refuses both."""
    cases = [
        ({"quotas": [{"team": "a\u202e", "guaranteed": 1}]}, "quotas[0].team", "U+202E"),
        ({"quotas": [{"team": "ok", "guaranteed": 0}, {"team": "x" * 5000, "guaranteed": 0}]},
         "quotas[1].team", "too long"),
        ({"budgets": [{"team": "b\u0007", "gpu_hours": 1}]}, "budgets[0].team", "U+0007"),
        ({"teams": [{"team": "t\u2066x"}]}, "teams[0].team", "U+2066"),
        ({"user_teams": {"ana": " "}}, "user_teams.ana", "empty"),
    ]
    for body, field, said in cases:
        status, answer = await api("PUT", "quotas", body, token=BOSS_TOKEN)
        assert status == 400, (body, answer)
        error = answer["error"]
        assert error["field"] == field and said in error["message"] and error["hint"], error
    status, answer = await api("GET", "quotas", token=BOSS_TOKEN)
    assert status == 200 and all(len(q["team"]) < 100 and "\u202e" not in q["team"] for q in answer["quotas"]), answer
    status, answer = await api("PUT", "quotas", {"quotas": [{"team": "ml-research 2", "guaranteed": 0}]},
                               token=BOSS_TOKEN)
    assert status == 200 and answer["quotas"][0]["team"] == "ml-research 2", answer


async def test_newuser8_n10_kernel_id_on_a_job_is_refused_as_for_leases_only(sched_app: Any, api: Any) -> None:
    status, answer = await api("POST", "jobs", {"gpus": 0, "command": ["true"], "kernel_id": "../../x"})
    assert status == 400, answer
    error = answer["error"]
    assert error["field"] == "kernel_id" and "is for leases" in error["message"] and error["hint"], error
    status, answer = await api("POST", "dryrun", {"gpus": 0, "command": ["true"], "kernel_id": "k"})
    assert status == 400 and answer["error"]["field"] == "kernel_id", answer


async def test_newuser8_n10_image_on_the_local_executor_is_accepted_with_a_warning(sched_app: Any, api: Any) -> None:
    status, answer = await api("POST", "jobs", {"gpus": 0, "command": ["true"], "image": "evil/img"})
    assert status == 201, answer
    assert any("image 'evil/img' is not used" in w and "local executor" in w for w in answer.get("warnings", [])), \
        answer
    status, answer = await api("POST", "jobs", {"gpus": 0, "command": ["true"]})
    assert status == 201 and not any("image" in w for w in answer.get("warnings", [])), answer


async def test_newuser8_n4_a_lease_granted_before_its_timeout_is_recorded_as_a_plain_release(
        sched_app: Any, api: Any) -> None:
    """A lease granted at once and released 13 s later with ``why=timeout&timeout_s=30`` was recorded
    "released by …: granted only after its 30s timeout had passed" — both halves false."""
    status, lease = await api("POST", "leases", {"gpus": 1})
    assert status == 201, lease
    granted = await wait_for(lambda: _state(api, lease["id"], "running", "admitted"))
    assert granted["admitted_at"] is not None, granted
    status, gone = await api("DELETE", f"leases/{lease['id']}", params={"why": "timeout", "timeout_s": "30"})
    assert status == 200 and gone["message"] == "released by ivan", gone
    status, audit = await api("GET", "audit", params={"action": "cancel"}, token=BOSS_TOKEN)
    said = [e["message"] for e in (audit if isinstance(audit, list) else audit.get("events", []))
            if e.get("job_id") == lease["id"]]
    assert said == ["released by ivan"], audit
    # a grant that came only after the timeout keeps the client's cause (the lease's own times say so)
    status, late = await api("POST", "leases", {"gpus": 1})
    await wait_for(lambda: _state(api, late["id"], "running", "admitted"))
    with sched_app.services.ctx.store.transaction() as tx:
        record = tx.get_job(late["id"])
        job = record.job
        tx.update_job(replace(record, job=replace(job, submitted_at=job.admitted_at - timedelta(seconds=31))))
    status, gone = await api("DELETE", f"leases/{late['id']}", params={"why": "timeout", "timeout_s": "30"})
    assert status == 200 and gone["message"] == "released by ivan: granted only after its 30s timeout had passed", gone


async def _state(api: Any, job_id: str, *states: str, path: str = "leases") -> Any:
    status, job = await api("GET", f"{path}/{job_id}")
    return job if status == 200 and job["state"] in states else None


async def test_newuser8_n8_a_service_on_a_port_another_live_service_has_is_warned_at_submit(
        sched_app: Any, api: Any) -> None:
    """Two `%schedule serve app.py --port 18878` 4 s apart were both accepted without a word; the
    second crash-looped on "Address already in use"."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    service = {"gpus": 0, "kind": "inference", "port": port, "command": ["python", "-c", "import time; time.sleep(60)"]}
    status, first = await api("POST", "jobs", {**service, "name": "first"})
    assert status == 201 and not first.get("warnings"), first
    status, second = await api("POST", "jobs", {**service, "name": "second"})
    assert status == 201, second
    said = second.get("warnings") or []
    assert any(f"port {port} is also the port of your service first ({first['id']})" in w for w in said), said
    status, judys = await api("POST", "jobs", {**service, "name": "judys"}, token=JUDY_TOKEN)
    assert status == 201 and any("another user's service" in w and first["id"] not in w
                                 for w in judys.get("warnings") or []), judys
    # red team 16, R8: another user's service is not judy's to cancel; the warning says what she can do
    assert any("cancel" not in w and "gives it up" in w for w in judys.get("warnings") or []), judys
    assert any(w.endswith("choose another port, or cancel that service") for w in said), said
    status, elsewhere = await api("POST", "jobs", {**service, "port": port + 1 if port < 65535 else port - 1,
                                                    "name": "other-port"})
    assert status == 201 and not elsewhere.get("warnings"), elsewhere


async def test_newuser8_n8_a_ready_service_that_crashes_stops_reading_ready_at_the_next_reconcile(
        sched_app: Any, api: Any, tmp_path: Any) -> None:
    """A ready service that crashed still read "ready on port P" until its restart, up to 60 s later.
    Its real process is killed here: the job says at once that it stopped answering and why, and
    "ready" again once the restarted process listens."""
    import os
    import signal
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    pids = tmp_path / "pids"
    pids.mkdir()
    app = (f"import os, socket, time, pathlib; s = socket.create_server(('127.0.0.1', {port})); "
           f"pathlib.Path({str(pids)!r}, str(os.getpid())).touch()\n"
           "while True: s.accept()[0].close()")
    status, job = await api("POST", "jobs", {"gpus": 1, "kind": "inference", "port": port, "name": "svc",
                                             "command": ["python", "-c", app]})
    assert status == 201, job

    async def says(prefix: str) -> Any:
        _, got = await api("GET", f"jobs/{job['id']}")
        return got if got["state"] == "running" and got["message"].startswith(prefix) else None

    await wait_for(lambda: says(f"ready on port {port}"))
    first = list(pids.iterdir())
    assert len(first) == 1, first
    os.kill(int(first[0].name), signal.SIGKILL)
    crashed = await wait_for(lambda: says(f"stopped answering on port {port}: it exited with code"), timeout_s=20)
    assert "restarting in 1 s" in crashed["message"], crashed
    await wait_for(lambda: says(f"ready on port {port}"))  # the restart serves again
    assert len(list(pids.iterdir())) == 2
    status, audit = await api("GET", "audit", params={"action": "not_ready"}, token=BOSS_TOKEN)
    events = audit if isinstance(audit, list) else audit.get("events", [])
    assert [e["message"] for e in events if e.get("job_id") == job["id"]] == [crashed["message"].replace(
        "stopped answering", "service stopped answering", 1)], audit


async def test_newuser8_n2_the_documented_unblock_field_says_what_reason_text_says(sched_app: Any, api: Any) -> None:
    """A job over its user's own cap: ``reason.unblock`` said "starts when default releases GPUs or an admin
    raises its quota" (the team is not what blocks) while ``reason.text.unblock`` named the user's cap."""
    status, me = await api("GET", "me")
    team = me["team"] if status == 200 and me.get("team") else "default"
    status, answer = await api("PUT", "quotas", {"quotas": [
        {"team": team, "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 0},
        {"team": team, "user": "ivan", "gpu_model": "*", "guaranteed": 1, "borrowing_limit": 0}]}, token=BOSS_TOKEN)
    assert status == 200, answer
    work = {"gpus": 1, "command": ["python", "-c", "import time; time.sleep(60)"]}
    status, first = await api("POST", "jobs", {**work, "name": "cap1"})
    assert status == 201, first
    await wait_for(lambda: _state(api, first["id"], "running", "admitted", path="jobs"))
    status, second = await api("POST", "jobs", {**work, "name": "cap2"})
    assert status == 201, second

    async def reasoned() -> Any:
        _, job = await api("GET", f"jobs/{second['id']}")
        reason = job.get("reason") or {}
        return reason if reason.get("code") and (reason.get("text") or {}).get("unblock") else None

    reason = await wait_for(reasoned)
    assert "ivan's cap" in reason["text"]["unblock"], reason
    assert reason["unblock"] == reason["text"]["unblock"], reason
    status, page = await api("GET", "queue")
    rows = page if isinstance(page, list) else page.get("jobs", [])
    row = next(r for r in rows if r["id"] == second["id"])
    assert row["reason"]["unblock"] == row["reason"]["text"]["unblock"], row
