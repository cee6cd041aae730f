"""verify20 V3, V4, V6 (issue 20): the quota reasons of per-model and per-user lines, where a user
meets them — the REST answers' text, ``jupyter-sched`` output and ``%gpu`` — on a cluster of two
GPU models (2 A100-80GB, 4 H100-80GB) with ``c.SchedApp.unlisted_team_borrowing_limit`` at its
default 0.

- V3: a job allowed on A100 and H100 (vision has a line for A100 only, full) was told "vision has no
  quota. A100: …" and "vision has no GPU quota: an admin must give it one" — it starts when vision's
  A100 work ends.
- V4: ``status`` / ``%gpu`` showed vision's A100 line and not that H100 is 0 GPUs for it.
- V6: the named user of a per-user A100 line asking for H100 was told "its *other* members may use
  0 GPUs".

Real parts: an embedded server with a static inventory, the installed ``jupyter-sched`` command (a
subprocess) and the magics driven in this process with a real client.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED
from jupyter_sched.magics.core import MagicError
from tests.onboarding.test_cli_firsthour import api, clear
from tests.onboarding.test_newuser10 import _env
from tests.onboarding.test_newuser11 import _cli, _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}
A100, H100 = "A100-80GB", "H100-80GB"
H100_WORDS = ("team vision has no share of the H100-80GB GPUs (no quota line for that model): it may use 0 GPUs there "
              "(c.SchedApp.unlisted_team_borrowing_limit)")


def _inventory(path: Path) -> str:
    gpus = [(A100, "a", i) for i in range(2)] + [(H100, "h", i) for i in range(4)]
    nodes = [{"name": f"node-{n}", "gpus": [{"uuid": f"GPU-{n}{i}", "model": m, "memory": "80GiB"}
                                             for m, node, i in gpus if node == n]} for n in ("a", "h")]
    path.write_text(yaml.safe_dump({"nodes": nodes}))
    return str(path)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    work = tmp_path_factory.mktemp("v20q")
    srv = EmbeddedServer.start(work, users=USERS, admin_users=["boss"], inventory_source="static",
                               inventory_file=_inventory(work / "nodes.yaml"),
                               user_teams={"ann": ["vision", "ghost"], "bob": ["ghost"]})
    try:
        boss = api(srv, "tok-boss")
        lines = [{"team": "vision", "gpu_model": A100, "guaranteed": 1, "borrowing_limit": 1},
                 {"team": "ghost", "user": "ann", "gpu_model": A100, "guaranteed": 0, "borrowing_limit": 1}]
        assert boss.put("quotas", json={"quotas": lines}).status_code == 200
        yield srv
    finally:
        clear(srv)  # jobs outlive a killed server by design: stop this module's before killing it
        srv.kill()


def _running(server: EmbeddedServer, job_id: str) -> None:
    deadline = time.monotonic() + 30
    while api(server, "tok-ann").get(f"jobs/{job_id}").json()["state"] != "running":
        assert time.monotonic() < deadline, api(server, "tok-ann").get(f"jobs/{job_id}").json()
        time.sleep(0.2)


def _pending_reason(server: EmbeddedServer, job_id: str) -> dict[str, Any]:
    """The job's reason once the cycle has given it one and its ETA (not the provisional "not estimated yet")."""
    deadline = time.monotonic() + 30
    while True:
        job = api(server, "tok-ann").get(f"jobs/{job_id}").json()
        reason = job.get("reason") or {}
        if reason.get("per_flavor") and "not estimated yet" not in reason["text"]["eta"]:
            return dict(reason)
        assert time.monotonic() < deadline, job
        time.sleep(0.2)


