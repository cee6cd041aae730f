"""newuser38 n19: ``simulate`` said ``team cv: 7 jobs, 1 waited · mean wait 47m34s, longest 5h33m`` — the mean was
over all 7 jobs (6 of them 0s), read as the one waiter's. Every mean the simulator's summary prints says what it is
over: the team line ``over all 7``, the cluster line's JCT ``over the N finished`` and wait ``over the N started``.
Real parts: the simulator and its CLI on a scenario file."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.sim.test_s28_hubadmin26_b7_scenario_nodes import MIXED, run


def test_newuser38_n19_every_mean_of_the_summary_says_what_it_is_over(tmp_path: Path) -> None:
    scenario = tmp_path / "q4.yaml"
    scenario.write_text(json.dumps(MIXED))
    code, out, err = run("simulate", str(scenario))
    assert code == 0, err
    lines = out.splitlines()
    head = re.search(r"mean JCT (\S+) over the (\d+) finished · mean wait (\S+) over the (\d+) started", lines[0])
    assert head is not None, lines[0]
    finished = re.match(r"(\d+) jobs: (\d+) finished", lines[0])
    assert finished is not None and head.group(2) == finished.group(2), lines[0]
    teams = [line for line in lines if line.startswith("team ")]
    assert teams, out
    for line in teams:
        count = re.match(r"team \S+: (\d+) jobs?,", line)
        assert count is not None, line
        said = re.search(r"mean wait \S+( over all (\d+))?, longest", line)
        assert said is not None, line
        if int(count.group(1)) > 1:
            assert said.group(2) == count.group(1), line  # over every job of the team, not the waiters
        else:
            assert said.group(1) is None, line  # one job: its own wait, nothing to say
