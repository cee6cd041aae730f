"""newuser30 N5 (medium): ``jupyter-sched doctor`` read ``jupyter_server_config.py`` for its config check but not
its ``c.SchedApp.db_url`` — it checked the default SQLite file instead ("every row read", rc 0) or said "no store
… nothing to check", while the README's own config sets db_url there. Now the store is chosen as the server
chooses it — ``--db``, the environment, then the config's ``c.SchedApp.db_url``, then the default — and the
``store:`` line says where the URL came from.

Real parts: the doctor's main on real SQLite stores, config files in a real Jupyter config folder."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from jupyter_sched.cli import doctor
from jupyter_sched.store import Store, sqlite_url
from tests.onboarding.test_newuser29_n4_config_check import _doctor, config_folders


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    return config_folders(tmp_path, monkeypatch)


def test_newuser30_n5_doctor_checks_the_store_the_servers_config_names(folders: SimpleNamespace) -> None:
    # a default file exists too: the one the newuser's doctor checked instead, and said all was well
    (folders.data / "jupyter_sched").mkdir(parents=True)
    Store(sqlite_url(folders.data / "jupyter_sched" / "sched.sqlite")).close()
    configured = folders.tmp / "team.sqlite"
    Store(sqlite_url(configured)).close()
    where = folders.conf / "jupyter_server_config.py"
    where.write_text(f'c.SchedApp.db_url = "{sqlite_url(configured)}"\nc.SchedApp.idle_window_s = 60\n',
                     encoding="utf-8")
    code, out, err = _doctor()
    assert code == doctor.EXIT_OK, (out, err)
    assert out.splitlines()[0] == f"store: {sqlite_url(configured)} (c.SchedApp.db_url in {where})", out
    assert f"config: {where}: every c.SchedApp setting reads\n" in out  # the embedded server's config, checked
    # the environment still comes first, as before; --db first of all
    other = folders.tmp / "other.sqlite"
    Store(sqlite_url(other)).close()
    code, out, _ = _doctor("--db", sqlite_url(other))
    assert out.splitlines()[0] == f"store: {sqlite_url(other)} (--db)", out


def test_newuser30_n5_a_configured_store_that_is_not_there_is_named_with_its_source(folders: SimpleNamespace) -> None:
    missing = folders.tmp / "nowhere" / "sched.sqlite"
    where = folders.conf / "jupyter_server_config.py"
    where.write_text(f'c.SchedApp.db_url = "sqlite:///{missing}"\n', encoding="utf-8")  # its folder not made
    code, out, err = _doctor()
    assert code == doctor.EXIT_NO_STORE, (out, err)
    assert f"no store at {missing} (c.SchedApp.db_url in {where}): nothing to check, and none was created" in err, err
    assert not missing.parent.exists()  # never a store made to be checked
    assert "the embedded server's default file" not in err, err