def test_verify20_v3_a_job_on_two_models_is_told_the_lined_models_wait_first_and_the_unlined_one_truthfully(
        server: EmbeddedServer, tmp_path: Path) -> None:
    ann = api(server, "tok-ann")
    try:
        for i in range(2):  # vision's A100 line (1 + 1) full
            made = ann.post("jobs", json={"gpus": 1, "team": "vision", "model": A100, "name": f"fill{i}",
                                          "command": ["sleep", "300"], "time_limit": "10m"})
            assert made.status_code == 201, made.text
            _running(server, made.json()["id"])
        body = {"gpus": 1, "team": "vision", "model": f"{H100},{A100}", "command": ["sleep", "5"], "name": "either"}
        dry = ann.post("dryrun", json=body).json()
        job = ann.post("jobs", json=body).json()
        reason = _pending_reason(server, job["id"])
        for text in (dry["reason"]["text"], reason["text"]):
            summary, unblock = text["summary"], text["unblock"]
            # the primary reason is the lined model's, with its numbers; the unlined one said second, in
            # the words of the refusal and of status, naming its model
            assert summary.startswith("vision would use 3 A100-80GB GPUs, above its limit of 2 A100-80GB GPUs "
                                      "(guaranteed 1 + borrowing limit 1)."), summary
            assert H100_WORDS in summary, summary
            assert "has no quota." not in summary and "no GPU quota" not in unblock, text
            assert "release A100-80GB GPUs" in unblock and "a quota line for H100-80GB" in unblock, unblock
        assert reason["code"] == "BorrowingLimitReached" and reason["details"]["model"] == A100, reason
        flavors = {e["flavor"]: e for e in reason["per_flavor"]}
        assert flavors[H100]["code"] == "NoQuota" and flavors[H100]["unlisted"] is True, flavors
        assert "fill0" in reason["text"]["eta"] or "fill1" in reason["text"]["eta"], reason["text"]
        queue = _cli(_env(tmp_path, server), "jobs")  # the CLI's line is the server's words
        assert queue.returncode == EXIT_OK, queue.stderr
        assert "vision would use 3 A100-80GB GPUs" in queue.stdout and H100_WORDS in queue.stdout, queue.stdout
        assert "no GPU quota" not in queue.stdout, queue.stdout
    finally:
        clear(server)


def test_verify20_v4_status_and_gpu_say_the_models_a_teams_lines_leave_out_in_the_queues_words(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    me = api(server, "tok-ann").get("me").json()
    vision = next(t for t in me["by_team"] if t["team"] == "vision")
    assert vision["unlisted_scope"] == {"models": [H100], "borrowing_limit": 0.0, "covered": [A100], "own": [],
                                        "members": [], "member_models": {}}, vision
    line = me["quota_text"].splitlines()[0]
    assert line.startswith(f"team vision on A100-80GB: guaranteed 1 GPU, borrowing limit 1 GPU (at most 2 GPUs); "
                           f"{H100_WORDS}; "), line
    status = _cli(_env(tmp_path, server), "status")
    assert status.returncode == EXIT_OK, status.stderr
    assert f"quota      {line}\n" in status.stdout, status.stdout
    capsys.readouterr()
    _magics(server).gpu("")
    assert f"Quota: {line}\n" in capsys.readouterr().out


def test_verify20_v6_the_named_user_of_a_per_user_model_line_is_told_of_her_line_not_of_other_members(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ann, bob = api(server, "tok-ann"), api(server, "tok-bob")
    body = {"gpus": 1, "team": "ghost", "model": H100, "command": ["true"]}
    for answer in (ann.post("dryrun", json=body), ann.post("jobs", json=body)):
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["message"] == ("your quota line in team ghost (user ann) is for A100-80GB only: on H100-80GB you "
                                    "may use 0 GPUs (c.SchedApp.unlisted_team_borrowing_limit), so this 1-GPU job can "
                                    "never start"), error  # new user 23, N6 (s24): was "so 1 GPU can never start on it"
        assert "other members" not in error["message"] and error["field"] == "model", error
        assert "--model <one you have a line for: A100-80GB>" in error["hint"], error
    # bob, another member, is told of the team's other members (he is one)
    other = bob.post("dryrun", json={**body, "model": A100}).json()["error"]
    assert other["message"].startswith("team ghost has only a quota line for user ann (A100-80GB): its other members "
                                       "may use 0 GPUs"), other
    cli = _cli(_env(tmp_path, server), "submit", "--gpus", "1", "--team", "ghost", "--model", H100, "--", "true")
    assert cli.returncode == EXIT_REFUSED, (cli.stdout, cli.stderr)
    assert "your quota line in team ghost (user ann) is for A100-80GB only: on H100-80GB you may use 0 GPUs" \
        in cli.stderr and "other members" not in cli.stderr, cli.stderr
    with pytest.raises(MagicError) as refused:  # a notebook's %gpu request says the same
        _magics(server).gpu(f"request 1 --team ghost --model {H100} --no-wait")
    said = str(refused.value)
    assert "your quota line in team ghost (user ann) is for A100-80GB only" in said and "other members" not in said, \
        said
    # the admin's warnings say the member's other models too
    warnings = api(server, "tok-boss").get("quotas").json()["warnings"]
    assert any(w.startswith("team ghost has only a quota line for user ann (A100-80GB): its other members may use 0 "
                            "GPUs") and "ann's line is for A100-80GB only: on H100-80GB ann may use 0 GPUs too" in w
               for w in warnings), warnings
