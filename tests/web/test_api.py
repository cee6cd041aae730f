"""The REST API end to end, as a real client uses it (issue 2 'Done when')."""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from .conftest import JUDY_TOKEN, server_config, wait_for

TERMINAL = {"succeeded", "failed", "cancelled", "lost", "rejected"}


def script_job(path: Path, **extra: Any) -> dict[str, Any]:
    return {"name": "real-script", "gpus": 1, "command": [sys.executable, str(path)], **extra}


async def job_state(api: Any, job_id: str, *, token: str | None = None) -> dict[str, Any]:
    kwargs = {"token": token} if token else {}
    status, job = await api("GET", f"jobs/{job_id}", **kwargs)
    assert status == 200, job
    return dict(job)


async def test_inventory_lists_simulated_gpus_labelled_simulated(sched_app: Any, api: Any) -> None:
    status, inv = await api("GET", "inventory")
    assert status == 200
    assert len(inv["gpus"]) == 4
    assert inv["simulated"] is True
    assert all(g["simulated"] is True for g in inv["gpus"])


async def test_config_tells_the_panel_what_is_supported(sched_app: Any, api: Any) -> None:
    status, config = await api("GET", "config")
    assert status == 200
    assert config["api"] == "v1" and config["events"]["transport"] == "sse"
    assert config["identity"] == "jupyter_user"
    assert config["placement_policy"] == "binpack"  # the default, shown so users can tell


async def test_a_real_script_on_one_gpu_runs_to_success_with_readable_logs(sched_app: Any, api: Any,
                                                                           tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("import os\nprint('CUDA_VISIBLE_DEVICES=' + os.environ.get('CUDA_VISIBLE_DEVICES', ''))\n"
                      "print('CUDA_DEVICE_ORDER=' + os.environ.get('CUDA_DEVICE_ORDER', ''))\n")
    status, job = await api("POST", "jobs", script_job(script))
    assert status == 201, job
    assert job["state"] in ("pending", "admitted", "running", "succeeded")

    async def finished() -> dict[str, Any] | None:
        current = await job_state(api, job["id"])
        return current if current["state"] in TERMINAL else None

    done = await wait_for(finished)
    assert done["state"] == "succeeded", done
    assert done["exit_code"] == 0
    assert len(done["allocation"]["gpu_uuids"]) == 1
    status, logs = await api("GET", f"jobs/{job['id']}/logs")
    assert status == 200
    assert f"CUDA_VISIBLE_DEVICES={done['allocation']['gpu_uuids'][0]}" in logs["text"]
    assert "CUDA_DEVICE_ORDER=PCI_BUS_ID" in logs["text"]
    assert logs["finished"] is True
    status, tail = await api("GET", f"jobs/{job['id']}/logs", params={"offset": str(logs["next_offset"]),
                                                                      "follow": "true"})
    assert status == 200 and tail["text"] == "" and tail["finished"] is True


async def test_more_gpus_than_exist_is_422_naming_the_numbers(sched_app: Any, api: Any) -> None:
    status, body = await api("POST", "jobs", {"gpus": 9, "command": ["true"]})
    assert status == 422, body
    assert "9" in body["error"]["message"] and "4" in body["error"]["message"], body
    assert body["error"]["hint"]
    _, listing = await api("GET", "jobs")
    assert listing == []


async def test_newuser4_nvlink_on_gpus_without_nvlink_is_422_naming_nvlink(sched_app: Any, api: Any) -> None:
    # the simulated GPUs have no NVLink: the job used to be accepted and pend forever ("needs 2, 4 free")
    status, body = await api("POST", "jobs", {"gpus": 2, "nvlink": True, "command": ["true"]})
    assert status == 422 and body["error"]["field"] == "nvlink", body
    assert "NVLink" in body["error"]["message"] and "without nvlink" in body["error"]["hint"], body
    _, listing = await api("GET", "jobs")
    assert listing == []


async def test_cancel_stops_a_running_job(sched_app: Any, api: Any, tmp_path: Path) -> None:
    script = tmp_path / "sleep.py"
    script.write_text("import time\nprint('started', flush=True)\ntime.sleep(120)\n")
    _, job = await api("POST", "jobs", script_job(script))

    async def running() -> bool:
        return (await job_state(api, job["id"]))["state"] == "running"

    await wait_for(running)
    status, cancelled = await api("DELETE", f"jobs/{job['id']}")
    assert status == 200, cancelled

    async def ended() -> dict[str, Any] | None:
        current = await job_state(api, job["id"])
        return current if current["state"] in TERMINAL else None

    final = await wait_for(ended)
    assert final["state"] == "cancelled"
    status, again = await api("DELETE", f"jobs/{job['id']}")
    assert status in (200, 409), again


class TestQueueAndMetrics:
    # ivan submits "high", which an admin must grant (issue 15: "high" is granted to nobody by default)
    @pytest.fixture
    def jp_server_config(self, tmp_path: Path) -> dict[str, Any]:
        return server_config(tmp_path, priority_grants={"users": {"ivan": ["high"]}})

    async def test_queue_and_metrics_show_the_same_pending_work(self, sched_app: Any, api: Any, tmp_path: Path) -> None:
        script = tmp_path / "hold.py"
        script.write_text("import time\ntime.sleep(120)\n")
        _, big = await api("POST", "jobs", script_job(script, gpus=4))

        async def running() -> bool:
            return (await job_state(api, big["id"]))["state"] == "running"

        await wait_for(running)
        _, waiting = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "priority": "high"})
        status, queue = await api("GET", "queue")
        assert status == 200
        assert {j["id"] for j in queue} >= {big["id"], waiting["id"]}
        status, text = await api("GET", "metrics")
        assert status == 200
        samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                   for family in text_string_to_metric_families(text) for s in family.samples}
        assert samples[("jupyter_sched_queue_length", (("priority", "high"),))] == 1
        allocated = [v for (name, labels), v in samples.items()
                     if name == "jupyter_sched_gpus" and ("state", "allocated") in labels]
        assert allocated == [4.0]
        # case 034's accuracy gauge: absent while no job has waited (it started at once; the other pends) —
        # a 0 there read as "no waiting job got an ETA" (new user 14, N11; tests/web/test_eta_accuracy.py: present)
        assert ("jupyter_sched_eta_coverage_ratio", ()) not in samples
        await api("DELETE", f"jobs/{big['id']}")
        await api("DELETE", f"jobs/{waiting['id']}")

        async def both_ended() -> bool:
            states = [(await job_state(api, j))["state"] for j in (big["id"], waiting["id"])]
            return all(state in TERMINAL for state in states)

        await wait_for(both_ended)


