"""newuser26's nits (/work/coord/notes/newuser26.md, "Nits"), session 27: each its own test, named
``test_newuser26_nK_…``. (n2's CLI half: tests/web/test_cli.py.)"""

from __future__ import annotations

import io

import pytest
from IPython.core.error import UsageError

from jupyter_sched.cli.main import main
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.core import _parsing
from jupyter_sched.magics.parsing import parse_schedule_line


def test_newuser26_n2_magic_env_name_alone_passes_the_kernels_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """``%%schedule --env FOO`` was refused "is not NAME=VALUE": it passes this kernel's FOO now (as
    ``%env FOO=…`` set it), and an unset FOO is refused naming how to set it."""
    monkeypatch.setenv("NU26_KEY", "kernel value")
    monkeypatch.delenv("NU26_NONE", raising=False)
    with _parsing():
        cmd = parse_schedule_line("--gpus 0 --env NU26_KEY --env SEED=1", cell=True)
    assert list(cmd.options.env) == [("NU26_KEY", "kernel value"), ("SEED", "1")]
    with pytest.raises(UsageError) as refused, _parsing():
        parse_schedule_line("--gpus 0 --env NU26_NONE", cell=True)
    assert str(refused.value) == ("--env NU26_NONE: NU26_NONE is not set in this kernel. %env NU26_NONE=… first, or "
                                  "give its value: --env NU26_NONE=VALUE."), str(refused.value)


def test_newuser26_n2_env_pair_takes_name_value_or_a_name_set_here() -> None:
    from jupyter_sched.cli.commands import env_pair

    environ = {"A": "1", "EMPTY": ""}
    assert env_pair("A", field="env", environ=environ, here="this shell", setter="export") == ("A", "1")
    assert env_pair("EMPTY", field="env", environ=environ, here="this shell", setter="export") == ("EMPTY", "")
    assert env_pair("B=x=y", field="env", environ=environ, here="this shell", setter="export") == ("B", "x=y")
    assert env_pair("C=", field="env", environ=environ, here="this shell", setter="export") == ("C", "")
    for bad in ("=x", "", " "):
        with pytest.raises(ValidationError, match="is not NAME=VALUE"):
            env_pair(bad, field="env", environ=environ, here="this shell", setter="export")



@pytest.mark.parametrize("argv, said", [
    (["logs", "my", "job"], 'jupyter-sched logs: unexpected arguments: job — a name with spaces is quoted: '
                            'jupyter-sched logs "my job" [usage_error]'),
    (["wait", "nightly", "run", "2"], 'jupyter-sched wait: unexpected arguments: run 2 — a name with spaces is quoted: '
                                      'jupyter-sched wait "nightly run 2" [usage_error]'),
    (["logs", "j1", "--raw", "x"], "jupyter-sched logs: unexpected arguments: x — usage: jupyter-sched logs [-h] [-f] "
                                   "[-n N] [--raw] [--notebook] [-o FILE] [--json] JOB [usage_error]"),
], ids=["logs", "wait", "not after the name"])
def test_newuser26_n7_an_unquoted_name_with_spaces_is_told_to_quote_it(
        argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``jupyter-sched logs my job`` said "unexpected arguments: job": the README's advice (quote a name with
    spaces) belongs in that message."""
    err = io.StringIO()
    code = main(argv, out=io.StringIO(), err=err)
    shown = err.getvalue() + capsys.readouterr().err
    assert code == 2 and shown.strip() == said, shown


def test_newuser26_n9_a_cancel_says_cancelled_by_once_and_by_you_for_mine() -> None:
    """``cancel ctrlc`` a second time said "nothing to do: it had already ended — job … (ctrlc): cancelled — by
    root" (the dash split "cancelled by root"), and ``status`` of a job I cancelled "cancelled — cancelled by you
    (killed by SIGKILL; …)"."""
    from jupyter_sched.wording import job_line
    from jupyter_sched.wording.jobs import nothing_to_cancel

    mine = {"id": "j-1", "name": "ctrlc", "kind": "training", "state": "cancelled", "user": "root", "mine": True,
            "exit_code": -9, "message": "cancelled by root (killed by SIGKILL; last lines: ignoring TERM)"}
    assert nothing_to_cancel(mine, None) == ("nothing to do: it had already ended — job j-1 (ctrlc): cancelled by you "
                                             "(killed by SIGKILL; last lines: ignoring TERM)")
    assert job_line(mine, None) == "job j-1 (ctrlc): cancelled by you (killed by SIGKILL; last lines: ignoring TERM)"
    other = {**mine, "message": "cancelled by boss", "exit_code": -15}
    assert job_line(other, None) == "job j-1 (ctrlc): cancelled by boss, killed by SIGTERM"
    failed = {**mine, "state": "failed", "exit_code": 3, "message": "exited with code 3; last lines: boom"}
    assert job_line(failed, None) == "job j-1 (ctrlc): failed, exit code 3 — last lines: boom"


@pytest.mark.parametrize("typed, seconds", [("1h ago", 3600), ("2 days ago", 2 * 86400), ("30 min ago", 1800),
                                            ("90m", 5400), ("1 week", 7 * 86400), ("3hrs ago", 3 * 3600)])
