"""New user 20, N15: the CLI refused a job *name* with a space or a non-ASCII letter before looking it
up — ``jupyter-sched wait "a b c"`` / ``cancel "a b c"`` / ``logs "🚀 run"``: "'a b c' is not a job id:
ids are letters, digits and '-'" (exit 2) — though REST took the name and ``%schedule wait "a b c"``
found the job. Only a word meant as an id (``j-…``/``l-…``) is checked against the id rule now; any
other word is a name looked up among the caller's own jobs, as ``shortf`` always was.

The CLI's ``main`` in a thread against the real server (pytest-jupyter, SQLite, simulated GPUs).
"""

from __future__ import annotations

import asyncio
import io
import sys
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, main

from .conftest import IVAN_TOKEN

SLEEP = {"gpus": 0, "command": [sys.executable, "-c", "print('hi', flush=True); import time; time.sleep(60)"]}


@pytest.fixture
def cli(sched_app: Any, http_server: Any, http_server_port: Any, jp_base_url: str,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    monkeypatch.setenv("JUPYTER_SCHED_URL", f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}")
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)

    async def run(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        capsys.readouterr()
        code = await asyncio.to_thread(main, list(argv), out=out, err=err, stdin=io.StringIO())
        return code, out.getvalue(), err.getvalue() + capsys.readouterr().err  # argparse's usage errors: sys.stderr

    return run


async def test_newuser20_n15_names_with_a_space_or_non_ascii_letters_are_looked_up(api: Any, cli: Any) -> None:
    # fails before the fix: each was exit 2 "'a b c' is not a job id: ids are letters, digits and '-'"
    ids = {}
    for name in ("a b c", "🚀 run", "données"):
        status, job = await api("POST", "jobs", {**SLEEP, "name": name})
        assert status == 201, job
        ids[name] = job["id"]
    code, out, err = await cli("logs", "🚀 run")
    assert code == EXIT_OK and "not a job id" not in err, (code, out, err)
    code, out, err = await cli("wait", "données", "--for", "1s")
    assert "not a job id" not in err and code != EXIT_USAGE, (code, out, err)
    assert ids["données"] in out + err or "données" in out + err, (out, err)
    code, out, err = await cli("cancel", "a b c")
    assert code == EXIT_OK, (code, out, err)
    assert out.startswith(f"cancelled {ids['a b c']}"), out
    for name in ("🚀 run", "données"):
        code, out, err = await cli("cancel", name)
        assert code == EXIT_OK, (code, out, err)


async def test_newuser20_n15_an_unknown_name_is_not_found_and_a_bad_id_is_still_a_usage_error(cli: Any) -> None:
    code, _, err = await cli("logs", "nope x")
    assert code == EXIT_REFUSED, err
    assert "none of your jobs is named 'nope x'" in err and "not a job id" not in err, err
    code, _, err = await cli("cancel", "j-a b")  # meant as an id: the id rule, before any request
    assert code == EXIT_USAGE and "is not a job id: ids are letters, digits and '-'" in err, err
    code, _, err = await cli("wait", "j-1m8veekaw-mfrjt2:")  # copied from a listing: the guess
    assert code == EXIT_USAGE and "did you mean j-1m8veekaw-mfrjt2?" in err, err
