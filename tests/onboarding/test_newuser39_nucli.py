"""newuser39's small CLI findings (session 39, s39-nucli).

n3: ``jupyter-sched submit --notebook sub/rep.ipynb -p regoin=eu`` was accepted and said nothing: the note on a
parameter the notebook's parameters cell does not set (new user 6, F10) read the notebook at its folder joined
with the path again (``sub/sub/rep.ipynb``, no such file: no note), so a typo ran silently on the defaults. The
note reads the notebook the job runs. End to end through a real embedded server.

n14: a POSIX ``TZ`` (``UTC+3``, ``<+03>-3``) and an unknown name fell back to UTC without a word while
``date`` said local time. A fixed POSIX offset is honoured as libc reads it (``UTC+3`` is 3 h west; checked
against libc's own reading via ``time.tzset``); a summer-time rule, an odd offset or an unknown name is said
once on stderr, with what to use.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK
from tests.onboarding.test_s40_params import _notebook  # the same notebook (parameters region, days)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.reliability.harness import EmbeddedServer

    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu39nucli"))
    try:
        yield srv
    finally:
        srv.terminate()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["sub/rep.ipynb", "rep.ipynb"], ids=["in a subfolder", "here"])
def test_newuser39_n3_submit_says_a_misspelt_parameter_at_submit(server: Any, tmp_path: Path, where: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _notebook(tmp_path / where)
    monkeypatch.chdir(tmp_path)
    code, out, err = server.cli("submit", "--gpus", "0", "--notebook", where, "-p", "regoin=eu")
    assert code == EXIT_OK and out.startswith("submitted j-"), (out, err)  # still accepted, as papermill does
    assert ("jupyter-sched submit: note: parameter 'regoin' is not in rep.ipynb's parameters cell (region, days) — "
            "did you mean 'region'?") in err, err
    assert server.cli("wait", out.split()[1], "--for", "3m")[0] == EXIT_OK


FIXED = ["UTC+3", "<+03>-3", "EST5", "<-0930>9", "UTC-14", "UTC0", "GMT+12", "<+0545>-5:45", "UTC+3:30"]


@pytest.mark.parametrize("tz", FIXED)
def test_newuser39_n14_a_fixed_posix_offset_reads_as_libc_reads_it(tz: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from zoneinfo import ZoneInfo

    from jupyter_sched.client.local_zone import posix_zone, zone_unread

    monkeypatch.setenv("TZ", tz)
    time.tzset()
    try:
        libc = time.localtime(0).tm_gmtoff  # libc's own reading of the rule
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    zone = posix_zone(tz)
    if libc % 3600:  # no IANA name holds a fixed odd offset: said, not guessed
        assert zone is None and zone_unread({"TZ": tz}) is not None
        return
    assert zone is not None, tz
    assert ZoneInfo(zone).utcoffset(datetime(2026, 12, 7)).total_seconds() == libc, (tz, zone)
    assert zone_unread({"TZ": tz}) is None


@pytest.mark.slow
def test_newuser39_n14_the_cli_says_times_in_a_posix_tz_and_says_once_what_it_cannot_read(
        server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = server.cli("submit", "--gpus", "0", "--name", "tz39", "--", "true")
    assert code == EXIT_OK, err
    assert server.cli("wait", out.split()[1], "--for", "3m")[0] == EXIT_OK

    def ended(tz: str) -> tuple[str, str]:
        monkeypatch.setenv("TZ", tz)
        code, out, err = server.cli("jobs", "--limit", "1")
        assert code == EXIT_OK, err
        found = re.search(r"ended (?:\w+ \d+ )?(\d\d:\d\d) (\S+)", out)
        assert found is not None, out
        return f"{found[1]} {found[2]}", err

    utc, _ = ended("UTC")
    hour = int(utc[:2])
    west, said = ended("UTC+3")  # POSIX: 3 h west of UTC, as `date` reads it
    assert west == f"{(hour - 3) % 24:02d}{utc[2:5]} UTC-3" and "TZ=" not in said, (utc, west, said)
    east, _ = ended("<+03>-3")
    assert east == f"{(hour + 3) % 24:02d}{utc[2:5]} UTC+3", (utc, east)

    unknown, said = ended("Mars/Base")
    assert unknown == utc
    assert said.startswith("jupyter-sched: note: TZ='Mars/Base' is neither an IANA zone name nor a whole-hour POSIX "
                           "offset this reads: times are said in UTC — set an IANA name such as "
                           "TZ=America/Sao_Paulo"), said
    assert ended("Mars/Base")[1].count("TZ='Mars/Base'") == 0  # once per process, not on every call


@pytest.mark.slow
def test_newuser39_n13_logs_of_a_held_job_says_held_and_how_to_release_a_pending_one_its_place(
        server: Any, tmp_path: Path) -> None:
    import io as text_io

    from jupyter_sched.cli.commands import _say_no_output
    from jupyter_sched.cli.main import Streams
    from jupyter_sched.client import connect

    code, out, err = server.cli("submit", "--gpus", "4", "--name", "full39", "--time-limit", "10m", "--", "sleep", "300")
    assert code == EXIT_OK, err
    full = out.split()[1]
    waiting = []
    for name in ("hh39", "pp39"):
        code, out, err = server.cli("submit", "--gpus", "4", "--name", name, "--time-limit", "5m", "--", "true")
        assert code == EXIT_OK, err
        waiting.append(out.split()[1])
    held, pending = waiting
    try:
        assert server.cli("hold", held)[0] == EXIT_OK
        code, out, err = server.cli("logs", held)
        assert re.fullmatch(rf"{held} is held by you at \d\d:\d\d UTC: it will not start until released — "
                            rf"release it: jupyter-sched release {held}\n", err), err
        assert "once it starts" not in err
        from tests.reliability.harness import wait_until

        wait_until(lambda: any(j["id"] == pending and (j.get("reason") or {}).get("eta")
                               for j in json.loads(server.cli("--json", "jobs", "--limit", "5")[1])),
                   "the pending job's ETA", timeout_s=60)
        code, out, err = server.cli("logs", pending)
        assert err.startswith(f"{pending} is pending: no output yet (queued #"), err
        assert " · ETA " in err and err.endswith(f" — `jupyter-sched logs -f {pending}` follows it once it starts\n"), err
        with connect(url=server.url, token=server.token) as client:  # what `logs -f` says before it follows
            said = text_io.StringIO()
            _say_no_output(client, held, Streams(out=text_io.StringIO(), err=said, stdin=text_io.StringIO()),
                           follow=True)
        assert said.getvalue().endswith(f"release it: jupyter-sched release {held}; following anyway (Ctrl-C stops)\n")
    finally:
        for job_id in (full, held, pending):
            server.cli("cancel", job_id)
