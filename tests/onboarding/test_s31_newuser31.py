"""newuser31's findings on the surfaces (session 31): the words the panel, the magics and the CLI say,
checked against a real embedded server (2 simulated GPUs: no GPU here)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import parse_schedule_line
from tests.onboarding.test_cli_firsthour import api, clear, cli, module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
NINETY = "90 is 90 seconds (a bare number is seconds; 90m is 90 minutes)"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu31", USERS)


# ---- N4: a bare time limit is seconds, said by the server (the panel's Submit sends "90" as text) -----------

def test_newuser31_n4_the_server_notes_a_bare_time_limit_is_seconds(server: EmbeddedServer) -> None:
    # before: the panel's Time limit "90" ran 90 seconds without a word; only the CLI and the magics said it
    ann = api(server, "tok-ann")
    try:
        said = ann.post("jobs", json={"gpus": 0, "time_limit": "90", "command": ["true"]})
        assert said.status_code == 201, said.text
        assert f"time_limit {NINETY}" in said.json()["warnings"], said.json()
        for limit in (90, "90m", "1h30m"):  # a JSON number is seconds as REST documents; a unit says itself
            quiet = ann.post("jobs", json={"gpus": 0, "time_limit": limit, "command": ["true"]})
            assert quiet.status_code == 201, quiet.text
            assert not [w for w in quiet.json().get("warnings") or () if "bare number" in w], quiet.json()
    finally:
        clear(server)


def test_newuser31_n4_the_cli_says_the_bare_time_limit_note_once_in_its_options_words(server: EmbeddedServer) -> None:
    try:
        run = cli(server, "tok-ann", "submit", "--gpus", "0", "--time-limit", "90", "--", "true")
        assert run.code == 0, run
        assert run.err.count("bare number is seconds") == 1, run.err
        assert f"jupyter-sched submit: note: --time-limit {NINETY}" in run.err, run.err
    finally:
        clear(server)


# ---- n10: `%schedule dryrun train.py --gpus 3` says dryrun checks a request, with the line to type ------------

@pytest.mark.parametrize("line, word, fix", [
    ("dryrun train.py --gpus 3 --time-limit 10m", "train.py", "%schedule dryrun --gpus 3 --time-limit 10m"),
    ("dryrun --gpus 2 notebooks/eda.ipynb", "notebooks/eda.ipynb", "%schedule dryrun --gpus 2"),
])
def test_newuser31_n10_dryrun_given_a_script_says_it_checks_a_request(line: str, word: str, fix: str) -> None:
    # before: "%schedule dryrun: unknown argument train.py" and no more
    with pytest.raises(ValidationError) as caught:
        parse_schedule_line(line)
    assert caught.value.message == f"%schedule dryrun: {word}: dryrun checks a request, not a script — {fix}", \
        caught.value.message
    assert caught.value.field == word and "%schedule run SCRIPT" in (caught.value.hint or "")
    assert parse_schedule_line(fix.removeprefix("%schedule ")).action == "dryrun"  # the line it gives is taken


# ---- n9: `%schedule usage` says efficiency and cost in the CLI's cells --------------------------------------

def test_newuser31_n9_schedule_usage_says_efficiency_and_cost_as_the_cli_does(server: EmbeddedServer) -> None:
    # before: `efficiency 0.002  cost None` in the DataFrame where `jupyter-sched usage` said `<1 %  -`
    from tests.onboarding.test_newuser11 import _magics

    try:
        done = cli(server, "tok-ann", "submit", "--gpus", "1", "--name", "n9use", "--wait", "--", "sleep", "1")
        assert done.code == 0, done
        frame = _magics(server).schedule("usage")
        row = frame[frame["user"] == "ann"].iloc[0]
        table = cli(server, "tok-ann", "usage")
        line = next(line for line in table.out.splitlines() if line.startswith("ann "))
        assert isinstance(row["efficiency"], str) and row["efficiency"].endswith(("%", "-")), row
        assert row["cost"] == "-", row  # no prices here: the CLI's "-", not Python's None
        assert f" {row['efficiency']}  " in f"{line} ", (row["efficiency"], line)
    finally:
        clear(server)


# ---- n4: `%gpu`'s table says "-" for figures the reader is not shown, not pandas' NaN ----------------------

def test_newuser31_n4_gpu_table_says_dash_not_nan_for_another_users_gpu() -> None:
    # before: on a hub, rows of another user's GPUs read `util_pct NaN  memory_used_mib NaN`
    from jupyter_sched.magics.render import gpu_frame

    inventory = {"gpus": [{"uuid": f"GPU-{i}", "node": "n", "index": i, "model": "A100", "memory_mib": 81920}
                          for i in range(2)]}
    theirs = {"id": "j-b", "user": "bob", "kind": "training", "state": "running",
              "allocation": {"node": "n", "gpu_uuids": ["GPU-1"]}}
    samples = [{"gpu_uuid": "GPU-0", "utilization_pct": 12.5, "memory_used_mib": 1024}]  # bob's: not sent to ann
    frame = gpu_frame(inventory, [theirs], samples)
    assert frame["util_pct"].tolist() == [12.5, "-"], frame
    assert frame["memory_used_mib"].tolist() == [1024, "-"], frame
    assert "NaN" not in frame.to_string(), frame.to_string()


# ---- n7 (magics): a hold's answer and a held job's status name %schedule release, not the CLI ----------------

def test_newuser31_n7_the_magics_say_schedule_release_for_a_hold(server: EmbeddedServer,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # before: `%schedule hold m-next` → `held (release with: jupyter-sched release j-…)` in a notebook
    from tests.onboarding.test_newuser11 import _magics

    ann = api(server, "tok-ann")
    try:
        first = ann.post("jobs", json={"gpus": 2, "name": "m-first", "time_limit": "10m", "command": ["sleep", "300"]})
        assert first.status_code == 201, first.text  # holds both GPUs: m-next waits behind it
        made = ann.post("jobs", json={"gpus": 2, "name": "m-next", "time_limit": "10m", "command": ["sleep", "30"]})
        assert made.status_code == 201, made.text
        job_id = made.json()["id"]
        magics = _magics(server)
        capsys.readouterr()
        magics.schedule("hold m-next")
        said = capsys.readouterr().out
        assert f"%schedule release {job_id}" in said and "jupyter-sched release" not in said, said
        magics.schedule("status m-next")
        said = capsys.readouterr().out
        assert f"%schedule release {job_id}" in said and "jupyter-sched" not in said, said
    finally:
        clear(server)
