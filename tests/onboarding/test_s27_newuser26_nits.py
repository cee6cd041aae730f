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
                                   "[-n N] [--raw] JOB [usage_error]"),
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
