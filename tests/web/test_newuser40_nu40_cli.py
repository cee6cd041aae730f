"""newuser40 n4 as a person reads it: ``jupyter-sched definitions create/list/show`` against a real server."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import IVAN_TOKEN

CLI = shutil.which("jupyter-sched", path=str(Path(sys.executable).parent)) or "jupyter-sched"


@pytest.fixture
def cli(sched_app: Any, http_server: Any, http_server_port: Any, jp_base_url: str, tmp_path: Path) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}",
                "JUPYTER_SCHED_TOKEN": IVAN_TOKEN})

    async def run(*args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(CLI, *args, env=env, cwd=str(tmp_path),
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()

    return run


def _last_sunday(line: str) -> bool:
    """Whether a firing's clock on ``line`` (``… Mar 28 03:00 CEST …``, a date said unless it is today) is on the
    month's last Sunday: every firing of these schedules is a Sunday, so its day is within the month's last 7."""
    found = re.search(r"\b(Mar|Oct) (\d+)(?: \d{4})? \d\d:\d\d", line)
    return found is not None and int(found.group(2)) > 24


async def test_newuser40_n4_definitions_say_a_firing_daylight_saving_moved(cli: Any, tmp_path: Path) -> None:
    """Sundays of March at 02:30 in Europe/Berlin: the last one (the spring-forward day, whatever the year) fires at
    03:00 CEST, and on October's last Sunday 02:30 happens twice. ``show`` lists the next five firings (the last
    Sunday among them, whenever the test runs), ``create`` and ``list`` the next one: each such firing is followed by
    why, every other firing by nothing."""
    (tmp_path / "nightly.py").write_text("print('ok')\n")
    for name, cron, note in (("spring", "30 2 * 3 0", " (02:30 does not exist that day: clocks go forward)"),
                             ("autumn", "30 2 * 10 0", " (02:30 happens twice that day; it runs once, at the first)")):
        code, out, err = await cli("definitions", "create", "nightly.py", "--name", name, "--cron", cron,
                                   "--tz", "Europe/Berlin", "--gpus", "0")
        assert code == 0, err
        assert out.startswith("defined ") and out.rstrip("\n").endswith(note) == _last_sunday(out), out
        code, out, err = await cli("definitions", "show", name)
        assert code == 0, err
        nexts = [line for line in out.splitlines() if line.startswith("  next  ")]
        assert any(_last_sunday(line) for line in nexts), out
        for line in nexts:
            assert line.endswith(note) == _last_sunday(line) and line.endswith(")") == _last_sunday(line), out
            assert not _last_sunday(line) or (" 03:00 CEST" if name == "spring" else " 02:30 CEST") in line, line
    code, out, err = await cli("definitions", "list")
    assert code == 0, err
    for line in out.splitlines():
        assert ("exist that day" in line or "happens twice" in line) == _last_sunday(line), out