async def test_dryrun_answers_without_enqueuing(sched_app: Any, api: Any) -> None:
    status, verdict = await api("POST", "dryrun", {"gpus": 2, "command": ["true"]})
    assert status == 200, verdict
    _, listing = await api("GET", "jobs")
    assert listing == []


async def test_a_dryrun_asking_only_whether_gpus_fit_needs_nothing_to_run(sched_app: Any, api: Any) -> None:
    status, verdict = await api("POST", "dryrun", {"gpus": 2})
    assert status == 200 and verdict["fits"] is True and verdict["job"]["command"] is None, verdict
    status, verdict = await api("POST", "dryrun", {"gpus": 64})
    assert status == 200 and verdict["never"] is True, verdict  # "never" is the dry run's answer, not a refusal
    status, refused = await api("POST", "jobs", {"gpus": 2})
    assert status == 400 and refused["error"]["field"] == "command", "a real submit still needs something to run"


async def test_profiles_and_quotas_are_readable_by_everyone(sched_app: Any, api: Any) -> None:
    status, profiles = await api("GET", "profiles", token=JUDY_TOKEN)
    assert status == 200 and isinstance(profiles, list)
    status, quotas = await api("GET", "quotas", token=JUDY_TOKEN)
    assert status == 200 and isinstance(quotas, dict)


class TestOverQuota:
    @pytest.fixture
    def jp_server_config(self, tmp_path: Path) -> dict[str, Any]:
        # ivan is in team small (issue 15: a request may charge only the caller's own teams)
        return server_config(tmp_path, quotas=[{"team": "small", "guaranteed": 1, "borrowing_limit": 0}],
                             user_teams={"ivan": "small"})

    async def test_a_job_over_quota_pends_with_the_quota_reason(self, sched_app: Any, api: Any,
                                                               tmp_path: Path) -> None:
        script = tmp_path / "hold.py"
        script.write_text("import time\ntime.sleep(120)\n")
        _, first = await api("POST", "jobs", script_job(script, team="small"))

        async def running() -> bool:
            return (await job_state(api, first["id"]))["state"] == "running"

        await wait_for(running)
        status, second = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "team": "small"})
        assert status == 201, second

        async def reasoned() -> dict[str, Any] | None:
            current = await job_state(api, second["id"])
            return current if current["state"] == "pending" and current.get("reason") else None

        pending = await wait_for(reasoned)
        assert pending["reason"]["code"] in ("ExceedsQuota", "BorrowingLimitReached"), pending["reason"]
        assert "1" in pending["reason"]["message"]
        await api("DELETE", f"jobs/{first['id']}")
        await api("DELETE", f"jobs/{second['id']}")

        async def ended() -> bool:
            return (await job_state(api, first["id"]))["state"] in TERMINAL

        await wait_for(ended)


