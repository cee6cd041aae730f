"""newuser33 n7, n8, n5: CLI words of the first hour (issue 20).

n7: ``jupyter-sched teams`` and ``jupyter-sched users`` alone said "ACTION: missing — usage: … ACTION ..." (exit 2), no
action listed; a command of actions typed alone now prints its help, as bare ``jupyter-sched`` does.

n8: a misspelled time zone got no "did you mean" (``--tz Europe/Berln`` → "unknown time zone 'Europe/Berln'. Use an IANA
name …"), where commands, options and models get one; one renderer (model.units.unknown_zone) for definitions (CLI,
magics and the panel's Scheduled notebooks say the server's refusal) and time windows.

n5: on the hub's host, the CLI found the hub service's own runtime file (``jupyter-sched serve`` under
``/services/jupyter-sched/``) and said it "answered HTTP 403 (no jupyter_sched extension there) … — start JupyterLab": it
is the scheduler, and it answers a hub's tokens only. It is now named as the hub's service, with how to reach it.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from jupyter_sched.cli.main import main
from tests.onboarding.test_cli_http import ScriptedServer, send

FORBIDDEN = (b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: 44\r\n\r\n"
             b'{"message": "Forbidden", "reason": null}    ')
"""What the hub's service answers a request without a hub token (jupyter_server's 403, as the tester saw it)."""


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


@pytest.mark.parametrize("base, hub", [("/services/jupyter-sched/", True), ("/", False)],
                         ids=["the hub's service: named, through the hub", "a lab that refuses: as before"])
def test_newuser33_n5_the_hubs_own_service_found_on_its_host_is_named_with_the_way_to_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base: str, hub: bool) -> None:
    """A loopback server answering as the hub's service does without a hub token (403), found through a runtime file
    as ``jupyter-sched serve`` writes it (a JupyterHub cannot be started for this, lean)."""
    server = ScriptedServer([send(FORBIDDEN, keep=False)])
    (tmp_path / f"jpserver-{os.getpid()}.json").write_text(json.dumps(
        {"pid": os.getpid(), "url": f"http://127.0.0.1:{server.port}{base}", "base_url": base, "token": "tok",
         "root_dir": str(tmp_path)}))
    for name in ("JUPYTER_SCHED_URL", "JUPYTER_SCHED_TOKEN", "JUPYTERHUB_API_TOKEN", "JUPYTER_SCHED_HUB_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    err = io.StringIO()
    try:
        assert main(["status"], out=io.StringIO(), err=err) == 3
    finally:
        server.close()
    said = err.getvalue()
    if hub:
        assert f"is this host's JupyterHub service /services/jupyter-sched/ (pid {os.getpid()}), which answers a hub's " \
               "tokens only" in said, said
        assert said.rstrip().endswith("— talk to it through the hub: export JUPYTER_SCHED_HUB_URL=HUB/services/jupyter-"
                                      "sched/ (HUB: the hub's address, e.g. https://hub.example.org) and "
                                      "JUPYTER_SCHED_TOKEN=a token from HUB/hub/token"), said
        assert "no jupyter_sched extension there" not in said and "start JupyterLab" not in said, said
    else:
        assert "answered HTTP 403 (no jupyter_sched extension there)" in said and "start JupyterLab" in said, said