def test_newuser26_n10_audit_since_takes_how_long_ago_as_journalctl_does(typed: str, seconds: int) -> None:
    """``audit --since "1h ago"`` was refused (kubectl/journalctl take relative times); ``usage --by job`` (the
    nit's other half) is taken since hubadmin25 B8."""
    from datetime import datetime, timezone

    from jupyter_sched.cli.admin_views import _BY, _BY_ALIASES, _when

    then = datetime.fromisoformat(_when(typed).replace("Z", "+00:00"))
    assert abs((datetime.now(timezone.utc) - then).total_seconds() - seconds) < 5
    assert _BY_ALIASES["job"] == "job_id" and "job_id" in _BY


def test_newuser26_n13_schedule_jobs_leads_with_id_name_state_and_leaves_out_empty_queue_columns() -> None:
    """``%schedule jobs`` returned a DataFrame whose first column, ``position``, was empty for every finished job
    (``reason``, ``eta``, ``unblocks_when`` mostly empty too)."""
    from datetime import datetime, timezone

    from jupyter_sched.magics.render import jobs_frame

    now = datetime(2026, 12, 5, 19, 0, tzinfo=timezone.utc)
    done = {"id": "j-1", "name": "a", "user": "ann", "kind": "training", "state": "succeeded", "exit_code": 0,
            "resources": {"gpus": 1}, "priority": "normal", "message": ""}
    failed = {**done, "id": "j-2", "name": "b", "state": "failed", "exit_code": 3,
              "message": "exited with code 3; last lines: boom"}
    frame = jobs_frame([done, failed], now)
    assert list(frame.columns) == ["id", "name", "state", "gpus", "kind", "detail", "priority"], list(frame.columns)
    assert list(frame["id"]) == ["j-1", "j-2"] and list(frame["state"]) == ["succeeded", "failed"]
    pending = {**done, "id": "j-3", "name": "c", "state": "pending", "exit_code": None, "position": 1,
               "reason": {"code": "WaitingForCapacity", "position": 1, "text": {"summary": "0 of 4 GPUs free",
                                                                                "eta": "ETA 19:30 UTC", "unblock": ""}}}
    mixed = jobs_frame([pending, done], now)
    assert list(mixed.columns)[:3] == ["id", "name", "state"] and "position" in mixed.columns, list(mixed.columns)
    assert list(mixed["position"]) == [1, ""]


def test_newuser26_n1_gpu_request_with_a_timeout_says_when_it_gives_up_not_the_eta_as_its_length(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``%gpu request 1 --timeout 15s`` printed "waited 1s of ~12m57s · lease … queued #4 …": the "of ~12m57s" is
    the ETA, not the 15 s it waits; it read as a wait of 13 minutes."""
    from datetime import datetime, timedelta, timezone

    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from jupyter_sched.magics.display import Progress
    from jupyter_sched.wording import wait_progress
    from jupyter_sched.wording.progress import within_timeout

    now = datetime(2026, 12, 5, 18, 50, 0, tzinfo=timezone.utc)
    lease = {"id": "l-1", "name": "nb", "state": "pending", "kind": "lease", "mine": True, "gpus": 1,
             "submitted_at": (now - timedelta(seconds=1)).isoformat(),
             "reason": {"code": "WaitingForCapacity", "message": "0 of 4 GPUs free, job needs 1", "position": 4,
                        "eta": (now + timedelta(seconds=777)).isoformat()}}
    frame = wait_progress(lease, now)
    assert frame.gauge.startswith("waited 1s of ~")  # the wait toward the ETA, with no timeout
    timed = within_timeout(frame, 1.0, 15.0)
    assert timed.gauge == "waited 1s (gives up after 15s)" and timed.fraction == pytest.approx(1 / 15)
    assert timed.bar_lines == frame.bar_lines and "ETA 19:02 UTC (in 12m57s)" in timed.bar_lines[0], timed.bar_lines
    assert within_timeout(frame, 1.0, None) is frame
    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")
    InteractiveShell.instance()
    with capture_output() as shown:
        Progress("lease l-1").show(timed, 1.0)
    text = str(shown.outputs[-1].data["text/plain"])
    assert "] waited 1s (gives up after 15s) · lease l-1 · queued #4" in text and " of ~" not in text, text


@pytest.mark.parametrize("typed, seconds", [("1h30m", 5400), ("1.5h", 5400), ("2h30m ago", 9000), ("90m", 5400)])
@pytest.mark.parametrize("command", ["jobs", "audit", "usage"])
def test_newuser35_n3_since_takes_every_duration_the_other_duration_fields_take(command: str, typed: str,
                                                                                seconds: int) -> None:
    """newuser35 N3: ``--since 1h30m`` / ``1.5h`` were "no date or time" while ``--time-limit`` takes them and the
    CLI's own hint for ``1h30`` says to write ``1h30m``; an offset-less time was refused by the server as "since"."""
    import contextlib
    import io
    from datetime import datetime, timezone

    from jupyter_sched.cli.main import build_parser

    args = build_parser().parse_args([command, "--since", typed])
    then = datetime.fromisoformat(args.since.replace("Z", "+00:00"))
    assert abs((datetime.now(timezone.utc) - then).total_seconds() - seconds) < 5
    for wrong, said in (("1h30", "as how long ago, write 1h30m"),
                        ("12:30", "is no date or time")):  # an offset-less time is the reader's (newuser41 n9)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), pytest.raises(SystemExit):
            build_parser().parse_args([command, "--since", wrong])
        assert f"--since: '{wrong}' " in err.getvalue() and said in err.getvalue(), err.getvalue()
