"""hubadmin26 B7 (the simulator half): a scenario's cluster node by node (models may differ), quota lines
per GPU model, ``simulate --quotas FILE`` to replay the same arrivals under a proposed line, and one line
per team under the summary (waits and GPU-hours) so two lines can be compared. And the export's pure part
(:func:`jupyter_sched.cli.scenario_export.history_scenario`): ``GET`` answers in, a scenario out.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from jupyter_sched.cli.scenario_export import history_scenario, last_full_quarter
from jupyter_sched.errors import ValidationError
from jupyter_sched.sim.cli import main
from jupyter_sched.sim.scenario import parse_scenario
from jupyter_sched.sim.simulator import simulate

MIXED = {
    "name": "mixed", "cluster": {"nodes": [{"name": "a", "model": "A100-80GB", "gpus": 2, "cpu": 64,
                                            "memory": "512Gi"},
                                           {"name": "h", "model": "H100-80GB", "gpus": 2}]},
    "jobs": [{"name": "cv-1", "user": "ann", "team": "cv", "gpus": 1, "models": ["H100-80GB"], "submit": 0,
              "runtime": 3600},
             {"name": "cv-2", "user": "ann", "team": "cv", "gpus": 1, "models": ["H100-80GB"], "submit": 60,
              "runtime": 3600},
             {"name": "nlp-1", "user": "bob", "team": "nlp", "gpus": 2, "models": ["A100-80GB"], "submit": 0,
              "runtime": 1800}]}
H100_LINE = [{"team": "cv", "gpu_model": "H100-80GB", "guaranteed": 1, "borrowing_limit": 0}]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_hubadmin26_b7_a_cluster_node_by_node_has_each_nodes_model() -> None:
    scenario = parse_scenario(MIXED)
    nodes = {n.name: (len(n.gpus), {g.model for g in n.gpus}, n.cpu_millis, n.memory_mib)
             for n in scenario.inventory.nodes}
    assert nodes == {"a": (2, {"A100-80GB"}, 64000, 512 * 1024), "h": (2, {"H100-80GB"}, 0, 0)}
    result = simulate(scenario.inventory, scenario.jobs, **scenario.simulator_kwargs())
    assert set(result.jobs["outcome"]) == {"succeeded"}
    assert result.teams.set_index("team")["gpu_h"].to_dict() == {"cv": pytest.approx(2.0), "nlp": pytest.approx(1.0)}
    # the old form still reads
    old = parse_scenario({"cluster": {"nodes": 2, "gpus_per_node": 4, "model": "L40S"}, "jobs": [{"gpus": 1}]})
    assert [len(n.gpus) for n in old.inventory.nodes] == [4, 4] and old.inventory.nodes[0].gpus[0].model == "L40S"


@pytest.mark.parametrize(("cluster", "field"), [
    ({"nodes": [{"name": "a", "modle": "A100-80GB", "gpus": 2}]}, "cluster.nodes[0].modle"),
    ({"nodes": [{"name": "a", "gpus": 2}, {"name": "b", "gpus": "eight"}]}, "cluster.nodes[1].gpus"),
    ({"nodes": [{"name": "a", "gpus": 2}, {"name": "a", "gpus": 1}]}, "cluster.nodes[1].name"),
    ({"nodes": [{"name": "a", "gpus": -1}]}, "cluster.nodes[0].gpus"),
    ({"nodes": [{"name": "a", "gpus": 1, "cpu": "many"}]}, "cluster.nodes[0].cpu"),
    ({"nodes": [{"name": "a", "gpus": 2}], "gpus_per_node": 8}, "cluster.gpus_per_node"),
    ({"nodes": []}, "cluster.nodes"),
    ({"nodes": ["a"]}, "cluster.nodes[0]"),
])
def test_hubadmin26_b7_a_bad_node_list_names_the_field(cluster: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_scenario({"cluster": cluster, "jobs": [{"gpus": 1}]})
    assert caught.value.field == field, caught.value.message


def test_hubadmin26_b7_c_a_models_line_holds_that_teams_work_on_it_and_the_team_lines_say_it() -> None:
    free = parse_scenario(MIXED)
    held = parse_scenario({**MIXED, "quotas": H100_LINE})
    assert held.quotas.quotas[0].gpu_model == "H100-80GB"
    before = simulate(free.inventory, free.jobs, **free.simulator_kwargs()).teams.set_index("team")
    after = simulate(held.inventory, held.jobs, **held.simulator_kwargs()).teams.set_index("team")
    assert before.loc["cv", "max_wait_s"] == 0
    assert after.loc["cv", "max_wait_s"] == pytest.approx(3540.0)  # cv-2 waits for cv-1's one H100
    assert after.loc["nlp", "max_wait_s"] == 0 and after.loc["cv", "waited"] == 1
    for bad, field in (({"team": "cv", "guaranteed": -1}, "quotas[0].guaranteed"),
                       ({"team": "cv", "borrowing_limit": "lots"}, "quotas[0].borrowing_limit"),
                       ({"guaranteed": 1}, "quotas[0].team"), ({"team": "cv", "modle": "x"}, "quotas[0].modle")):
        with pytest.raises(ValidationError) as caught:
            parse_scenario({**MIXED, "quotas": [bad]})
        assert caught.value.field == field, caught.value.message


def test_hubadmin26_b7_c_simulate_quotas_file_replays_under_a_proposed_line(tmp_path: Path) -> None:
    scenario = tmp_path / "q4.yaml"
    scenario.write_text(json.dumps(MIXED))
    code, free, err = run("simulate", str(scenario))
    assert code == 0, err
    assert "team cv: 2 jobs, 0 waited · mean wait 0s over all 2, longest 0s · 2.0 GPU-hours" in free, free
    assert "team nlp: 1 job, 0 waited · mean wait 0s, longest 0s · 1.0 GPU-hours" in free, free
    for text in (yaml.safe_dump(H100_LINE), json.dumps({"quotas": H100_LINE, "budgets": []})):  # a list, GET quotas'
        proposed = tmp_path / "proposed.yaml"
        proposed.write_text(text)
        code, out, err = run("simulate", str(scenario), "--quotas", str(proposed), "--out", str(tmp_path / "o"),
                             "--force")
        assert code == 0, err
        assert "team cv: 2 jobs, 1 waited · mean wait 29m30s over all 2, longest 59m · 2.0 GPU-hours" in out, out
        teams = pd.read_csv(tmp_path / "o" / "teams.csv")
        assert teams.set_index("team").loc["cv", "waited"] == 1
    (tmp_path / "no-lines.yaml").write_text("budgets: []\n")
    for argv, said in ((("--quotas", str(tmp_path / "no-lines.yaml")), "no quotas list in it — give a list of lines"),
                       (("--quotas", str(tmp_path / "none.yaml")), "does not exist"),
                       (("--tiresias", "n1g4", "--quotas", str(proposed)), "--quotas goes with a scenario file")):
        code, _, err = run("simulate", *(argv if argv[0] == "--tiresias" else (str(scenario), *argv)))
        assert code == 2 and said in err, err


def test_hubadmin26_b7_b_history_scenario_from_the_hubs_answers() -> None:
    start, end = last_full_quarter(datetime(2027, 1, 15, tzinfo=timezone.utc))
    assert (start, end) == (datetime(2026, 10, 1, tzinfo=timezone.utc), datetime(2027, 1, 1, tzinfo=timezone.utc))

    def job(n: int, **kw: Any) -> dict[str, Any]:
        return {"id": f"j-{n}", "user": "ann", "team": "cv", "kind": "training", "priority": "normal",
                "state": "succeeded", "resources": {"gpus": 1, "gpu_milli": 1000, "gpu_models": [], "workers": 1},
                "time_limit_s": None, "submitted_at": "2026-10-02T00:00:00+00:00",
                "started_at": "2026-10-02T00:10:00+00:00", "finished_at": "2026-10-02T01:10:00+00:00", **kw}

    inventory = {"nodes": [{"name": "n1", "cpu_millis": 32000, "memory_mib": 0,
                            "gpus": [{"model": "A100-80GB"}, {"model": "A100-80GB"}, {"model": "H100-80GB"}]}]}
    quotas = {"quotas": [{"team": "cv", "user": None, "gpu_model": "*", "guaranteed": 2.0, "borrowing_limit": None}],
              "budgets": []}
    jobs = [job(1), job(2, resources={"gpus": 1, "gpu_milli": 500, "gpu_models": ["A100-80GB"], "workers": 2},
                        time_limit_s=7200.0, priority="high", submitted_at="2026-10-03T00:00:00Z",
                        started_at="2026-10-03T00:00:00Z", finished_at="2026-10-03T00:30:00Z"),
            job(3, state="cancelled", started_at=None, finished_at="2026-10-02T00:05:00+00:00"),
            job(4, state="running", finished_at=None), job(5, resources={"gpus": 0, "gpu_milli": 0}),
            job(6, submitted_at="2026-09-30T23:59:59+00:00")]
    history = history_scenario(inventory, quotas, jobs, start=start, end=end, name="q4")
    doc = history.scenario
    assert doc["cluster"] == {"nodes": [{"name": "n1", "model": "A100-80GB", "gpus": 2, "cpu": 32.0},
                                        {"name": "n1/H100-80GB", "model": "H100-80GB", "gpus": 1}]}
    assert doc["quotas"] == [{"team": "cv", "gpu_model": "*", "guaranteed": 2.0}]
    assert doc["jobs"] == [
        {"name": "j-1", "user": "ann", "team": "cv", "kind": "training", "priority": "normal", "gpus": 1,
         "submit": 86400.0, "runtime": 3600.0},
        {"name": "j-2", "user": "ann", "team": "cv", "kind": "training", "priority": "high", "gpus": "0.5",
         "submit": 172800.0, "runtime": 1800.0, "models": ["A100-80GB"], "workers": 2, "time_limit": 7200.0}]
    assert (history.never_ran, history.still_live, history.no_gpu) == (1, 1, 1)
    scenario = parse_scenario(doc)  # and the simulator reads it
    assert [j.resources.total_milli for j in scenario.jobs] == [1000, 1000]
    assert scenario.start == start


def test_hubadmin26_b7_quarter_replay_keeps_usage_as_running_sums_equal_to_the_full_sum() -> None:
    """A quarter's replay (thousands of jobs) summed every usage interval at every cycle, O(jobs²): 6,000 jobs did
    not finish in minutes. The closed intervals are now a running decayed sum (as the engine's UsageLedger keeps
    them); what each cycle sees equals decayed_gpu_seconds over every interval, and the replay is the same."""
    from datetime import timedelta

    from jupyter_sched.accounting import decayed_gpu_seconds
    from jupyter_sched.sim.simulator import Simulator

    jobs = [{"name": f"j{i}", "user": f"u{i % 5}", "team": ("cv", "nlp")[i % 2], "gpus": 1 + i % 2,
             "submit": 600 * i, "runtime": 1800 + 900 * (i % 7)} for i in range(60)]
    scenario = parse_scenario({**MIXED, "jobs": jobs, "quotas": [{"team": "cv", "guaranteed": 2, "borrowing_limit": 1}]})
    seen: list[tuple[dict[str, float], dict[str, float]]] = []

    class Checked(Simulator):
        def _usage(self, now: datetime) -> Any:
            history = super()._usage(now)
            seen.append((dict(history.decayed_gpu_seconds_by_user),
                         decayed_gpu_seconds(self._intervals, now=now, half_life_s=self.usage_half_life_s)))
            return history

    result = Checked(scenario.inventory, scenario.jobs, **scenario.simulator_kwargs(),
                     usage_half_life_s=timedelta(hours=6).total_seconds()).run()
    assert len(seen) > 60 and set(result.jobs["outcome"]) == {"succeeded"}
    for kept, full in seen:
        assert kept.keys() == full.keys() and all(kept[u] == pytest.approx(full[u], rel=1e-9) for u in full), (kept, full)
