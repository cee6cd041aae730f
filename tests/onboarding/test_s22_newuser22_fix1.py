"""Newuser22's CLI findings N2, N3, N4, N9 and N12 (session 22), one named case each; each fails on
main before its fix (the words said then are quoted in the case's comment).

Real parts: the CLI's ``main`` in this process against an embedded server (2 simulated GPUs) for the
name cases; the services on a SQLite store for the team cases; no server for the usage errors.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.admission import AdmissionPolicy
from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, error_line, main
from jupyter_sched.cli.progress import bar_percent, fitted
from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import AuthorizationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.magics.core import SchedMagics
from jupyter_sched.magics.display import text_bar
from jupyter_sched.services import Services
from jupyter_sched.services.models import SetQuotasRequest, SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording import wait_progress
from jupyter_sched.wording.status import status_lines
from tests.onboarding.test_cli_firsthour import api, clear, module_server, wait_state
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer
from tests.runtime.builders import T0

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


def _run(*argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one CLI call in this process (usage errors go to sys.stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# ---- N2: words before `--` were taken as the program; a bare --time-limit number silently seconds ----

@pytest.mark.parametrize("argv, want", [
    (["--time-limit", "5", "minutes", "--", "true"],
     "jupyter-sched submit: unexpected 'minutes' before --: the command follows -- — for 5 minutes write "
     "--time-limit 5m (a bare number is seconds) [usage_error]\n"),
    (["--time-limit=2", "hours", "--", "true"],
     "jupyter-sched submit: unexpected 'hours' before --: the command follows -- — for 2 hours write "
     "--time-limit 2h (a bare number is seconds) [usage_error]\n"),
    (["--time-limit", "5", "minutes"],
     "jupyter-sched submit: 'minutes' is not a command — for 5 minutes write --time-limit 5m (a bare number is "
     "seconds) [usage_error]\n"),
    (["--priority", "low", "train", "--", "python", "train.py"],  # after --name: quote it (test_s22_verify22_nits)
     "jupyter-sched submit: unexpected 'train' before --: the command follows -- — options go before --, the "
     "command after it, e.g. --name train -- python train.py [usage_error]\n"),
], ids=["unit word before --", "unit word after a joined value", "unit word and no --", "any word before --"])
def test_s22_newuser22_n2_words_before_the_separator_are_refused_not_run(argv: list[str], want: str) -> None:
    # before: "--: 'minutes' is not a program on the job's PATH on this server — give its full path … [validation_error]"
    # (a request sent to the server, with the time limit read as 5 seconds)
    code, out, err = _run("--url", "http://127.0.0.1:9/", "submit", "--gpus", "1", *argv)
    assert (code, out, err) == (EXIT_USAGE, "", want), err


def test_s22_newuser22_n2_a_duration_unit_typed_apart_after_wait_for_is_named() -> None:
    # before: "jupyter-sched wait: unexpected arguments: minutes — usage: jupyter-sched wait [-h] …"
    code, _, err = _run("wait", "train", "--for", "5", "minutes")
    assert code == EXIT_USAGE and " — for 5 minutes write --for 5m (a bare number is seconds) [usage_error]" in err, err


def test_s22_newuser22_n2_a_bare_time_limit_number_is_said_in_seconds(server: EmbeddedServer, as_ann: None) -> None:
    # before: `--time-limit 5` was 5 seconds, said nowhere
    try:
        code, out, err = _run("submit", "--gpus", "0", "--time-limit", "5", "--", "true")
        assert code == EXIT_OK and out.startswith("submitted "), err
        assert "jupyter-sched submit: note: --time-limit 5 is 5 seconds (a bare number is seconds; 5m is 5 minutes)" \
            in err, err
        code, _, err = _run("submit", "--gpus", "0", "--time-limit", "5m", "--", "true")
        assert code == EXIT_OK and "bare number" not in err, err
    finally:
        clear(server)


# ---- N3: a value forgotten before `--` was told to write --name=-- -----------------------------------

@pytest.mark.parametrize("option", ["--name", "--time-limit", "--team", "--model", "--priority", "--env"])
def test_s22_newuser22_n3_a_value_forgotten_before_the_separator_needs_a_value(option: str) -> None:
    # before: "--name: expected one argument — a value starting with "-" is joined to its option: --name=--"
    code, _, err = _run("submit", "--gpus", "1", option, "--", "true")
    assert code == EXIT_USAGE and f"={'--'}" not in err.split(" — usage:")[0], err
    assert err.startswith(f"jupyter-sched submit: {option}: needs a value before --, e.g. {option} "), err
    assert "(-- starts the command)" in err, err


def test_s22_newuser22_n3_another_option_after_an_option_is_a_forgotten_value_too() -> None:
    code, _, err = _run("submit", "--name", "--gpus", "1", "--", "true")
    assert code == EXIT_USAGE and err.startswith("jupyter-sched submit: --name: needs a value, e.g. --name train "
                                                 "(--gpus is read as an option; a value that looks like one is "
                                                 "joined: --name=--gpus)"), err
    # a value starting with "-" keeps its hint (new user 9); a negative duration is refused at once (newuser23 N1)
    _, _, negative = _run("submit", "--name", "-5m", "--", "true")
    assert "joined to its option: --name=-5m" in negative, negative


def test_s22_newuser22_n3_the_magics_say_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    from jupyter_sched.errors import ValidationError
    from jupyter_sched.magics.parsing import parse_gpu_line

    with pytest.raises(ValidationError) as refused:
        parse_gpu_line("request 1 --name -- x")
    assert "needs a value before --" in refused.value.message and "--name=--" not in refused.value.message, \
        refused.value.message


# ---- N4: a name used twice (a rerun) ------------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu22f1", USERS)


@pytest.fixture
def as_ann(server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JUPYTER_SCHED_HUB_URL", "JUPYTERHUB_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_SCHED_URL", server.url)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "tok-ann")


def _submit(server: EmbeddedServer, name: str, *command: str) -> str:
    made = api(server, "tok-ann").post("jobs", json={"gpus": 0, "name": name, "command": list(command)})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def test_s22_newuser22_n4_a_rerun_name_means_the_live_job_to_cancel_wait_and_logs(server: EmbeddedServer,
                                                                                   as_ann: None) -> None:
    # before: "jupyter-sched cancel: 2 of your jobs are named 'waiter2': j-…, j-… — give the id of the one you mean
    # (newest first) [validation_error]" (the older one was cancelled already); wait and logs the same
    first = _submit(server, "rerun-n4", "sleep", "300")
    assert api(server, "tok-ann").delete(f"jobs/{first}").status_code == 200
    wait_state(server, "tok-ann", first, "cancelled")
    second = _submit(server, "rerun-n4", "sleep", "300")
    wait_state(server, "tok-ann", second, "running")
    try:
        code, out, err = _run("wait", "rerun-n4", "--for", "1s")
        assert code != EXIT_REFUSED and "are named" not in err, err
        assert f"note: rerun-n4 is {second} (running), the live one of 2 jobs named rerun-n4; the other ended " in err, err
        code, out, err = _run("cancel", "rerun-n4")
        assert code == EXIT_OK and out.startswith(f"cancelled {second} (rerun-n4; was running"), (out, err)
        assert f"rerun-n4 is {second} (running), the live one of 2" in err, err
        wait_state(server, "tok-ann", second, "cancelled")
        # none live: a read takes the newest and says so; a cancel names it and has nothing to do
        code, out, err = _run("logs", "rerun-n4")
        assert code == EXIT_OK and f"note: rerun-n4 is {second} (cancelled " in err, err
        assert "the newest of 2 jobs named rerun-n4; none is pending or running" in err, err
        code, out, err = _run("cancel", "rerun-n4")
        assert code == EXIT_OK and out.startswith("nothing to do: it had already ended") and second in out, (out, err)
        assert f"note: rerun-n4 is {second} (cancelled " in err, err
        # two live ones: which is meant cannot be told — the live ones listed, not the ended
        third, fourth = _submit(server, "rerun-n4", "sleep", "300"), _submit(server, "rerun-n4", "sleep", "300")
        code, _, err = _run("cancel", "rerun-n4")
        assert code == EXIT_USAGE and "2 of your jobs are named 'rerun-n4' and pending or running: " in err, err
        assert third in err and fourth in err and first not in err and second not in err, err
        assert "(2 more of that name ended)" in err, err
    finally:
        clear(server)


def test_s22_newuser22_n4_the_magics_take_the_live_one_and_say_which(server: EmbeddedServer,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # before: MagicError "2 of your jobs are named 'nbrerun-n4': …"
    from jupyter_sched.client import connect

    magics = SchedMagics(None, client_factory=lambda: connect(server.url, "tok-ann"))
    first = _submit(server, "nbrerun-n4", "true")
    wait_state(server, "tok-ann", first, "succeeded")
    second = _submit(server, "nbrerun-n4", "sleep", "300")
    try:
        capsys.readouterr()
        magics.schedule("status nbrerun-n4")
        said = capsys.readouterr().out
        assert f"Note: nbrerun-n4 is {second} (" in said and "the live one of 2 jobs named nbrerun-n4" in said, said
        magics.schedule("cancel nbrerun-n4")
        said = capsys.readouterr().out
        assert f"ancelled {second}" in said, said
        assert api(server, "tok-ann").get(f"jobs/{first}").json()["state"] == "succeeded"
    finally:
        clear(server)


# ---- N9: one percentage on `wait`'s line; a narrow terminal drops the report's time first -------------

def _reporting(fraction: float) -> dict[str, Any]:
    now = datetime(2026, 12, 5, 5, 22, 30, tzinfo=timezone.utc)
    started = (now - timedelta(seconds=32)).isoformat()
    return {"id": "j-1", "state": "running", "kind": "training", "started_at": started, "time_limit_s": 300,
            "allocation": {"node": "vm"},
            "progress": {"fraction": fraction, "at": (now - timedelta(seconds=3)).isoformat(),
                         "run_started_at": started, "ran_s": 29}}


def test_s22_newuser22_n9_the_bar_and_the_words_say_one_percentage() -> None:
    # before: "… 77 % done, reported 05:22 UTC (3s ago) |████████████████████████▉       |  78% [00:06]"
    now = datetime(2026, 12, 5, 5, 22, 30, tzinfo=timezone.utc)
    for fraction in (7 / 9, 5 / 12, 0.999, 0.29):
        frame = wait_progress(_reporting(fraction), now)
        said = int(frame.label.split(" % done")[0].rsplit(" ", 1)[1])
        assert frame.fraction is not None and bar_percent(frame.fraction) == said, (fraction, frame.label)
        # the bar's number is said in words beside it (newuser23 N18), the magics' text bar has none of its own
        assert frame.gauge == f"{said} % done" and "%" not in text_bar(frame.fraction, 20), frame.gauge


def test_s22_newuser22_n9_at_80_columns_the_reports_time_goes_before_the_bar_shrinks() -> None:
    # before: "running on vm · 23s of 5m limit · 44 % done, reported 05:22 UTC (7s ago) |▍|  44" (one cell, "%" cut)
    frame = wait_progress(_reporting(0.44), datetime(2026, 12, 5, 5, 22, 30, tzinfo=timezone.utc))
    wide, with_bar = fitted(frame, 160)
    assert with_bar and "reported" in wide, wide
    narrow, with_bar = fitted(frame, 80)
    assert with_bar and narrow == "running on vm · 32s of 5m limit", narrow
    assert 80 - len(narrow) - len(f" || {frame.gauge}") >= 10


# ---- N12: a user in several teams ------------------------------------------------------------------------

@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(T0)
    policy = AdmissionPolicy.from_settings({"user_teams": {"root": ["ml", "cv"]},
                                            "priority_grants": {"users": {"root": ["high"]}}})
    svc = Services(store=Store(sqlite_url(tmp_path / "s.sqlite"), now=clock.now), inventory=SimulatedInventory(2),
                   executor=LocalExecutor(tmp_path / "jobs"), clock=clock, policy=policy)
    svc.quotas.set(svc.caller("root", admin=True), SetQuotasRequest.model_validate({"teams": [
        {"team": "ml", "allowed_priorities": ["normal", "low"]},
        {"team": "cv", "allowed_priorities": ["high", "normal"]}]}))
    yield svc
    svc.store.close()


def test_s22_newuser22_n12_status_names_every_team_the_default_marked(services: Services) -> None:
    # before: "user       root (admin), team ml" (cv not named)
    me = services.accounting.me(services.caller("root", admin=True)).model_dump(mode="json")
    lines = status_lines("http://x/", {"version": "0"}, me, {"gpus": []})
    assert lines[1] == "user       root (admin), teams ml (default), cv", lines[1]
    assert status_lines("http://x/", {}, {"user": "ana", "team": "ml", "teams": ["ml"]}, {})[1] == \
        "user       ana, team ml"


@pytest.mark.parametrize("admin", [True, False], ids=["admin", "member"])
def test_s22_newuser22_n12_a_priority_refused_in_the_default_team_names_the_team_that_allows_it(
        services: Services, admin: bool) -> None:
    # before: "--priority: team 'ml' may not use priority 'high' (allowed: normal, low) — use normal or low, or add
    # 'high' to team 'ml''s allowed_priorities (PUT quotas) [forbidden]"
    with pytest.raises(AuthorizationError) as refused:
        services.jobs.submit(services.caller("root", admin=admin),
                             SubmitJobRequest(priority="high", gpus=1, time_limit="1m", command=["true"]))
    err = refused.value
    assert err.details and err.details["teams_allowing"] == ["cv"], err.details
    line = error_line("submit", err)
    assert "or submit with --team cv, which allows 'high'" in line, line
    assert "''s" not in line and ("team ml's allowed_priorities" in line if admin else True), line
    # and that team takes it
    job = services.jobs.submit(services.caller("root", admin=admin),
                               SubmitJobRequest(team="cv", priority="high", gpus=1, time_limit="1m", command=["true"]))
    assert job.model_dump(mode="json")["priority"] == "high"


def test_s22_newuser22_n12_the_other_team_is_named_for_any_class(services: Services) -> None:
    # cv does not allow low; ml (root's default) does: the refusal in cv names it
    with pytest.raises(AuthorizationError) as refused:
        services.jobs.submit(services.caller("root", admin=False),
                             SubmitJobRequest(team="cv", priority="low", gpus=1, time_limit="1m", command=["true"]))
    assert "or submit with --team ml, which allows 'low'" in error_line("submit", refused.value), refused.value


# ---- N1 remainder: the [usage_error] tag stays, on every client subcommand's usage error ------------------

@pytest.mark.parametrize("command", ["status", "submit", "queue", "wait", "cancel", "jobs", "logs", "definitions"])
def test_s22_newuser22_n1_every_subcommands_usage_error_ends_with_its_code(command: str) -> None:
    """Newuser22 N1 asked for no bracketed code after ``JOB: missing``. Kept, on purpose: every line the
    client CLI prints for a failure ends with its code — ``[validation_error]``, ``[forbidden]``,
    ``[conflict]`` for a refused request, ``[usage_error]`` for a command-line mistake (new users 9 and
    10: two styles of error from one tool; tests/onboarding/test_newuser10.py) — the code ``--json``
    gives as ``error.code``, which scripts match. This pins that every subcommand says it the same way."""
    code, out, err = _run(command, *(["train"] if command in ("wait", "logs") else []), "--no-such-option")
    assert code == EXIT_USAGE and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"jupyter-sched {command}: --no-such-option: not an option of ") and \
        err.endswith(" [usage_error]\n"), err
