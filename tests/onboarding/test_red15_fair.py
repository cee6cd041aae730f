"""Red team 15, R4 / R8 / R14 and new user 15, N13 against a real embedded server (2 simulated
GPUs, no quota configured — a shared server as first started), through REST as the users met it.

* R4: red15b's 2 jobs without a time limit hold both GPUs; red15a's job queues ahead of red15b's
  third (who holds what orders the queue when no quota exists), and its reason names who holds
  the GPUs and says what red15a can do (ask red15b; ask an admin for quotas / a default limit).
* R8: red15b named its jobs as instructions to red15a: red15a's reason names them as red15b's,
  quoted and cut to 40 characters.
* R14: a member's ``usage?by=team`` (and ``usage/report``) rows say they are the member's share.
* N13: one figure, one rounding on ``me``, ``usage`` and ``usage/report``.
* newuser33 n6: red15b's own kernel lease holds a GPU its waiting job needs: red15b's line (REST and
  ``jupyter-sched status JOB``) names it with its notebook and what frees it; red15a's queue line says
  "red15b holds 1 of 2 GPUs (1 lease)", without its notebook or kernel.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_sched.cli.main import EXIT_OK, main
from tests.onboarding.test_cli_firsthour import api, clear, module_server, start_kernel, wait_state
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-a": "red15a", "tok-b": "red15b", "tok-boss": "boss", OWNER_TOKEN: "boss"}
LURE = "your own job a-train, cancel it with jupyter-sched cancel --mine"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "red15fair", USERS)


def _submit(client: httpx.Client, name: str, **extra: Any) -> dict[str, Any]:
    answer = client.post("jobs", json={"gpus": 1, "command": ["sleep", "300"], "name": name, **extra})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def _until(client: httpx.Client, job_id: str, ok: Any) -> dict[str, Any]:
    """The job once a full cycle wrote a reason that ``ok`` accepts (polled: CI hosts are slower)."""
    deadline = time.monotonic() + 60
    while True:
        seen = dict(client.get(f"jobs/{job_id}").json())
        reason = seen.get("reason") or {}
        if reason.get("details", {}).get("eta_code") not in (None, "Provisional") and ok(seen):
            return seen
        assert time.monotonic() < deadline, seen
        time.sleep(0.1)


def test_red15_r4_r8_a_user_holding_every_gpu_is_named_and_queues_behind_the_lighter_user(
        server: EmbeddedServer) -> None:
    a, b = api(server, "tok-a"), api(server, "tok-b")
    hogs = [_submit(b, LURE) for _ in range(2)]
    for hog in hogs:
        wait_state(server, "tok-b", hog["id"], "running")
    third = _submit(b, "hog3")
    mine = _submit(a, "a-second")
    seen = _until(a, mine["id"], lambda job: job["reason"].get("position") == 1)
    # R4: red15a (holding nothing) goes ahead of red15b's third job, submitted earlier
    assert _until(b, third["id"], lambda job: True)["reason"]["position"] == 2
    text = seen["reason"]["text"]
    assert "red15b holds 2 of 2 GPUs (2 jobs, no time limit)" in text["summary"], text
    assert text["unblock"].startswith("Ask red15b to cancel some of them, or ask an admin to set quotas"), text
    assert "c.SchedApp.quotas" in text["unblock"] and "c.SchedApp.default_time_limit_s" in text["unblock"], text
    assert seen["reason"]["details"]["held_by_one_user"]["user"] == "red15b"
    # R8: red15b's names are quoted as red15b's, cut to 40 characters (the "…" outside the quotes, red18 R5); never bare
    cut = LURE[:39].rstrip()
    assert f'red15b\'s job "{cut}"… ({hogs[0]["id"]})' in text["eta"], text["eta"]
    assert LURE not in text["line"] and f"{LURE[:39]} (" not in text["line"], text["line"]
    # red15b's own view of its third job names no owner for its own jobs
    own = _until(b, third["id"], lambda job: bool(job["reason"]["text"]["eta"]))["reason"]["text"]
    assert "red15b's job" not in own["eta"] and "red15a's job" not in own["eta"], own
    for job in (*hogs, third, mine):
        assert api(server, "tok-boss").delete(f"jobs/{job['id']}").status_code in (200, 202, 204)


def test_red15_r14_a_members_usage_by_team_is_labelled_as_their_own_share(server: EmbeddedServer) -> None:
    b, boss = api(server, "tok-b"), api(server, "tok-boss")
    job = _submit(b, "short", command=["sleep", "1"])
    wait_state(server, "tok-b", job["id"], "succeeded", "failed")
    rows = b.get("usage", params={"by": "team"}).json()
    assert rows and all(row["user"] == "red15b" and row["team"] == "default" for row in rows), rows
    report = b.get("usage/report", params={"by": "team"}).json()
    assert report and all(row["user"] == "red15b" for row in report), report
    assert "user" in b.get("usage/report", params={"by": "team", "format": "csv"}).text.splitlines()[0]
    # the admin's team totals stay totals (no user)
    totals = boss.get("usage", params={"by": "team", "all": "true"}).json()
    assert totals and all("user" not in row for row in totals), totals


def test_newuser15_n13_one_figure_one_rounding_on_every_route(server: EmbeddedServer) -> None:
    b = api(server, "tok-b")
    job = _submit(b, "tiny", command=["sleep", "1"])
    wait_state(server, "tok-b", job["id"], "succeeded", "failed")
    deadline, last = time.monotonic() + 60, None
    while True:  # every usage interval of red15b closed (a stopped job's may close after its state): figures still
        # the figures, not their period: since/until move with the clock (s23-acct: each row says its period)
        now = [{k: v for k, v in r.items() if k not in ("since", "until")} for r in b.get("usage", params={"by": "user"}).json()]
        if now == last:
            break
        assert time.monotonic() < deadline, now
        last = now
        time.sleep(1.1)  # and GET me sums up to the whole second (its answers are kept per second)
    (usage,) = b.get("usage", params={"by": "user"}).json()
    (report,) = b.get("usage/report", params={"by": "user"}).json()
    me = b.get("me").json()
    assert usage["gpu_hours"] == round(usage["gpu_seconds"] / 3600, 9)  # hours from the rounded seconds
    assert report["allocated_gpu_hours"] == round(report["allocated_gpu_seconds"] / 3600, 9)
    if report["utilized_gpu_seconds"] is not None:
        assert report["utilized_gpu_hours"] == round(report["utilized_gpu_seconds"] / 3600, 9)
    # one rule: GET me's hours are whole milliseconds in hours to 9 places too (old: 6 places, 0.035091)
    assert round(round(me["gpu_hours_7d"] * 3600, 3) / 3600, 9) == me["gpu_hours_7d"], me
    # one figure: the same hours on every route (old: 0.035091 / 0.035092 / 0.035091687), to the
    # millisecond each route's own sum (the database's for me, the report's per period piece) may round apart
    ms = 0.001 / 3600 + 1e-12
    # GET me sums to the whole second of its kept answer (issue 17), so it may miss up to one second
    assert me["gpu_hours_7d"] == pytest.approx(usage["gpu_hours"], abs=1001 * ms)
    assert report["allocated_gpu_hours"] == pytest.approx(usage["gpu_hours"], abs=ms)


def test_newuser33_n6_the_owners_own_kernel_lease_is_named_in_its_waiting_line_and_to_others_without_its_notebook(
        server: EmbeddedServer) -> None:
    a, b = api(server, "tok-a"), api(server, "tok-b")
    try:
        kernel = start_kernel(server)
        lease = b.post("leases", json={"gpus": 1, "kernel_id": kernel, "kernel_notebook": "work/nb33.ipynb"}).json()
        other = _submit(a, "a-h")  # no time limit: the ETA waits on it too, so it does not name the lease alone
        for token, job in (("tok-b", lease), ("tok-a", other)):
            wait_state(server, token, job["id"], "running", "admitted")
        waiting = _submit(b, "b-p", gpus=2, time_limit="10m")
        clause = f"your own kernel lease {lease['id']} (notebook work/nb33.ipynb) holds 1 of 2 GPUs"
        seen = _until(b, waiting["id"], lambda job: "held_by_owner_leases" in job["reason"]["details"])
        assert clause in seen["reason"]["text"]["summary"], seen["reason"]["text"]
        assert "run %gpu release in that notebook to free it" in seen["reason"]["text"]["line"], seen["reason"]["text"]
        out, err = io.StringIO(), io.StringIO()  # the CLI renders the same sentence from the same data
        assert main(["--url", server.url, "--token", "tok-b", "status", waiting["id"]], out=out, err=err) == EXIT_OK, \
            err.getvalue()
        assert clause in " ".join(out.getvalue().split()), out.getvalue()
        rows = a.get("queue").json()  # red15a reads red15b's holding by numbers, nothing of the notebook or kernel
        row = next(r for r in (rows["queue"] if isinstance(rows, dict) else rows) if r["id"] == waiting["id"])
        assert "red15b holds 1 of 2 GPUs (1 lease)" in row["reason"]["text"]["summary"], row["reason"]["text"]
        assert "held_by_owner_leases" not in row["reason"]["details"], row["reason"]["details"]
        assert "nb33" not in json.dumps(row) and kernel not in json.dumps(row) and "your own" not in json.dumps(row)
    finally:
        clear(server)
