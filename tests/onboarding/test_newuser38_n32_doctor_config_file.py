"""newuser38 n32: a hub service started with ``jupyter-sched serve --config=FILE`` — ``doctor`` on its store printed no
``config:`` line at all (no ``jupyter_sched_serve_config.py`` in the Jupyter config path), so its settings went
unchecked unsaid, and ``doctor`` had no ``--config FILE`` to point at it. Now both: the line says nothing was checked
and how, and ``--config FILE`` checks that file. Real parts: the doctor's main on a real SQLite store, config files
on disk, the app classes' own check."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from jupyter_sched.cli import doctor
from jupyter_sched.store import Store, sqlite_url
from tests.onboarding.test_newuser29_n4_config_check import _doctor, config_folders


@pytest.fixture
def folders(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    return config_folders(tmp_path, monkeypatch)  # type: ignore[arg-type]


def test_newuser38_n32_doctor_says_no_service_config_was_found_and_checks_the_one_given(folders: SimpleNamespace) -> None:
    url = sqlite_url(folders.tmp / "hub.sqlite")
    Store(url).close()
    code, out, err = _doctor("--db", url)
    said = [line for line in out.splitlines() if line.startswith("config:")]
    assert said == ["config: no jupyter_sched_serve_config.py in the Jupyter config path (jupyter --paths): nothing "
                    "checked — a service started with --config=FILE: pass it here, jupyter-sched doctor --config "
                    "FILE"], out
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
