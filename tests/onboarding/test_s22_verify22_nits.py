"""verify22 V3/V4 nits and N9's rest: the CLI's and the magics' words for a name typed with spaces and a
duration's unit typed apart, the bare-seconds note in ``%%schedule``, ``logs --help``'s description and
the JOB help's lease ids, and ``wait``'s bar sized to the room the terminal has now."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli import progress
from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE, main
from jupyter_sched.cli.progress import TerminalProgress
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.core import SchedMagics
from jupyter_sched.magics.parsing import parse_schedule_line
from jupyter_sched.wording import wait_progress
from tests.onboarding.test_cli_firsthour import clear, module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


def _run(*argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one CLI call in this process (usage errors go to sys.stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "v22nits", USERS)


# ---- V3: `--name my job -- true`; the magics' `--time-limit 5 minutes` and bare `--time-limit 5` ----------

@pytest.mark.parametrize("words, name", [(["--name", "my", "job"], "my job"),
                                         (["--name=my", "big", "job"], "my big job")])
def test_s22_verify22_nits_a_name_with_spaces_is_told_to_quote(words: list[str], name: str) -> None:
    # before: "unexpected 'job' before --: … options go before --, the command after it, e.g. --name train -- …"
    code, out, err = _run("--url", "http://127.0.0.1:9/", "submit", "--gpus", "1", *words, "--", "true")
    assert code == EXIT_USAGE and out == "", err
    assert err.endswith(f' before --: the command follows -- — quote a name with spaces: --name "{name}" '
                        "[usage_error]\n"), err


@pytest.mark.parametrize("line, field, fix", [
    ("--gpus 0 --time-limit 5 minutes", "minutes", "for 5 minutes write --time-limit 5m (a bare number is seconds)"),
    ("--time-limit=2 h", "h", "for 2 h write --time-limit 2h (a bare number is seconds)"),
    ("--gpus 0 --name my job", "job", 'quote a name with spaces: --name "my job"'),
])
def test_s22_verify22_nits_the_magic_says_what_the_cli_says(line: str, field: str, fix: str) -> None:
    # before: "%%schedule: unknown argument minutes" and no more
    for text, cell in ((line, True), (f"dryrun {line}", False)):
        with pytest.raises(ValidationError) as caught:
            parse_schedule_line(text, cell=cell)
        prog = "%%schedule" if cell else "%schedule dryrun"
        assert str(caught.value).startswith(f"{prog}: unknown argument {field}: {fix}"), str(caught.value)
        assert caught.value.field == field


def test_s22_verify22_nits_the_cell_notes_a_bare_time_limit_is_seconds(server: EmbeddedServer, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # before: `%%schedule --time-limit 5` ran with a 5-second limit, said nowhere (the CLI notes it)
    from jupyter_sched.client import connect

    for name in ("JUPYTER_SCHED_HUB_URL", "JUPYTERHUB_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    magics = SchedMagics(None, client_factory=lambda: connect(server.url, "tok-ann"))
    try:
        capsys.readouterr()
        magics.schedule("--gpus 0 --time-limit 5", "print(1)\n")
        said = capsys.readouterr().out
        assert "Note: --time-limit 5 is 5 seconds (a bare number is seconds; 5m is 5 minutes)" in said, said
        magics.schedule("--gpus 0 --time-limit 5m", "print(1)\n")
        said = capsys.readouterr().out
        assert said.startswith("Submitted ") and "bare number" not in said, said
    finally:
        clear(server)


# ---- V4: `logs --help` has a description; JOB's help says a lease id where one is taken ---------------------

def test_s22_verify22_nits_logs_help_has_a_description_and_job_help_names_lease_ids() -> None:
    # before: `logs --help` went from usage straight to "positional arguments"; JOB said only "a job's id (j-…)"
    code, out, _ = _run("logs", "--help")
    assert code == EXIT_OK
    head = out.split("\n\n")
    assert head[1].startswith("Print a job's log"), out
    assert "(l-…)" in head[1] and "has no log" in " ".join(head[1].split()), out
    for command in ("wait", "cancel"):
        code, out, _ = _run(command, "--help")
        assert code == EXIT_OK and "a kernel lease's id (l-…)" in " ".join(out.split()), out


# ---- N9's rest: the bar sized to the terminal's width at each frame ---------------------------------------

class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _reporting(fraction: float, now: datetime) -> dict[str, Any]:
    started = (now - timedelta(seconds=32)).isoformat()
    return {"id": "j-1", "state": "running", "kind": "training", "started_at": started, "time_limit_s": 300,
            "allocation": {"node": "vm"},
            "progress": {"fraction": fraction, "at": (now - timedelta(seconds=3)).isoformat(),
                         "run_started_at": started, "ran_s": 29}}


@pytest.mark.parametrize("first, now_columns", [(120, 100), (120, 120), (80, 120)])
def test_s22_verify22_nits_wait_keeps_the_bars_number_in_the_room_left(first: int, now_columns: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # before: the bar kept the width it was started at: narrowed to 100 columns the line stayed 120 wide,
    # "… (3s ago) |████████████████████████▋       | " and its "77% [00:00]" cut at the edge
    widths = iter([first])
    monkeypatch.setattr(progress, "_size", lambda stream=None: {"ncols": next(widths, now_columns), "nrows": 24})
    now = datetime(2026, 12, 5, 6, 5, 3, tzinfo=timezone.utc)
    stream = _Terminal()
    with TerminalProgress(stream) as bar:
        bar.show(wait_progress(_reporting(0.77, now), now))
        line = stream.getvalue().split("\r")[-1].rstrip()
    assert progress.cells(line) <= now_columns, (len(line), line)
    assert line.rstrip().endswith("| 77 % done"), line  # the number said as what it is (newuser23 N18)
    # the bar keeps its room (the report's words no longer repeat the number, so they fit at 100 columns too)
    assert len(line[line.index("|") + 1:line.rindex("|")]) >= progress.BAR_MIN_CELLS, line
