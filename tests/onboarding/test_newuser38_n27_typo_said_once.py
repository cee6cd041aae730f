"""newuser38 n27: a typo'd setting (``c.SchedApp.idle_windw_s = 60``) was said three times at start: traitlets' own
``Config option `idle_windw_s` not recognized by `SchedApp`. Did you mean …`` twice (the config is loaded twice) and
the project's line with the fix. Now it is said once, the project's line: in the refusal's list when the start is
refused, as a warning when the typo is the only fault (the server starts: traitlets ignores the name).

Real parts: a real ``jupyter_server`` start, the extension's app class and its config loading."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from jupyter_sched.extension.app import SchedApp
from jupyter_sched.extension.startup_checks import check_config
from tests.onboarding.test_newuser29_n4_config_check import IGNORED, _config, config_folders, refused_start

TRAITLETS = "not recognized by"


@pytest.fixture
def folders(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    return config_folders(tmp_path, monkeypatch)  # type: ignore[arg-type]


def test_newuser38_n27_a_refused_start_says_the_typo_once(folders: SimpleNamespace) -> None:
    done = refused_start(folders)
    assert done.returncode == 1, done.stderr[-3000:]
    assert TRAITLETS not in done.stderr, done.stderr[-3000:]
    assert done.stderr.count("idle_windw_s") == 1, done.stderr[-3000:]
    assert f"  {IGNORED[0]}\n" in done.stderr, done.stderr[-3000:]


def test_newuser38_n27_a_typo_alone_is_one_warning_with_the_fix_and_the_start_goes_on(
        folders: SimpleNamespace, caplog: pytest.LogCaptureFixture) -> None:
    config = _config("c.SchedApp.idle_windw_s = 60\nc.SchedApp.idle_window_s = 120\n", folders.conf)
    logger = logging.getLogger("test_newuser38_n27")
    with caplog.at_level(logging.WARNING):
        app = SchedApp(config=config, log=logger)
        app.update_config(config)  # loaded again, as the server's link does
        assert app.idle_window_s == 120  # the known setting is taken
        check_config(SimpleNamespace(config=config, log=logger, config_file_name="jupyter_server_config"), app)
    said = [r.getMessage() for r in caplog.records]
    assert not [m for m in said if TRAITLETS in m], said
    assert said == [f"jupyter_sched: {IGNORED[0]}"], said
    assert "idle_windw_s" in config.SchedApp  # the caller's config is left as it was
