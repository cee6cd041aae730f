"""s42-speed: tests/rewrite_cache.py writes the rewritten-assert cache pytest reads when it may not write one.

Session 41's CI stage began its first test 93 s in: under ``PYTHONDONTWRITEBYTECODE`` each xdist worker rewrote every
test module's asserts anew while it collected. The cache written beforehand must be the one pytest itself takes
(its own ``_read_pyc`` accepts it) and carry pytest's assert introspection, not plain asserts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc

from tests.rewrite_cache import collected_modules, main

MODULE = """\
def test_sum():
    total = 1 + 1
    assert total == 3
"""


def test_s42_speed_the_cache_is_what_pytest_reads_and_says_the_values_of_a_failed_assert(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    module = tmp_path / "sub" / "test_one.py"
    module.write_text(MODULE)
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "helper.py").write_text("")  # not a test module: pytest does not rewrite it
    (tmp_path / "sub" / "test_broken.py").write_text("def test_(:\n")  # the run reports it; the step goes on
    assert collected_modules([tmp_path]) == sorted(
        [tmp_path / "conftest.py", tmp_path / "sub" / "test_broken.py", module])

    assert main([str(tmp_path)]) == 0

    pyc = module.parent / "__pycache__" / ("test_one" + PYC_TAIL)
    code = _read_pyc(module, pyc)
    assert code is not None, "pytest does not take the cache written"
    assert (tmp_path / "__pycache__" / ("conftest" + PYC_TAIL)).exists()
    assert not (tmp_path / "sub" / "__pycache__" / ("test_broken" + PYC_TAIL)).exists()
    assert not list(tmp_path.rglob("*.pyc.*")), "a partly written cache file was left"
    space: dict[str, object] = {}
    exec(code, space)
    try:
        space["test_sum"]()  # type: ignore[operator]
    except AssertionError as failed:
        said = str(failed)
    else:
        raise AssertionError("the cached test did not fail")
    assert "assert 2 == 3" in said, said  # pytest's introspection: a plain assert says nothing

    # a changed source is not served from the cache: pytest's own check of the source's hash
    module.write_text(MODULE.replace("== 3", "== 4"))
    assert _read_pyc(module, pyc) is None


def test_s42_speed_a_run_without_bytecode_writing_collects_from_the_cache(tmp_path: Path) -> None:
    """End to end: a pytest under PYTHONDONTWRITEBYTECODE finds the cached rewrite (its --debug trace says so)."""
    module = tmp_path / "test_cached.py"
    module.write_text(MODULE)
    assert main([str(tmp_path)]) == 0
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("JUPYTER_SCHED_FILE_SECONDS", None)
    debug = tmp_path / "debug.log"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           f"--debug={debug}", "--rootdir", str(tmp_path), "-c", os.devnull, str(module)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "assert 2 == 3" in done.stdout, done.stdout + done.stderr
    assert f"found cached rewritten pyc for {module}" in debug.read_text(), debug.read_text()[-3000:]
