"""New user 14's finding N22 (/work/coord/notes/newuser14.md), of branch nu15-fix: a store URL the store
cannot use ended ``jupyter-sched doctor`` in a traceback, and an embedded server whose ``db_url`` driver
is missing served on without its scheduler; ``doctor --db`` took a password that ``serve --db-url``
refuses. One check (``jupyter_sched.store.url``) for the server, ``serve``, ``doctor`` and the store,
one line each; one password rule. The installed ``jupyter-sched`` command and a real ``jupyter server``."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched.cli.doctor import EXIT_NO_STORE, EXIT_USAGE
from jupyter_sched.errors import StoreError
from jupyter_sched.hub.serve import main as serve
from jupyter_sched.store import Store
from tests.reliability.test_newuser13_doctor import _doctor

EXAMPLES = "use e.g. sqlite:////path/sched.sqlite or postgresql+psycopg://user@host/db"
BAD_URLS = [
    pytest.param("notaurl", "is not an SQLAlchemy URL", id="not a URL"),
    pytest.param("mysql://x@y/z", "the store runs on SQLite or PostgreSQL, not 'mysql'",
                 id="a database the store does not run on (its driver is not installed either)"),
    pytest.param("postgresql+nosuch://u@h/d", "'postgresql+nosuch' is not a database driver SQLAlchemy knows",
                 id="a driver name SQLAlchemy does not know"),
    pytest.param("postgresql+asyncpg://u@h/d", "the driver of 'postgresql+asyncpg' is not installed (no Python "
                 "module asyncpg)", id="a driver that is not installed"),
]


@pytest.mark.parametrize(("url", "problem"), BAD_URLS)
def test_newuser15_n22_doctor_says_a_bad_store_url_in_one_line(tmp_path: Path, url: str, problem: str) -> None:
    """``doctor --db notaurl`` and ``$JUPYTER_SCHED_DB_URL=garbage doctor`` ended in a 19-line traceback
    (``ArgumentError``), ``--db mysql://…`` in ``ModuleNotFoundError``: now one line naming where the URL
    came from, what is wrong and how to write one, exit 3 (no store it can open)."""
    for run, source in ((_doctor(tmp_path, "--db", url), "--db"),
                        (_doctor(tmp_path, JUPYTER_SCHED_DB_URL=url), "$JUPYTER_SCHED_DB_URL")):
        assert run.returncode == EXIT_NO_STORE, run.stderr
        assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert run.stderr.startswith(f"jupyter-sched doctor: {source} {url!r}: {problem} — "), run.stderr


def test_newuser15_n22_doctor_refuses_a_password_on_the_command_line_as_serve_does(tmp_path: Path) -> None:
    """``doctor --db postgresql+psycopg://u:secretpw@…`` was taken (the password masked in its output)
    while ``serve --db-url`` with a password is refused because every local user reads it with ``ps``:
    the same secret, two rules. One rule and one sentence now; the environment still carries it."""
    url = "postgresql+psycopg://u:secretpw@127.0.0.1:1/db"
    run = _doctor(tmp_path, "--db", url)
    assert run.returncode == EXIT_USAGE, run.stderr
    assert run.stderr.strip() == ("jupyter-sched doctor: --db carries a password, which every local user can read "
                                  "with ps; put the URL in $JUPYTER_SCHED_DB_URL or a file named by "
                                  "$JUPYTER_SCHED_DB_URL_FILE"), run.stderr
    err = io.StringIO()
    assert serve(["--db-url", url], err=err) == 2
    assert err.getvalue().strip() == ("jupyter-sched serve: --db-url carries a password, which every local user can "
                                      "read with ps; put the URL in $JUPYTER_SCHED_DB_URL or a file named by "
                                      "--db-url-file / $JUPYTER_SCHED_DB_URL_FILE")
    from_env = _doctor(tmp_path, JUPYTER_SCHED_DB_URL=url)  # not on a command line: opened (and unreachable)
    assert from_env.returncode == EXIT_NO_STORE and "secretpw" not in from_env.stderr, from_env.stderr
    assert "cannot open the store at postgresql+psycopg://u:***@127.0.0.1:1/db" in from_env.stderr, from_env.stderr


def test_newuser15_n22_serve_and_the_store_say_the_same_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve`` with ``$JUPYTER_SCHED_DB_URL=mysql://…`` says it before anything starts (exit 2), and a
    :class:`Store` given such a URL raises the store's error naming ``db_url``, never the driver's."""
    monkeypatch.setenv("JUPYTER_SCHED_DB_URL", "mysql://x:pw@y/z")
    err = io.StringIO()
    assert serve([], err=err) == 2
    assert err.getvalue().strip() == ("jupyter-sched serve: the store URL 'mysql://x:***@y/z': the store runs on "
                                      f"SQLite or PostgreSQL, not 'mysql' — {EXAMPLES}")
    with pytest.raises(StoreError) as refused:
        Store("mysql://x@y/z")
    assert refused.value.field == "db_url" and refused.value.hint == EXAMPLES


@pytest.mark.parametrize("url", ["mysql://x@y/z", "postgresql+asyncpg://u@h/d"])
def test_newuser15_n22_an_embedded_server_whose_store_driver_is_missing_stops_with_one_line(
        tmp_path: Path, url: str) -> None:
    """``jupyter server --SchedApp.db_url=mysql://x@y/z`` logged ``ModuleNotFoundError`` and a traceback,
    then served on without the scheduler (and a second traceback, ``'SchedApp' object has no attribute
    'services'``); the README: "A bad value anywhere stops the server with one line naming the setting
    and the fix" — as ``db_url = 'garbage'`` already did."""
    conf = tmp_path / "config"
    conf.mkdir()
    (conf / "jupyter_server_config.py").write_text(f"c.SchedApp.db_url = {url!r}\n", encoding="utf-8")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(conf), "JUPYTER_DATA_DIR": str(tmp_path / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    done = subprocess.run([sys.executable, "-m", "jupyter_server", "--no-browser", "--port=0",
                           f"--ServerApp.root_dir={tmp_path}", "--IdentityProvider.token=t", "--allow-root"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert f"jupyter_sched: bad configuration, not starting: c.SchedApp.db_url = {url!r}: " in done.stderr, \
        done.stderr[-2000:]
    assert "Fix: use e.g. " in done.stderr or "Fix: use postgresql+psycopg://" in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "ModuleNotFoundError" not in done.stderr, done.stderr[-2000:]