async def test_job_json_matches_the_codec_shape(sched_app: Any, api: Any) -> None:
    _, job = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "shape"})
    for key in ("id", "name", "user", "team", "kind", "priority", "state", "resources", "submitted_at", "simulated"):
        assert key in job, key
    assert job["user"] == "ivan"
    assert json.loads(json.dumps(job)) == job


class TestEmbeddedOwner:
    """With jupyter_server's own token provider, the token holder IS the server owner (the OS user)."""

    @pytest.fixture
    def jp_server_config(self, tmp_path: Path) -> dict[str, Any]:
        config = server_config(tmp_path)
        del config["ServerApp"]["identity_provider_class"]
        return config

    async def test_the_token_user_is_the_os_user_and_admin(self, sched_app: Any, api: Any) -> None:
        status, me = await api("GET", "me")
        assert status == 200
        assert me["user"] == getpass.getuser() and me["is_admin"] is True
        _, job = await api("POST", "jobs", {"gpus": 0, "command": ["true"]})
        assert job["user"] == getpass.getuser()
        _, config = await api("GET", "config")
        assert config["identity"] == "owner" and config["owner"] == getpass.getuser()


async def test_a_failing_store_answers_503_with_the_error_shape(sched_app: Any, api: Any, tmp_path: Path) -> None:
    import sqlite3

    db = sqlite3.connect(tmp_path / "sched.sqlite")  # break the real database under the server
    db.execute("ALTER TABLE jobs RENAME TO jobs_elsewhere")
    db.commit()
    try:
        status, body = await api("GET", "jobs")
        assert status == 503, body
        assert body["error"]["code"] == "store_error" and body["error"]["hint"]
    finally:
        db.execute("ALTER TABLE jobs_elsewhere RENAME TO jobs")
        db.commit()
        db.close()


async def test_a_job_without_working_dir_runs_in_the_server_root(sched_app: Any, api: Any,
                                                                  jp_serverapp: Any) -> None:
    """A raw REST client that names no working_dir gets the directory the server serves files from."""
    status, job = await api("POST", "jobs", {"gpus": 0, "command": [sys.executable, "-c",
                                                                     "import os; print('CWD=' + os.getcwd())"]})
    assert status == 201, job

    async def finished() -> dict[str, Any] | None:
        current = await job_state(api, job["id"])
        return current if current["state"] in TERMINAL else None

    done = await wait_for(finished)
    assert done["state"] == "succeeded", done
    _, logs = await api("GET", f"jobs/{job['id']}/logs")
    assert f"CWD={os.path.realpath(jp_serverapp.root_dir)}" in logs["text"], logs["text"]


class TestHeterogeneousGangs:
    """Red-team finding 12: worker groups (case 024) reach the core through REST, named field by field,
    and the admission ceiling applies to the gang's total."""

    @pytest.fixture
    def jp_server_config(self, tmp_path: Path) -> dict[str, Any]:
        return server_config(tmp_path, quotas=[{"team": "small", "guaranteed": 2, "borrowing_limit": 1}],
                             user_teams={"ivan": "small"})

    async def test_groups_are_accepted_validated_and_held_to_the_ceiling(self, sched_app: Any, api: Any) -> None:
        gang = [{"name": "launcher", "gpus": 1}, {"name": "trainer", "gpus": 1, "workers": 2}]
        status, verdict = await api("POST", "dryrun", {"groups": gang, "command": ["true"]})
        assert status == 200 and verdict["fits"] is True, verdict
        status, refused = await api("POST", "jobs", {"groups": [{"name": "trainer", "gpus": 1, "workers": 4}],
                                                     "command": ["true"]})
        assert status == 422 and refused["error"]["field"] == "groups", refused  # a gang names its groups (N17)
        assert (refused["error"]["details"]["requested"], refused["error"]["details"]["ceiling"]) == (4, 3)
        status, bad = await api("POST", "jobs", {"groups": [{"name": "Trainer!"}], "command": ["true"]})
        assert status == 400 and bad["error"]["field"] == "groups[0].name", bad
        status, bad = await api("POST", "jobs", {"groups": [{"name": "t", "gpuz": 1}], "command": ["true"]})
        assert status == 400 and bad["error"]["field"] == "groups[0].gpuz" and "name" in bad["error"]["hint"], bad
