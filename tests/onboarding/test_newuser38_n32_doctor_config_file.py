"""newuser38 n32: a hub service started with ``jupyter-sched serve --config=FILE`` — ``doctor`` on its store printed no
``config:`` line at all (no ``jupyter_sched_serve_config.py`` in the Jupyter config path), so its settings went
unchecked unsaid, and ``doctor`` had no ``--config FILE`` to point at it. Now both: the line says nothing was checked
and how, and ``--config FILE`` checks that file. Said only of a hub service's store (session 38's run A: it was said of
every named store, a personal lab's SQLite file too, and failed newuser13 n18 and the doctor --json check): one a
service listened on (its listening span), or one a ``jupyter-sched serve`` on this host registered with. Real parts:
the doctor's main on a real SQLite store, config files on disk, the app classes' own check, the host's scheduler
registry in a folder of this test with a live process registered in it as a service."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from jupyter_sched.cli import doctor
from jupyter_sched.cli.doctor_args import EXIT_OK
from jupyter_sched.extension.host_schedulers import ENV_REGISTRY, SERVE, HostScheduler, register, store_digest
from jupyter_sched.store import Store, sqlite_url
from tests.onboarding.test_newuser29_n4_config_check import _doctor, config_folders

NO_CONFIG = ("config: no jupyter_sched_serve_config.py in the Jupyter config path (jupyter --paths): nothing checked — a "
             "service started with --config=FILE: pass it here, jupyter-sched doctor --config FILE")


def _hub_store(url: str) -> None:
    """A hub service's store: the listening span each ``jupyter-sched serve`` process writes once it listens."""
    store = Store(url)
    try:
        now = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
        with store.transaction() as tx:
            tx.open_listening_span("hub-host", 8081, 4242, now, now)
    finally:
        store.close()


@pytest.fixture
def folders(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    return config_folders(tmp_path, monkeypatch)  # type: ignore[arg-type]


def test_newuser38_n32_doctor_says_no_service_config_was_found_and_checks_the_one_given(folders: SimpleNamespace) -> None:
    url = sqlite_url(folders.tmp / "hub.sqlite")
    _hub_store(url)
    code, out, err = _doctor("--db", url)
    said = [line for line in out.splitlines() if line.startswith("config:")]
    assert said == [NO_CONFIG], out
    config = [c for c in json.loads(_doctor("--db", url, "--json")[1])["checks"] if c["name"] == "config"]
    assert [(c["status"], c["fix"]) for c in config] == [
        ("warn", "a service started with --config=FILE: pass it here, jupyter-sched doctor --config FILE")], config
    elsewhere = folders.tmp / "hub" / "my_serve_config.py"
    elsewhere.parent.mkdir()
    elsewhere.write_text('c.SchedApp.time_limits = "8h"\n', encoding="utf-8")
    code, out, err = _doctor("--db", url, "--config", str(elsewhere))
    assert code == doctor.EXIT_FOUND, (out, err)
    at = out.index(f"config: {elsewhere}: 1 setting to fix")
    assert out[at:].splitlines()[1].strip().startswith("c.SchedApp.time_limits: expected a list of rules"), out
    missing = folders.tmp / "nope.py"
    code, out, err = _doctor("--db", url, "--config", str(missing))
    assert code == doctor.EXIT_FOUND and f"config: --config {missing}: " in out, (out, err)
    assert "Traceback" not in out + err


def test_newuser38_n32_a_personal_store_named_says_no_service_config_missing(folders: SimpleNamespace,
                                                                             tmp_path: object,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A personal lab's SQLite file named with ``--db`` on a host with no ``jupyter-sched serve``: no service config
    is there to be found, so none is said missing (run A: newuser13 n18's five lines, doctor --json's config 'warn');
    a service registered on this host with that store makes it a hub's, and the line is said."""
    folder = folders.tmp / "registry"
    folder.mkdir(mode=0o1777)
    monkeypatch.setenv(ENV_REGISTRY, str(folder))
    url = sqlite_url(folders.tmp / "mine.sqlite")
    Store(url).close()
    code, out, err = _doctor("--db", url)
    assert code == EXIT_OK and "store: " in out and not [line for line in out.splitlines()
                                                                 if line.startswith("config:")], (out, err)
    report = json.loads(_doctor("--db", url, "--json")[1])
    assert "config" not in [c["name"] for c in report["checks"]], report["checks"]  # the host's own checks may warn
    proc = subprocess.Popen(["sleep", "120"])
    entry = register(HostScheduler(user="root", uid=os.getuid(), pid=proc.pid, url="http://127.0.0.1:18931/services/s/",
                                   gpus=2, simulated=True, kind=SERVE, store=store_digest(url)), folder=folder)
    try:
        assert entry.path is not None
        code, out, err = _doctor("--db", url)
        assert [line for line in out.splitlines() if line.startswith("config:")] == [NO_CONFIG], (out, err)
    finally:
        entry.withdraw()
        proc.kill()
        proc.wait()
