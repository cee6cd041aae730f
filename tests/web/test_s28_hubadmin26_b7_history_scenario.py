"""hubadmin26 B7 (the export half) through a real server: ``jupyter-sched usage --as-scenario`` writes the
hub's job history as a ``jupyter-sched simulate`` scenario, and the simulator's per-team figures of it are
what happened on the hub, within the simulator's model (work starts the moment its GPUs free: no launch time).

Embedded mode, 4 simulated GPUs, real ``sleep`` jobs: judy (team nlp) holds all 4; ivan (team vision) submits
two 1-GPU jobs that wait behind hers and a third he cancels while it waits; judy's job ends, ivan's run, then
end. The admin (boss) exports the last hour; the scenario replays: each team's GPU-hours are the hub's, ivan's
waits are the hub's less the launch time, and under a proposed line (vision: 1 GPU, no borrowing) his two jobs
run one after the other — the per-team line says it.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from jupyter_sched.sim.scenario import parse_scenario
from jupyter_sched.sim.simulator import simulate

from .conftest import BOSS_TOKEN, JUDY_TOKEN, SLEEP_JOB, server_config, wait_for
from .test_cli import cli  # noqa: F401  (the fixture: the CLI as a subprocess against this server)


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, user_teams={"ivan": ["vision"], "judy": ["nlp"]})


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_hubadmin26_b7_history_as_a_scenario_replays_each_teams_waits_and_gpu_hours(
        sched_app: Any, api: Any, cli: Any, tmp_path: Path) -> None:  # noqa: F811
    async def job(job_id: str) -> dict[str, Any]:
        status, answer = await api("GET", f"jobs/{job_id}", token=BOSS_TOKEN)
        assert status == 200, answer
        return dict(answer)

    async def in_state(job_id: str, *states: str) -> bool:
        return (await job(job_id))["state"] in states

    status, big = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4}, token=JUDY_TOKEN)
    assert status == 201, big
    await wait_for(lambda: in_state(big["id"], "running"))
    small = []
    for _ in range(3):
        status, one = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1})
        assert status == 201, one
        small.append(one)
    status, _ = await api("DELETE", f"jobs/{small[2]['id']}")  # cancelled while it waits: never ran
    assert status == 200
    # judy holds her GPUs a while after ivan's submit, longer than her launch took: in the replay, which
    # starts her at her submit, his jobs still arrive while she runs (else they would not wait there)
    held = await job(big["id"])
    await asyncio.sleep(1.5 + (_at(held["started_at"]) - _at(held["submitted_at"])).total_seconds())
    status, _ = await api("DELETE", f"jobs/{big['id']}", token=JUDY_TOKEN)
    assert status == 200
    for one in small[:2]:
        await wait_for(lambda one=one: in_state(one["id"], "running"))
    await asyncio.sleep(2)  # both run a while: under one GPU for vision, the second waits for the first
    for one in small[:2]:
        status, _ = await api("DELETE", f"jobs/{one['id']}")
        assert status == 200
    for one in (big, *small):
        await wait_for(lambda one=one: in_state(one["id"], "cancelled"))

    refused = await cli("usage", "--as-scenario", "--since", "1h")  # ivan: everyone's jobs are the admins'
    assert refused.code == EXIT_REFUSED and not refused.out, (refused.out, refused.err)
    wrong = await cli("--token", BOSS_TOKEN, "usage", "--as-scenario", "--csv")
    assert wrong.code == EXIT_USAGE and "--csv does not go with --as-scenario" in wrong.err, wrong.err

    run = await cli("--token", BOSS_TOKEN, "usage", "--as-scenario", "--since", "1h")
    assert run.code == EXIT_OK, run.err
    assert json.loads(run.out) == yaml.safe_load(run.out)  # JSON, which is YAML
    assert "wrote 3 jobs submitted" in run.err and "1 never started" in run.err, run.err
    doc = yaml.safe_load(run.out)
    assert doc["cluster"] == {"nodes": [{"name": n["name"], "model": n["gpus"][0]["model"], "gpus": len(n["gpus"]),
                                         **({"cpu": n["cpu_millis"] / 1000} if n["cpu_millis"] else {}),
                                         **({"memory_mib": n["memory_mib"]} if n["memory_mib"] else {})}
                                        for n in (await api("GET", "inventory"))[1]["nodes"]]}, doc["cluster"]
    assert [(j["name"], j["team"], j["gpus"]) for j in doc["jobs"]] == [
        (big["id"], "nlp", 4), (small[0]["id"], "vision", 1), (small[1]["id"], "vision", 1)], doc["jobs"]

    scenario = parse_scenario(doc)
    result = simulate(scenario.inventory, scenario.jobs, **scenario.simulator_kwargs())
    teams = result.teams.set_index("team")
    real = {j["id"]: await job(j["id"]) for j in (big, *small[:2])}
    for team, ids in (("nlp", [big["id"]]), ("vision", [small[0]["id"], small[1]["id"]])):
        hours = sum(real[i]["resources"]["gpus"] * (_at(real[i]["finished_at"]) - _at(real[i]["started_at"]))
                    .total_seconds() for i in ids) / 3600
        assert teams.loc[team, "gpu_h"] == pytest.approx(hours, abs=1e-5), (team, teams)
        assert teams.loc[team, "jobs"] == len(ids)
    # ivan's jobs waited on the hub from their submit to their start; the simulator starts judy's at its
    # submit and his the moment hers ends: the hub's wait less the two launch times it does not model
    judy = real[big["id"]]
    judy_launch = (_at(judy["started_at"]) - _at(judy["submitted_at"])).total_seconds()
    waits = result.jobs.set_index("name")["wait_s"]
    for i in (small[0]["id"], small[1]["id"]):
        hub_wait = (_at(real[i]["started_at"]) - _at(real[i]["submitted_at"])).total_seconds()
        own_launch = (_at(real[i]["started_at"]) - _at(judy["finished_at"])).total_seconds()
        assert waits[i] == pytest.approx(hub_wait - judy_launch - own_launch, abs=0.01), (i, hub_wait, waits)
        assert waits[i] > 0
    assert teams.loc["nlp", "max_wait_s"] == 0 and teams.loc["vision", "waited"] == 2, teams

    path = tmp_path / "history.yaml"
    path.write_text(run.out)
    replay = await cli("simulate", str(path))
    assert replay.code == EXIT_OK, replay.err
    assert "team nlp: 1 job, 0 waited" in replay.out and "team vision: 2 jobs, 2 waited" in replay.out, replay.out
    proposed = tmp_path / "proposed.yaml"
    proposed.write_text("- {team: vision, guaranteed: 1, borrowing_limit: 0}\n- {team: nlp, guaranteed: 4}\n")
    under = await cli("simulate", str(path), "--quotas", str(proposed))
    assert under.code == EXIT_OK, under.err
    vision = [line for line in under.out.splitlines() if line.startswith("team vision:")]
    before = [line for line in replay.out.splitlines() if line.startswith("team vision:")]
    assert vision and vision != before, (vision, before)  # one GPU: his second job waits for his first
    quotas = parse_scenario({**doc, "quotas": [{"team": "vision", "guaranteed": 1, "borrowing_limit": 0},
                                               {"team": "nlp", "guaranteed": 4}]})
    held = simulate(quotas.inventory, quotas.jobs, **quotas.simulator_kwargs()).teams.set_index("team")
    assert held.loc["vision", "max_wait_s"] > teams.loc["vision", "max_wait_s"] + 1, (held, teams)
