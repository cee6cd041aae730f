"""Fixtures shared by every test package: one real PostgreSQL server per session; no job left running.

PostgreSQL: a throw-away server started from Debian's binaries on loopback (``tests/pg.py``),
a fresh database per test. Tests that need it skip with a clear message only when the
binaries are absent.

Job wrappers (``tests/leftovers.py``): after each test, a job this process started in that test's own
``tmp_path`` and still running is ended and the test named at the end of the session (its fixture
should end its jobs: :func:`tests.leftovers.end_jobs`); when the session ends, so is every job still
running in the session's temporary folder.

Run times (``tests/run_times.py``): each test file's seconds, worker and span are written as JSON where
``$JUPYTER_SCHED_FILE_SECONDS`` names (scripts/test-all: beside its stage logs).

Host registry: the servers of a test session (in process, and the ones it starts with its environment)
register in a folder of the session's own (``$JUPYTER_SCHED_HOST_REGISTRY``,
:mod:`jupyter_sched.extension.host_schedulers`), never in the host's ``/tmp`` where real schedulers meet.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The CLI and the magics show times in the caller's zone (TZ, else /etc/localtime: newuser26 n14); the tests pin
# "… UTC" words, so they read the clock in UTC whatever the machine's zone (a test of a zone sets TZ itself).
os.environ["TZ"] = "UTC"
time.tzset()

# Property tests (hypothesis) draw the same examples on every run unless a hunt asks for more
# (JS_PROPERTY_EXAMPLES=N, with pytest --hypothesis-seed=S): CI's answer does not depend on the run. A
# random draw found session 40's memo fault only on a later, unrelated commit, and its shrinking took 190 s
# of CI's 30 minutes (session 41). What a hunt finds is kept as a named example.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("jupyter_sched", derandomize="JS_PROPERTY_EXAMPLES" not in os.environ)
_hypothesis_settings.load_profile("jupyter_sched")
if str(ROOT) not in sys.path:  # make ``tests.pg`` importable however pytest was started
    sys.path.insert(0, str(ROOT))

from jupyter_sched.extension.host_schedulers import ENV_REGISTRY  # noqa: E402
from tests import engine_threads, leftovers  # noqa: E402
from tests.pg import PostgresServer, skip_reason  # noqa: E402
from tests.run_times import FileSeconds  # noqa: E402

_db_counter = itertools.count(1)
_LEFT = pytest.StashKey[list[str]]()
_TMP = pytest.StashKey[Path]()
_ENGINES = pytest.StashKey[frozenset[Any]]()
_file_seconds: FileSeconds | None = None
"""This run's per-file seconds: on the xdist controller or in a serial run only (its reports cover every file)."""


def pytest_configure(config: pytest.Config) -> None:
    global _file_seconds
    if not hasattr(config, "workerinput"):
        _file_seconds = FileSeconds()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _file_seconds is not None:
        _file_seconds.add(report)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """Note the engine threads running before the test's set-up (:mod:`tests.engine_threads`)."""
    item.stash[_ENGINES] = engine_threads.note_before()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Any:
    """The engine threads a module/session fixture starts are its own while it lives (:mod:`tests.engine_threads`)."""
    before = engine_threads.engine_threads()
    try:
        return (yield)
    finally:
        engine_threads.fixture_set_up(id(fixturedef), fixturedef.argname, fixturedef.scope, before)


def pytest_fixture_post_finalizer(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> None:
    engine_threads.fixture_finalized(id(fixturedef))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Note the test's own ``tmp_path`` (when it has one) for the check after its teardown."""
    tmp = getattr(item, "funcargs", {}).get("tmp_path")
    if isinstance(tmp, Path):
        item.stash[_TMP] = tmp
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """After the test's fixtures are torn down: end the job wrappers still running in its ``tmp_path``; fail the test
    that left an engine ticking (:mod:`tests.engine_threads`)."""
    result = yield
    engines = item.stash.get(_ENGINES, None)
    engines_left = engine_threads.left_by(engines) if engines is not None else None
    tmp = item.stash.get(_TMP, None)
    left = leftovers.wrappers_under(tmp) if tmp is not None else []
    if left:
        ended = leftovers.kill_wrappers(left)
        item.config.stash.setdefault(_LEFT, []).append(f"{item.nodeid}: {', '.join(d.name for d in ended)}")
    if engines_left:
        pytest.fail(engines_left, pytrace=False)
    return result


def pytest_sessionfinish(session: pytest.Session) -> None:
    """End the job wrappers still running in the session's temporary folder (module/session fixtures); write
    the per-file seconds where ``$JUPYTER_SCHED_FILE_SECONDS`` asks."""
    if _file_seconds is not None:
        _file_seconds.write()
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    try:
        base = factory.getbasetemp()
    except (OSError, ValueError):
        return
    left = leftovers.wrappers_under(base, recursive=True)
    if left:
        ended = leftovers.kill_wrappers(left)
        session.config.stash.setdefault(_LEFT, []).append(
            f"(at the end of the session) {', '.join(str(d.relative_to(base)) for d in ended)}")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Name the tests whose jobs were still running after their teardown (ended by the net above)."""
    for line in config.stash.get(_LEFT, []):
        terminalreporter.write_line(f"job left running after its test, ended: {line}", yellow=True)


@pytest.fixture(scope="session", autouse=True)
def host_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's own host-wide scheduler registry (module docstring); the variable as it was after."""
    before = os.environ.get(ENV_REGISTRY)
    folder = tmp_path_factory.mktemp("host-registry")
    os.environ[ENV_REGISTRY] = str(folder)
    try:
        yield folder
    finally:
        if before is None:
            os.environ.pop(ENV_REGISTRY, None)
        else:
            os.environ[ENV_REGISTRY] = before


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole session (skips when PostgreSQL is not installed)."""
    reason = skip_reason()
    if reason:
        pytest.skip(f"PostgreSQL not available: {reason}")
    server = PostgresServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> str:
    """URL of a fresh, empty PostgreSQL database."""
    return pg_server.create_database(f"db_{next(_db_counter)}")
