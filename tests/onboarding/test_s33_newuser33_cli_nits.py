"""newuser33 n7, n8, n5: CLI words of the first hour (issue 20).

n7: ``jupyter-sched teams`` and ``jupyter-sched users`` alone said "ACTION: missing — usage: … ACTION ..." (exit 2), no
action listed; a command of actions typed alone now prints its help, as bare ``jupyter-sched`` does.

n8: a misspelled time zone got no "did you mean" (``--tz Europe/Berln`` → "unknown time zone 'Europe/Berln'. Use an IANA
name …"), where commands, options and models get one; one renderer (model.units.unknown_zone) for definitions (CLI,
magics and the panel's Scheduled notebooks say the server's refusal) and time windows.
"""

from __future__ import annotations

import io

import pytest

from jupyter_sched.cli.main import main


@pytest.mark.parametrize("argv", [["teams"], ["users"], ["--json", "teams"], ["users", "--json"]])
def test_newuser33_n7_a_command_of_actions_alone_prints_its_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    assert main(argv, out=io.StringIO(), err=err) == 0
    said = capsys.readouterr().out
    group = next(word for word in argv if not word.startswith("-"))
    assert said.startswith(f"usage: jupyter-sched {group} "), said
    assert ("move" if group == "teams" else "rename") in said  # its actions listed
    assert "jupyter-sched status" in said  # where a user who is no admin looks at their own team
    assert "missing" not in said + err.getvalue()


@pytest.mark.parametrize("typed, meant", [
    ("Europe/Berln", "Europe/Berlin"), ("America/New_Yrok", "America/New_York"), ("Asia/Tokio", "Asia/Tokyo"),
    ("New York", "America/New_York"), ("europe/berlin", "Europe/Berlin"), ("utc", "UTC"),
    ("UTC+2", "Etc/GMT-2"), ("GMT-5", "Etc/GMT+5"), ("Mars/Olympus", ""), ("CET+1", ""), ("x" * 300, "")])
def test_newuser33_n8_a_misspelled_time_zone_is_asked_about(typed: str, meant: str) -> None:
    from jupyter_sched.definitions.schedule import parse_schedule
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.queues.windows import TimeWindow

    with pytest.raises(ValidationError) as definition:
        parse_schedule("0 12 * * 1-5", typed)
    with pytest.raises(ValidationError) as window:
        TimeWindow(name="night", start="20:00", end="06:00", tz=typed)
    for said in (definition.value.message, window.value.message):  # one sentence for both
        assert said.startswith("unknown time zone '"), said
        assert (f" — did you mean '{meant}'?" in said) if meant else "did you mean" not in said, said
    assert definition.value.message == window.value.message
    if meant.startswith("Etc/GMT"):  # its reversed sign said, or it reads as a mistake
        assert "the zone database writes its sign the other way round" in definition.value.message
