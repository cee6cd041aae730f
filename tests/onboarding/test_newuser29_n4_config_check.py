"""newuser29 N4 (low): ``jupyter-sched doctor`` passed a configuration the server refused; the start named one
bad setting per restart.

Found: a ``jupyter_server_config.py`` with four mistakes — a time limit's default above its maximum, a quota
line's ``guaranted``, ``idle_windw_s`` (no such setting: traitlets only warns and ignores it), a negative
``job_memory_mib`` — and ``JUPYTER_CONFIG_DIR=… jupyter-sched doctor`` said nothing of the config (rc 0), while
``jupyter lab`` exited "bad configuration, not starting" naming ONE setting: three restarts for three errors.
Now one check (:func:`jupyter_sched.extension.config_check.config_problems`) names every bad setting at once,
with its field and fix, and the unknown name with its close name; the start runs it and refuses with all of
them; ``doctor`` runs the same check on the config that server reads and exits 1.

Real parts: the extension's app classes, the doctor's main on a real SQLite store, one real ``jupyter_server``.
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from jupyter_sched.cli import doctor
from jupyter_sched.extension.app import SchedApp
from jupyter_sched.extension.config_check import config_problems
from jupyter_sched.extension.startup_checks import check_config
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.store import Store, sqlite_url

BAD = """\
c.SchedApp.time_limits = [{"team": "default", "default_s": 3600, "max_s": 600}]
c.SchedApp.quotas = [{"team": "ml", "guaranted": 4}]
c.SchedApp.idle_windw_s = 60
c.SchedApp.job_memory_mib = -5
"""
REFUSED = [
    "c.SchedApp.time_limits = [{'team': 'default', 'default_s': 3600, 'max_s': 600}]: default_s 3600 is above "
    "max_s 600. Fix: make the default at most the maximum",
    "c.SchedApp.job_memory_mib = -5: must be >= 0 MiB. Fix: set a number >= 0 (MiB)",
    "c.SchedApp.quotas[0].guaranted: quota line 0 (team 'ml'): unknown field 'guaranted'. Fix: did you mean "
    "'guaranteed'? known fields: borrowing_limit, gpu_model, guaranteed, team, user",
]
IGNORED = ["c.SchedApp.idle_windw_s: no such setting (did you mean idle_window_s?); it would be ignored. "
           "Fix: rename it to c.SchedApp.idle_window_s"]


def config_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A Jupyter config folder and data folder of this test's own (``conf``, ``data``, ``tmp``), and no store or
    server named by the environment: what ``doctor`` and the config check read is only what the test writes."""
    conf, data = tmp_path / "config", tmp_path / "data"
    conf.mkdir()
    for name in ("JUPYTER_SCHED_DB_URL", "JUPYTER_SCHED_DB_URL_FILE", "JUPYTER_SCHED_HUB_URL", "JUPYTER_SCHED_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(conf))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    return SimpleNamespace(conf=conf, data=data, tmp=tmp_path)


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    return config_folders(tmp_path, monkeypatch)


def _config(text: str, folder: Path, name: str = "jupyter_server_config.py") -> Config:
    (folder / name).write_text(text, encoding="utf-8")
    return PyFileConfigLoader(name, path=str(folder)).load_config()


def _doctor(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = doctor.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_newuser29_n4_the_check_names_all_four_with_field_and_fix(folders: SimpleNamespace) -> None:
    found = config_problems(_config(BAD, folders.conf), SchedApp, config_name="jupyter_server_config")
    assert found.refused == REFUSED
    assert found.ignored == IGNORED
    assert not folders.data.exists()  # a check makes no folder (doctor never does: new user 13, N18)
    good = _config('c.SchedApp.time_limits = [{"team": "default", "default_s": 600, "max_s": 3600}]\n'
                   'c.SchedApp.quotas = [{"team": "ml", "guaranteed": 4}]\nc.SchedApp.idle_window_s = 60\n',
                   folders.conf)
    assert config_problems(good, SchedApp).lines() == []


def test_newuser29_n4_the_start_refuses_naming_every_bad_setting(folders: SimpleNamespace,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("test_newuser29_n4")
    server = SimpleNamespace(config=_config(BAD, folders.conf), log=logger, config_file_name="jupyter_server_config")
    app = SchedApp()  # its own config (an extension's config file) empty: the server's has the settings
    with caplog.at_level(logging.CRITICAL, logger=logger.name), pytest.raises(SystemExit) as stopped:
        check_config(server, app)
    assert stopped.value.code == 1
    (said,) = [r.getMessage() for r in caplog.records if r.levelno == logging.CRITICAL]
    assert said == "jupyter_sched: bad configuration, not starting: 4 settings to fix:\n  " + \
        "\n  ".join(REFUSED + IGNORED)
    caplog.clear()
    server.config = _config('c.SchedApp.idle_windw_s = 60\n', folders.conf)  # a typo alone: traitlets warns, it starts
    check_config(server, app)
    assert not [r for r in caplog.records if r.levelno == logging.CRITICAL]


def test_newuser29_n4_doctor_lists_every_bad_setting_and_exits_1(folders: SimpleNamespace) -> None:
    (folders.data / "jupyter_sched").mkdir(parents=True)
    Store(sqlite_url(folders.data / "jupyter_sched" / "sched.sqlite")).close()
    where = folders.conf / "jupyter_server_config.py"
    where.write_text(BAD, encoding="utf-8")
    code, out, err = _doctor()
    assert code == doctor.EXIT_FOUND, (out, err)
    at = out.index(f"config: {where}: 4 settings to fix")
    assert out[at:].splitlines()[1:5] == [f"  {line}" for line in REFUSED + IGNORED], out
    where.write_text('c.SchedApp.idle_window_s = 60\n', encoding="utf-8")
    code, out, err = _doctor()
    assert code == doctor.EXIT_OK, (out, err)
    assert f"config: {where}: every c.SchedApp setting reads\n" in out


def test_newuser29_n4_doctor_checks_the_service_config_for_a_hub_store(folders: SimpleNamespace) -> None:
    """``--db`` (a hub's store): the service's ``jupyter_sched_serve_config.py``, as ``HubSchedApp`` reads it."""
    url = sqlite_url(folders.tmp / "hub.sqlite")
    Store(url).close()
    where = folders.conf / "jupyter_sched_serve_config.py"
    where.write_text('c.SchedApp.job_memory_mib = -5\nc.HubSchedApp.hub_poll_intervl_s = 5\n', encoding="utf-8")
    code, out, err = _doctor("--db", url)
    assert code == doctor.EXIT_FOUND, (out, err)
    assert out.splitlines()[-3:] == [
        f"config: {where}: 2 settings to fix (the server refuses to start with a bad one, and ignores a name that "
        "is no setting)",
        "  c.SchedApp.job_memory_mib = -5: must be >= 0 MiB. Fix: set a number >= 0 (MiB)",
        "  c.HubSchedApp.hub_poll_intervl_s: no such setting (did you mean hub_poll_interval_s?); it would be "
        "ignored. Fix: rename it to c.HubSchedApp.hub_poll_interval_s"]
    assert config_problems(PyFileConfigLoader(where.name, path=str(folders.conf)).load_config(),
                           HubSchedApp).refused == [out.splitlines()[-2].strip()]


def refused_start(folders: SimpleNamespace) -> subprocess.CompletedProcess[str]:
    """A real ``jupyter_server`` start with :data:`BAD` in the user's config folder (it refuses to start)."""
    (folders.conf / "jupyter_server_config.py").write_text(
        f'c.SchedApp.db_url = "sqlite:///{folders.tmp / "mine.sqlite"}"\n{BAD}', encoding="utf-8")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(folders.tmp / "runtime")}
    return subprocess.run([sys.executable, "-m", "jupyter_server", "--no-browser", "--port=0",
                           f"--ServerApp.root_dir={folders.tmp}", "--IdentityProvider.token=t", "--allow-root"],
                          env=env, capture_output=True, text=True, timeout=120)


def test_newuser29_n4_a_real_start_refuses_with_all_four(folders: SimpleNamespace) -> None:
    done = refused_start(folders)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "jupyter_sched: bad configuration, not starting: 4 settings to fix:" in done.stderr, done.stderr[-3000:]
    for line in REFUSED + IGNORED:
        assert f"  {line}\n" in done.stderr, (line, done.stderr[-3000:])  # one line each
    assert "Traceback" not in done.stderr
    assert not (folders.tmp / "mine.sqlite").exists()  # refused before the store
